"""Fingerprints of values a fastcache kernel read from outside, and the records that keep them.

Light on purpose: a fastcache lookup re-checks these records, so this module is on the start-up path.
"""

from __future__ import annotations

import enum
import numbers
import types
import weakref
from dataclasses import dataclass
from typing import Any

import numpy as np

from quadrants.cache.source import digest, qualified, resolve_name, source_text
from quadrants.types.compound import MatrixType
from quadrants.types.dtypes import PrimitiveType
from quadrants.types.struct import StructType


@dataclass(frozen=True)
class CaptureRecord:
    """A read to re-check on lookup: in `owner` ("kernel" or "module:qualname" of a func), the global or closure
    `name`, then the attributes `chain`, had value `fingerprint`."""

    owner: str
    where: str
    name: str
    chain: tuple[str, ...]
    fingerprint: str

    def to_json(self) -> dict[str, Any]:
        return {"owner": self.owner, "where": self.where, "name": self.name, "chain": list(self.chain),
                "fingerprint": self.fingerprint}  # fmt: skip

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> CaptureRecord:
        return cls(d["owner"], d["where"], d["name"], tuple(d["chain"]), d["fingerprint"])


def fingerprint(v: Any) -> str | None:
    """A text that changes when `v` does, for values that can be compared across processes (else None)."""
    if v is None or isinstance(v, (bool, str, bytes)):
        return f"{type(v).__name__}:{v!r}"
    if isinstance(v, enum.Enum):
        inner = fingerprint(v.value)
        return None if inner is None else f"enum:{qualified(type(v))}.{v.name}={inner}"
    if isinstance(v, np.generic):
        return f"np.{v.dtype}:{v!r}"
    if isinstance(v, numbers.Number):
        return f"{type(v).__name__}:{v!r}"
    if isinstance(v, (tuple, list)):
        parts = [fingerprint(x) for x in v]
        return None if any(p is None for p in parts) else f"{type(v).__name__}({','.join(parts)})"  # type: ignore[arg-type]
    if isinstance(v, (PrimitiveType, MatrixType)):
        return f"type:{v!r}"
    if isinstance(v, StructType):
        return struct_fingerprint(v)
    if isinstance(v, types.ModuleType):
        return f"module:{v.__name__}"
    own = getattr(type(v), "__qd_fingerprint__", None)  # a library object that says what it is (a tile proxy)
    if own is not None:
        return own(v)  # type: ignore[no-any-return]
    fn = getattr(v, "fn", None)  # a Func or Kernel
    target = fn if fn is not None and hasattr(fn, "__qualname__") else v
    if isinstance(target, types.FunctionType):
        return function_fingerprint(target, getattr(v, "def_locals", None))
    if isinstance(target, (type, types.BuiltinFunctionType)):
        return f"def:{qualified(target)}"
    if type(v).__module__.startswith("quadrants.types") and " at 0x" not in repr(v):
        return f"ann:{type(v).__name__}:{v!r}"  # an annotation value (NDArray[...], qd.template())
    spec = getattr(v, "_spec", None) if getattr(v, "_desc", None) is not None else None
    if spec is not None:  # a qd.ndarray: only its type and shape can reach a kernel (indexing one is refused)
        return f"ndarray:{spec!r}:{tuple(v.shape)}"
    if hasattr(v, "__qd_matrix__") or isinstance(v, np.ndarray):  # a qd.Vector / qd.Matrix / small numpy constant
        arr = np.asarray(v)
        return f"matrix:{arr.dtype}:{arr.shape}:{arr.tobytes().hex()}"
    return None


def struct_fingerprint(t: StructType) -> str | None:
    """A struct type as a type, like `qd.math.vec3`: its name and members (nested struct types by their text),
    and the fingerprints of its `qd.func` methods and those of its nested struct types (a method's edit is a
    miss). None when a method cannot be fingerprinted."""
    methods: list[str] = []
    for path, st in _struct_types(t, ()):
        for name, m in sorted(st.methods.items()):
            fp = fingerprint(m)
            if fp is None:
                return None
            methods.append(f"{'.'.join((*path, name))}={fp}")
    return f"struct:{t!r}#{';'.join(methods)}"


def _struct_types(t: StructType, path: tuple[str, ...]) -> list[tuple[tuple[str, ...], StructType]]:
    out = [(path, t)]
    for k, m in t.members.items():
        if isinstance(m, StructType):
            out += _struct_types(m, (*path, k))
    return out


_FUNCTIONS: weakref.WeakKeyDictionary[types.FunctionType, str | None] = weakref.WeakKeyDictionary()


def function_fingerprint(fn: types.FunctionType, def_locals: dict[str, Any] | None = None) -> str | None:
    """A function as code: its name, the digest of its text, and the fingerprints of its default values and
    annotations (evaluated when it was defined, or named by strings): two functions a factory made with the same
    name but other text, defaults or annotation types differ. None when a default or annotation cannot be
    fingerprinted. Memoized per function object and code (a lookup re-checks each captured func)."""
    if fn in _FUNCTIONS:
        return _FUNCTIONS[fn]
    text = source_text(fn)
    env = function_env(fn, def_locals)
    out = None if env is None else f"def:{qualified(fn)}#{digest(text) if text else ''}#{env}"
    _FUNCTIONS[fn] = out
    return out


def function_env(fn: types.FunctionType, def_locals: dict[str, Any] | None = None) -> str | None:
    """Fingerprints of a function's defaults and resolved annotations as one text ("" when it has none), or
    None when one cannot be fingerprinted."""
    parts: list[str] = []
    for d in fn.__defaults__ or ():
        parts.append(f"default={_fp_or_def(d)}")
    for name, d in sorted((fn.__kwdefaults__ or {}).items()):
        parts.append(f"{name}={_fp_or_def(d)}")
    annotations = getattr(fn, "__annotations__", None) or {}
    if annotations:
        from quadrants.types.annotations import resolve  # string annotations name globals, closures or locals

        names = {**(def_locals or {}), **_closure(fn)}
        for name, a in annotations.items():
            try:
                value = resolve(a, fn.__globals__, names)
            except Exception:  # noqa: BLE001 - unresolvable: cannot be checked
                return None
            parts.append(f"{name}:{_fp_or_def(value)}")
    text = ";".join(parts)
    return None if "\x00" in text else text


def _fp_or_def(v: Any) -> str:
    """A default value's or annotation's fingerprint (`tuple[qd.f32, qd.i32]` too); NUL when there is none."""
    if isinstance(v, types.FunctionType):
        return f"def:{qualified(v)}"
    args = getattr(v, "__args__", None)
    origin = getattr(v, "__origin__", None)
    if origin is not None and isinstance(args, tuple):
        return f"generic:{_fp_or_def(origin)}[{','.join(_fp_or_def(a) for a in args)}]"
    fp = fingerprint(v)
    return fp if fp is not None else "\x00"  # marks an unfingerprintable value


def _closure(fn: types.FunctionType) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, cell in zip(fn.__code__.co_freevars, fn.__closure__ or ()):
        try:
            out[name] = cell.cell_contents
        except ValueError:
            pass
    return out


def current_value(rec: CaptureRecord, fn: Any) -> Any:
    """The value `rec` describes, read again from `fn`'s globals or closure (a KeyError/AttributeError when the
    name or an attribute is gone)."""
    if rec.where == "class":
        value = resolve_name(rec.name, unwrap=False)
        if value is None:
            raise KeyError(rec.name)
    elif rec.where == "global":
        value = fn.__globals__[rec.name]
    else:
        value = _closure(fn)[rec.name]  # a KeyError also for an empty cell
    for attr in rec.chain:
        value = getattr(value, attr)
    return value
