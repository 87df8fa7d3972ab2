"""Fingerprints of values a fastcache kernel read from outside, and the records that keep them.

Light on purpose: a fastcache lookup re-checks these records, so this module is on the start-up path.
"""

from __future__ import annotations

import enum
import numbers
import types
from dataclasses import dataclass
from typing import Any

import numpy as np

from quadrants.types.compound import MatrixType
from quadrants.types.dtypes import PrimitiveType


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
        return None if inner is None else f"enum:{type(v).__module__}.{type(v).__qualname__}.{v.name}={inner}"
    if isinstance(v, np.generic):
        return f"np.{v.dtype}:{v!r}"
    if isinstance(v, numbers.Number):
        return f"{type(v).__name__}:{v!r}"
    if isinstance(v, (tuple, list)):
        parts = [fingerprint(x) for x in v]
        return None if any(p is None for p in parts) else f"{type(v).__name__}({','.join(parts)})"  # type: ignore[arg-type]
    if isinstance(v, (PrimitiveType, MatrixType)):
        return f"type:{v!r}"
    if isinstance(v, types.ModuleType):
        return f"module:{v.__name__}"
    fn = getattr(v, "fn", None)  # a Func or Kernel
    target = fn if fn is not None and hasattr(fn, "__qualname__") else v
    if isinstance(target, (type, types.FunctionType, types.BuiltinFunctionType)):
        return f"def:{target.__module__}.{target.__qualname__}"
    if hasattr(v, "__qd_matrix__"):  # a Python-scope qd.Vector / qd.Matrix constant
        arr = np.asarray(v)
        return f"matrix:{arr.dtype}:{arr.shape}:{arr.tobytes().hex()}"
    return None


def current_value(rec: CaptureRecord, fn: Any) -> Any:
    """The value `rec` describes, read again from `fn`'s globals or closure (a KeyError/AttributeError when the
    name or an attribute is gone)."""
    if rec.where == "global":
        value = fn.__globals__[rec.name]
    else:
        cells = dict(zip(fn.__code__.co_freevars, fn.__closure__ or ()))
        value = cells[rec.name].cell_contents
    for attr in rec.chain:
        value = getattr(value, attr)
    return value
