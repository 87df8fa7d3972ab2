"""`qd.types.primitive_types`: the scalar dtypes as sets, the module Quadrants programs import them from.

Consumes the interned dtypes of `dtypes.py`; produces nothing new. As in Quadrants, the sets also hold the
Python types a program may write where a dtype goes (`float` for the default real type, `int` and `bool`
for integers), so `for dt in all_types: qd.cast(x, dt)` covers them too.
"""

from __future__ import annotations

from typing import Any

from quadrants.types.annotations import RefType, ref
from quadrants.types.dtypes import f16, f32, f64, i8, i16, i32, i64, u1, u8, u16, u32, u64

float16, float32, float64 = f16, f32, f64
int8, int16, int32, int64 = i8, i16, i32, i64
uint1, uint8, uint16, uint32, uint64 = u1, u8, u16, u32, u64

real_types: set[Any] = {f16, f32, f64, float}
integer_types: set[Any] = {i8, i16, i32, i64, u1, u8, u16, u32, u64, int, bool}
all_types: set[Any] = real_types | integer_types
real_type_ids = {id(t) for t in real_types}
integer_type_ids = {id(t) for t in integer_types}
type_ids = {id(t) for t in all_types}

__all__ = [
    "f16", "f32", "f64", "float16", "float32", "float64",
    "i8", "i16", "i32", "i64", "int8", "int16", "int32", "int64",
    "u1", "u8", "u16", "u32", "u64", "uint1", "uint8", "uint16", "uint32", "uint64",
    "real_types", "integer_types", "all_types", "real_type_ids", "integer_type_ids", "type_ids", "RefType", "ref",
]  # fmt: skip
