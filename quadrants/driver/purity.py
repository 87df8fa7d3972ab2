"""The fastcache purity check: judge every value a fastcache kernel (and the funcs it reaches) read from outside.

Rules (docs/fastcache.md describes them for users), and how each read stays correct across processes:

| what is read                                         | verdict                        | how it stays correct      |
|------------------------------------------------------|--------------------------------|---------------------------|
| a quadrants attribute (`qd.math.pi`, `qd.f32`)       | allowed                        | the version is in the key |
| a module attribute of math / numpy (`math.pi`)       | allowed                        | recorded and re-checked   |
| an enum member (`Mode.FAST`)                         | allowed                        | recorded and re-checked   |
| funcs, kernels, classes, types (struct types), modules | allowed (code, not data)     | recorded and re-checked   |
| an UPPERCASE constant (also `obj.NAME` of an object) | warning (`purity` tag)         | recorded and re-checked   |
| any global inside `qd.static(...)` (`cfg.flag` too)  | warning (transition rule)      | recorded and re-checked   |
| any other constant (number, tuple, np.float32, ...)  | QuadrantsCompilationError      | -                         |
| an ndarray (only passed on to a func's ndarray param)| allowed (indexing it is refused)| type and shape re-checked|
| a field, any other object                            | QuadrantsCompilationError      | -                         |
| a Python function called at compile time             | fastcache steps aside (warning)| its result cannot be checked |
| a class attribute through a struct (`self.K`, `p.G`) | allowed (like a template value)| recorded and re-checked   |

Funcs and kernels are fingerprinted as code: name, text, default values and resolved annotations, so a func
that a factory chose, or whose default or annotation type changed, is a miss.

"Recorded and re-checked": the fastcache entry stores a fingerprint of the value and a lookup recomputes it in
the new process; a different value is a miss and a recompile. So a global tuple, a global np.float32 or an
environment variable read by a helper can never serve a stale result (real Quadrants 1.3.3 does serve one).
"""

from __future__ import annotations

import builtins
import enum
import math
import numbers
import types
import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from quadrants.cache.fingerprint import CaptureRecord, fingerprint
from quadrants.errors import QuadrantsCompilationError, SourceLoc
from quadrants.frontend.records import Capture, FrontendResult
from quadrants.types.compound import MatrixType
from quadrants.types.dtypes import PrimitiveType
from quadrants.types.struct import StructType

ALLOWED_MODULES = ("math", "numpy", "cmath")


@dataclass
class PurityReport:
    errors: list[tuple[str, SourceLoc | None]] = field(default_factory=list)
    warnings: list[tuple[str, SourceLoc | None]] = field(default_factory=list)
    fallback: str | None = None  # why fastcache must step aside for this kernel
    records: list[CaptureRecord] = field(default_factory=list)


def _is_code(v: Any) -> bool:
    return (
        isinstance(
            v,
            (type, types.FunctionType, types.BuiltinFunctionType, types.ModuleType, PrimitiveType, MatrixType,
             StructType),  # a struct type is a type (its members and methods are fingerprinted), not data
        )  # fmt: skip
        or getattr(v, "__qd_kernel__", False)
        or type(v).__name__ in ("Func", "BoundFunc")
        or hasattr(v, "__qd_intrinsic__")
        or hasattr(type(v), "__qd_fingerprint__")  # the library's objects that are code (qd.simt.Tile16x16)
    )


def _is_data(v: Any) -> bool:
    if v is None or isinstance(v, (bool, numbers.Number, str, bytes, np.generic)) or hasattr(v, "__qd_matrix__"):
        return True
    return isinstance(v, (tuple, list)) and all(_is_data(x) for x in v)


def _root_module(c: Capture) -> str | None:
    owner_globals = getattr(c.owner, "__globals__", {})
    root = owner_globals.get(c.name) if c.where == "global" else None
    return root.__name__ if isinstance(root, types.ModuleType) else None


def pure_callee(fn: Any) -> bool:
    """Compile-time calls whose result depends only on their arguments."""
    if fn is None:
        return False
    if isinstance(fn, type) and fn.__module__ in ("builtins", "enum"):
        return True  # int(), tuple(), range(), ... and enum lookups
    if getattr(fn, "__self__", None) is builtins or getattr(fn, "__module__", None) == "builtins":
        return fn not in (builtins.open, builtins.input, builtins.print, builtins.eval, builtins.exec)
    module = getattr(fn, "__module__", None) or ""
    if module.split(".")[0] in ("quadrants", "math", "cmath"):
        return True
    return getattr(fn, "__qd_intrinsic__", None) is not None or isinstance(fn, (PrimitiveType, MatrixType))


def check(fe: FrontendResult, kernel_fn: Any) -> PurityReport:
    report = PurityReport()
    seen: set[tuple[Any, ...]] = set()
    for c in fe.captures:
        owner = "kernel" if c.owner is kernel_fn else f"{c.owner.__module__}:{c.owner.__qualname__}"
        ident = (owner, c.where, c.name, c.chain)
        if ident in seen:
            continue
        seen.add(ident)
        judge(c, owner, report)
    for call in fe.static_calls:
        if not pure_callee(call.callee):
            name = getattr(call.callee, "__qualname__", repr(call.callee))
            report.fallback = report.fallback or (
                f"it calls the Python function {name!r} at compile time, whose result cannot be checked by the cache"
            )
            report.warnings.append((f"fastcache is off for this kernel: {report.fallback}", call.loc))
    return report


def judge(c: Capture, owner: str, report: PurityReport) -> None:
    """Apply the rules table to one outside read `c` of `owner` (the compiler's captures, or `qd audit`'s)."""
    v = c.value
    label = ".".join((c.name, *c.chain))
    if c.where == "class":  # `self.K` / `p.GAIN`: compiled in like a template value, re-checked by class name
        fp = fingerprint(v)
        if fp is None or "<locals>" in c.name:
            report.fallback = report.fallback or f"class attribute {label!r} cannot be re-checked"
        else:
            report.records.append(CaptureRecord(owner, c.where, c.name, c.chain, fp))
        return
    root_module = _root_module(c)
    if root_module is not None and root_module.split(".")[0] == "quadrants":
        return  # the compiler's own API: the version is in the key
    if (getattr(c.owner, "__module__", None) or "").split(".")[0] == "quadrants":
        return  # a read by the compiler's own library funcs (qd.simt.subgroup, qd.algorithms): the same
    if isinstance(v, types.ModuleType) and not c.chain:
        return  # a module: what is read from it is judged on its own
    fp = fingerprint(v)
    allowed = (
        (root_module is not None and root_module.split(".")[0] in ALLOWED_MODULES)
        or isinstance(v, enum.Enum)
        or _is_code(v)
        or getattr(v, "_desc", None) is not None  # Genesis' `array_class.PLACEHOLDER`: its data is never read
    )
    if allowed:
        if fp is None:
            report.fallback = report.fallback or f"{label!r} cannot be fingerprinted"
        else:
            report.records.append(CaptureRecord(owner, c.where, c.name, c.chain, fp))
        return
    upper = (c.chain[-1] if c.chain else c.name).isupper()
    if _is_data(v):
        if upper or c.static:
            why = "an UPPERCASE constant" if upper else "read inside qd.static()"
            report.warnings.append((
                f"fastcache kernel reads {label!r} from the enclosing scope ({why}); its value is checked at every "
                "lookup. Pass it as a parameter to make the kernel pure.",
                c.loc,
            ))  # fmt: skip
            if fp is None:
                report.fallback = report.fallback or f"{label!r} cannot be fingerprinted"
            else:
                report.records.append(CaptureRecord(owner, c.where, c.name, c.chain, fp))
            return
    kind = "a field" if hasattr(v, "__qd_field__") or hasattr(v, "__qd_struct_field__") else f"a {type(v).__name__}"
    # an UPPERCASE name is already what the usual hint suggests: say what it may hold instead
    hint = (f"an UPPERCASE name may hold only a constant (a number, string, tuple or qd.Vector), not {kind}" if upper
            else "or use an enum, or an UPPERCASE constant, which is checked at every lookup")
    report.errors.append((
        f"a fastcache kernel must receive its data through parameters, but it captures {label!r} ({kind}) from the "
        f"enclosing scope. Pass it as a parameter ({hint}).",
        c.loc,
    ))  # fmt: skip


__all__ = ["check", "judge", "pure_callee", "fingerprint", "PurityReport", "CaptureRecord", "math"]


_WARNED: dict[Any, Any] = {}  # the warnings registry of apply's warnings (shown once per line, as warn's are)


def apply(report: PurityReport) -> None:
    """Purity findings as Quadrants reports them: warnings are Python `UserWarning`s tagged `[PURE.VIOLATION]`
    (programs and tests catch them with `pytest.warns`), errors stop the compile."""
    for message, loc in report.warnings:
        if loc is None:
            warnings.warn(f"[PURE.VIOLATION] {message}", UserWarning, stacklevel=3)
            continue
        # from the kernel's line that reads the value (a stack level would name a line of quadrants' own)
        warnings.warn_explicit(f"[PURE.VIOLATION] {loc.short()}: {message}", UserWarning, loc.filename,
                               loc.lineno, registry=_WARNED)  # fmt: skip
    if report.errors:
        message, loc = report.errors[0]
        raise QuadrantsCompilationError(message, loc)
