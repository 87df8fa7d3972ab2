"""Whether a kernel may read a `.grad`: its own source, or that of a `qd.func` it calls, names one.

A primal kernel passes its ndarray arguments' gradients as hidden arguments only when it may read them
(lang/kernel.py `_passes_grads`): the others keep the signature a manifest records. Reading the kernel's own
text is not enough: Genesis' `kernel_begin_backward_substep` reads `qpos.grad` in a func of its module. This
looks through the calls of the text, not its AST (the check runs at a kernel's first call, also on a fastcache
hit, which parses nothing): each `name(` or `a.b.c(` whose name the function's globals or closure bind (or, for
`self.m(`, its class) to a `qd.func` is read the same way, once. A call it cannot resolve (a func passed in as an
argument, a method of another object) is not followed: the kernel then finds out when it compiles, and compiles
again with the gradients (lang/kernel.py).
"""

from __future__ import annotations

import re
from typing import Any

from quadrants.cache.source import source_text
from quadrants.frontend.func import Func
from quadrants.frontend.scope import closure_of

_CALL = re.compile(r"([A-Za-z_]\w*(?:\s*\.\s*[A-Za-z_]\w*)*)\s*\(")


def reads_grad(fn: Any) -> bool:
    """True when `fn`'s source or a func it reaches names `.grad`, or when a source cannot be read (safe)."""
    return _reads(fn, set())


def _reads(fn: Any, seen: set[int]) -> bool:
    if id(fn) in seen:
        return False
    seen.add(id(fn))
    text = source_text(fn)
    if text is None or ".grad" in text:
        return True
    scope = {**getattr(fn, "__globals__", {}), **closure_of(fn)}
    for m in _CALL.finditer(text):
        target = _resolve(m.group(1).replace(" ", ""), scope, fn)
        if isinstance(target, Func) and _reads(target.fn, seen):
            return True
    return False


def _resolve(dotted: str, scope: dict[str, Any], fn: Any) -> Any:
    head, *rest = dotted.split(".")
    if head == "self" and rest:  # a method of the kernel's or func's own class
        obj: Any = _owner_class(fn)
    else:
        obj = scope.get(head)
    for part in rest:
        if obj is None:
            return None
        obj = _static_attribute(obj, part)
    return obj


def _owner_class(fn: Any) -> Any:
    """The class a method was defined in, from its qualified name (`Solver.step` -> the module's `Solver`)."""
    parts = getattr(fn, "__qualname__", "").split(".")
    if len(parts) < 2 or "<locals>" in parts:
        return None
    obj: Any = getattr(fn, "__globals__", {}).get(parts[0])
    for part in parts[1:-1]:
        obj = _static_attribute(obj, part)
    return obj


def _static_attribute(obj: Any, name: str) -> Any:
    """`obj.name` as stored (a class's dict along its MRO, a module's attribute), running no descriptor."""
    if isinstance(obj, type):
        for klass in obj.__mro__:
            if name in vars(klass):
                return vars(klass)[name]
        return None
    return getattr(obj, "__dict__", {}).get(name)
