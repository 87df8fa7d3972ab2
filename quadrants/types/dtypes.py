"""Primitive data types: a closed set of interned, immutable values.

Consumes nothing; produces the `qd.i8 ... qd.f64, qd.u1` objects and the lookups between them and numpy.
Every other layer compares dtypes by identity (`t is f32`); the mapping to LLVM types lives in codegen.
"""

from __future__ import annotations

from typing import Any

import numpy as np


class PrimitiveType:
    """A scalar type. Instances are created once, below, and never again."""

    __slots__ = ("name", "kind", "bits", "np_dtype")

    name: str
    kind: str  # "int", "uint", "float" or "bool"
    bits: int
    np_dtype: np.dtype

    def __init__(self, name: str, kind: str, bits: int, np_name: str) -> None:
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "kind", kind)
        object.__setattr__(self, "bits", bits)
        object.__setattr__(self, "np_dtype", np.dtype(np_name))

    def __setattr__(self, key: str, value: Any) -> None:
        raise AttributeError("dtypes are immutable")

    def __repr__(self) -> str:
        return self.name

    def __reduce__(self) -> str:
        return self.name  # pickles as the module-level singleton

    def to_string(self) -> str:
        """The dtype's name (`"f32"`), as Quadrants' `DataType.to_string()`."""
        return self.name

    @property
    def is_float(self) -> bool:
        return self.kind == "float"

    @property
    def is_integral(self) -> bool:
        """Integers and u1 (booleans behave as 1-bit unsigned integers)."""
        return self.kind != "float"

    @property
    def is_signed(self) -> bool:
        return self.kind in ("int", "float")

    @property
    def itemsize(self) -> int:
        return int(self.np_dtype.itemsize)

    def min_max(self) -> tuple[int, int]:
        """Representable range of an integral type."""
        if self.kind == "bool":
            return 0, 1
        if self.kind == "uint":
            return 0, (1 << self.bits) - 1
        return -(1 << (self.bits - 1)), (1 << (self.bits - 1)) - 1

    def __call__(self, value: Any) -> Any:
        """`qd.f32(1.5)` in Python scope: the value rounded to this type, as a Python number."""
        if self.kind == "float":
            return float(self.np_dtype.type(value))
        if self.kind == "bool":
            return bool(value)
        lo, hi = self.min_max()
        v = int(value)
        span = hi - lo + 1
        return (v - lo) % span + lo


i8 = PrimitiveType("i8", "int", 8, "int8")
i16 = PrimitiveType("i16", "int", 16, "int16")
i32 = PrimitiveType("i32", "int", 32, "int32")
i64 = PrimitiveType("i64", "int", 64, "int64")
u8 = PrimitiveType("u8", "uint", 8, "uint8")
u16 = PrimitiveType("u16", "uint", 16, "uint16")
u32 = PrimitiveType("u32", "uint", 32, "uint32")
u64 = PrimitiveType("u64", "uint", 64, "uint64")
f16 = PrimitiveType("f16", "float", 16, "float16")
f32 = PrimitiveType("f32", "float", 32, "float32")
f64 = PrimitiveType("f64", "float", 64, "float64")
u1 = PrimitiveType("u1", "bool", 1, "bool")

ALL_TYPES: tuple[PrimitiveType, ...] = (i8, i16, i32, i64, u8, u16, u32, u64, f16, f32, f64, u1)
BY_NAME: dict[str, PrimitiveType] = {t.name: t for t in ALL_TYPES}
BY_NAME.update(
    {
        "int8": i8, "int16": i16, "int32": i32, "int64": i64,
        "uint8": u8, "uint16": u16, "uint32": u32, "uint64": u64,
        "float16": f16, "float32": f32, "float64": f64, "uint1": u1, "bool": u1,
    }
)  # fmt: skip
_BY_NUMPY: dict[np.dtype, PrimitiveType] = {t.np_dtype: t for t in ALL_TYPES}


def from_numpy(dtype: Any) -> PrimitiveType:
    """The quadrants dtype of a numpy dtype (or anything `np.dtype` accepts)."""
    try:
        return _BY_NUMPY[np.dtype(dtype)]
    except (KeyError, TypeError):
        raise TypeError(f"numpy dtype {dtype!r} has no quadrants equivalent") from None


class default_uint:  # noqa: N801 - used like `int` and `float`, as a type placeholder
    """The unsigned type as wide as the program's default integer type: the element type of `qd.math.uvec3`
    (u32, or u64 under `qd.init(default_ip=qd.i64)`, as in Quadrants)."""


def to_dtype(obj: Any, default_ip: PrimitiveType = i32, default_fp: PrimitiveType = f32) -> PrimitiveType:
    """Normalize what users write for a scalar type: `qd.f32`, `float`, `int`, `bool`, numpy dtypes, names
    (`int`, `float` and `default_uint` stand for the program's defaults)."""
    if isinstance(obj, PrimitiveType):
        return obj
    if obj is int:
        return default_ip
    if obj is default_uint:
        return u64 if default_ip.itemsize == 8 else u32
    if obj is float:
        return default_fp
    if obj is bool:
        return u1
    if isinstance(obj, str) and obj in BY_NAME:
        return BY_NAME[obj]
    if getattr(obj, "__qd_quant__", False):  # a qd.types.quant type where a scalar dtype is needed
        raise TypeError(f"{obj!r} is a quantized type: only a field's elements can have it (placed with "
                        "qd.BitpackedFields or quant_array); compute with its compute type")
    return from_numpy(obj)


def is_dtype_like(obj: Any) -> bool:
    try:
        to_dtype(obj)
    except TypeError:
        return False
    return True


# ---- the predicates of `qd.types` (Quadrants' names) -----------------------------------------------------------


def _scalar_of(t: Any) -> PrimitiveType | None:
    """A dtype, or the element dtype of a vector/matrix type (None for anything else, `float` included)."""
    t = t if isinstance(t, PrimitiveType) else getattr(t, "dtype", None)
    return t if isinstance(t, PrimitiveType) else None


def is_integral(t: Any) -> bool:
    """An integer dtype (also u1), or a vector/matrix type of one."""
    s = _scalar_of(t)
    return s is not None and s.is_integral


def is_real(t: Any) -> bool:
    """A floating-point dtype, or a vector/matrix type of one."""
    s = _scalar_of(t)
    return s is not None and s.is_float


def is_signed(t: Any) -> bool:
    """A signed integer or floating-point dtype."""
    s = _scalar_of(t)
    return s is not None and s.is_signed


def is_tensor(t: Any) -> bool:
    """A vector/matrix type (Quadrants calls those tensor types)."""
    return not isinstance(t, PrimitiveType) and hasattr(t, "shape") and hasattr(t, "dtype")
