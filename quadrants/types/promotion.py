"""Type promotion: which dtype a binary operation computes in.

These rules were measured on real Quadrants 1.3.3 (see tests/types/test_promotion.py):
- a float beats any integer, whatever the widths (`f16 + i64 -> f16`); between floats the wider wins;
- between integers the wider wins; at equal width the unsigned one wins (`i8 + u8 -> u8`); u1 is a 1-bit
  unsigned integer (`u1 + u1 -> u1`, `u1 + i32 -> i32`);
- true division first turns integer operands into `default_fp` (`i32 / i32 -> f32`, `f16 / i32 -> f32`,
  `f16 / f16 -> f16`);
- float math on integers (`sqrt`, `exp`, ...) computes in `default_fp`;
- two exceptions live with the operators (frontend/ops.py): an integer `**` keeps the base's type
  (`i8 ** u8 -> i8`), and `atan2` of f16 values computes in f32.
"""

from __future__ import annotations

from quadrants.types.dtypes import PrimitiveType


def promote(a: PrimitiveType, b: PrimitiveType) -> PrimitiveType:
    if a is b:
        return a
    if a.is_float or b.is_float:
        if not b.is_float:
            return a
        if not a.is_float:
            return b
        return a if a.bits >= b.bits else b
    if a.bits != b.bits:
        return a if a.bits > b.bits else b
    return b if b.kind == "uint" else a


def truediv_type(a: PrimitiveType, b: PrimitiveType, default_fp: PrimitiveType) -> PrimitiveType:
    fa = a if a.is_float else default_fp
    fb = b if b.is_float else default_fp
    return promote(fa, fb)


def float_type(a: PrimitiveType, default_fp: PrimitiveType) -> PrimitiveType:
    """The dtype a float-only math function computes in for an argument of dtype `a`."""
    return a if a.is_float else default_fp
