"""Compile-time evaluation: `qd.static(...)` arguments, annotations, f-strings and keyword values are Python
expressions evaluated while the kernel compiles, seeing the kernel's compile-time names.

Names read from closures and globals are recorded as captures (fastcache re-checks them), and every call made is
recorded as a `StaticCall` (the purity check). A runtime vector's shape is readable (`range(v.n)`), nothing else
of a runtime value is.
"""

from __future__ import annotations

import ast
from typing import Any

from quadrants.errors import QuadrantsCompilationError, QuadrantsTypeError
from quadrants.frontend.builder import FrontendBuilder
from quadrants.frontend.func import funcs_run_as_python
from quadrants.frontend.records import Capture, StaticCall
from quadrants.frontend.refs import read
from quadrants.frontend.scope import MISSING, Alias, Fixed, MatVar, Var, VarSeq
from quadrants.frontend.values import Matrix, is_runtime


def static_eval(fb: FrontendBuilder, node: ast.expr, record: bool = True) -> Any:
    """Evaluate `node` as Python, at compile time, seeing the kernel's compile-time names."""
    namespace = dict(fb.frame.globals)
    namespace.update(fb.frame.closure)
    chained = _attribute_chains(node) if record else {}
    identity = _identity_operands(node)
    for n in ast.walk(node):
        if not isinstance(n, ast.Name):
            continue
        _, binding = fb.frame.scope.find(n.id)
        if binding is MISSING:
            if record and (n.id in fb.frame.closure or n.id in fb.frame.globals):
                attr = chained.get(id(n))
                if attr is None:
                    fb.lookup(n.id, n, static=True)  # records the capture
                else:  # `cfg.flag`: the value read is judged, not the object it is read from
                    _record_static_chain(fb, n, attr)
            continue
        if isinstance(binding, VarSeq):  # `len(lst)`, `for x in qd.static(lst)`: the items' current values
            namespace[n.id] = read(fb, binding)
            continue
        if isinstance(binding, (Var, MatVar, Fixed, Alias)) or is_runtime(binding):
            shape = _static_shape(binding)
            if shape is None and id(n) in identity:  # `t is not None`: a runtime argument is present
                namespace[n.id] = _Present(n.id)
                continue
            if shape is None:
                raise fb.error(
                    n, f"qd.static() arguments must be compile-time constants, but {n.id!r} is a runtime value", QuadrantsTypeError
                )
            namespace[n.id] = _ShapeOnly(n.id, shape)  # a runtime vector's shape is known: `range(v.n)`
            continue
        namespace[n.id] = binding
    for call in ast.walk(node) if record else ():  # a probe (is_static_call) records no call
        if isinstance(call, ast.Call):
            try:
                callee = eval(compile(ast.Expression(body=call.func), "<qd>", "eval"), namespace)  # noqa: S307
            except Exception:  # noqa: BLE001 - the evaluation below reports it
                callee = None
            fb.static_calls.append(StaticCall(callee, fb.loc(call)))
    try:
        code = compile(ast.Expression(body=node), fb.frame.source.filename, "eval")
        with funcs_run_as_python():
            return eval(code, namespace)  # noqa: S307 - evaluating the user's own kernel code
    except QuadrantsCompilationError:
        raise
    except Exception as e:
        raise fb.error(node, f"{type(e).__name__}: {e}", QuadrantsCompilationError) from None


def attribute_chain(node: ast.expr) -> tuple[ast.expr, tuple[str, ...]]:
    """`cfg.a.b` -> (the node `cfg`, ("a", "b"))."""
    chain: list[str] = []
    while isinstance(node, ast.Attribute):
        chain.append(node.attr)
        node = node.value
    return node, tuple(reversed(chain))


def _attribute_chains(node: ast.expr) -> dict[int, ast.Attribute]:
    """For each name that starts an attribute chain (`cfg.a.b`), the longest chain it starts (by the name's id)."""
    out: dict[int, ast.Attribute] = {}
    inner: set[int] = set()
    for n in ast.walk(node):
        if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Attribute):
            inner.add(id(n.value))
    for n in ast.walk(node):
        if isinstance(n, ast.Attribute) and id(n) not in inner:
            root, _ = attribute_chain(n)
            if isinstance(root, ast.Name):
                out[id(root)] = n
    return out


def _identity_operands(node: ast.expr) -> set[int]:
    """The names compared by identity in `node` (`t is None`, `t is not None`): a runtime value there is only
    known to exist, which such a test needs (Quadrants lets an absent `qd.Tensor` argument be None)."""
    out: set[int] = set()
    for n in ast.walk(node):
        if isinstance(n, ast.Compare) and all(isinstance(op, (ast.Is, ast.IsNot)) for op in n.ops):
            out.update(id(x) for x in (n.left, *n.comparators) if isinstance(x, ast.Name))
    return out


def _record_static_chain(fb: FrontendBuilder, name: ast.Name, attr: ast.Attribute) -> None:
    fr = fb.frame
    where = "closure" if name.id in fr.closure else "global"
    value: Any = fr.closure[name.id] if where == "closure" else fr.globals[name.id]
    _, chain = attribute_chain(attr)
    try:
        for part in chain:
            value = getattr(value, part)
    except AttributeError:
        fb.lookup(name.id, name, static=True)  # the evaluation reports the missing attribute
        return
    fb.captures.append(Capture(name.id, value, where, fr.source.fn, fb.loc(attr), True, chain))


def is_static_call(fb: FrontendBuilder, node: ast.expr) -> bool:
    """Whether `node` is a call of `qd.static(...)`."""
    if not isinstance(node, ast.Call):
        return False
    try:
        fn = static_eval(fb, node.func, record=False)
    except Exception:  # noqa: BLE001 - not a compile-time callee: not qd.static
        return False
    return getattr(fn, "__qd_intrinsic__", None) == "static"


def _static_shape(binding: Any) -> tuple[int, ...] | None:
    """The shape of a runtime vector/matrix binding (known at compile time), else None."""
    if isinstance(binding, MatVar):
        return binding.shape
    value = binding.value if isinstance(binding, Fixed) else binding
    return value.shape if isinstance(value, Matrix) else None


class _Present:
    """A runtime value compared by identity inside qd.static() (`t is not None`): it exists, nothing else of it
    is known at compile time."""

    __slots__ = ("_name",)

    def __init__(self, name: str) -> None:
        self._name = name

    def _refuse(self, *_: Any) -> Any:
        raise TypeError(f"qd.static() arguments must be compile-time constants, but {self._name!r} is a runtime value (only "
                        "`is None` / `is not None` can test it)")  # fmt: skip

    __getitem__ = __iter__ = __bool__ = __add__ = __mul__ = __eq__ = __len__ = _refuse  # type: ignore[assignment]

    def __getattr__(self, attr: str) -> Any:
        return self._refuse()


class _ShapeOnly:
    """A runtime vector/matrix inside qd.static(): its shape (`n`, `m`, `shape`) can be read, nothing else."""

    def __init__(self, name: str, shape: tuple[int, ...]) -> None:
        self._name, self.shape = name, shape
        self.n = shape[0]
        self.m = shape[1] if len(shape) == 2 else 1

    def get_shape(self) -> tuple[int, ...]:
        return self.shape

    def __len__(self) -> int:
        return self.n

    def _refuse(self, *_: Any) -> Any:
        raise TypeError(f"qd.static() arguments must be compile-time constants, but {self._name!r} is a runtime value "
                        f"(only its shape: .n, .m, .shape)")  # fmt: skip

    __getitem__ = __iter__ = __bool__ = __add__ = __mul__ = __eq__ = _refuse  # type: ignore[assignment]

    def __getattr__(self, attr: str) -> Any:
        return self._refuse()
