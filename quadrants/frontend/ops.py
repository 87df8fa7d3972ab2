"""Typed operations: Python-level operands in, IR statements with Quadrants' typing rules out.

Operands are IR values or compile-time Python numbers. Python numbers become typed constants only when they
meet an IR value (`u8_var + 1` is i32 because the literal is `default_ip`); arithmetic between two Python
numbers never reaches this module (`operators.py` evaluates it in Python, as Quadrants does).
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from quadrants.errors import QuadrantsNegativeExponentError, QuadrantsTypeError, SourceLoc
from quadrants.ir import nodes as ir
from quadrants.ir.builder import Builder
from quadrants.types import dtypes
from quadrants.types.dtypes import PrimitiveType, i32, u1
from quadrants.types.promotion import float_type, promote, truediv_type

# Python operator symbols, for error messages.
SYMBOLS = {
    "add": "+", "sub": "-", "mul": "*", "truediv": "/", "floordiv": "//", "mod": "%", "pow": "**",
    "and": "&", "or": "|", "xor": "^", "shl": "<<", "shr": ">>", "lshr": ">>>", "lt": "<", "le": "<=", "gt": ">",
    "ge": ">=", "eq": "==", "ne": "!=",
}  # fmt: skip


def is_static_number(v: Any) -> bool:
    return isinstance(v, (numbers.Number, np.generic)) and not isinstance(v, complex)


class TypedOps:
    def __init__(self, builder: Builder, default_ip: PrimitiveType, default_fp: PrimitiveType) -> None:
        self.b = builder
        self.default_ip = default_ip
        self.default_fp = default_fp

    # ---- operands -----------------------------------------------------------------------------------

    def literal_type(self, v: Any, loc: SourceLoc | None) -> PrimitiveType:
        if isinstance(v, np.ndarray) and v.ndim == 0:  # a 0-d numpy array is its one value
            v = v[()]
        if isinstance(v, (bool, np.bool_)):
            return u1
        if isinstance(v, np.generic):
            return dtypes.from_numpy(v.dtype)
        if isinstance(v, numbers.Integral):
            lo, hi = self.default_ip.min_max()
            if not lo <= int(v) <= hi:
                raise QuadrantsTypeError(
                    f"Integer literal {v} exceeded the range of default_ip: {self.default_ip}, please specify "
                    f"the dtype via e.g. `qd.u64({v})` or set a different `default_ip` in `qd.init()`",
                    loc,
                )
            return self.default_ip
        if isinstance(v, numbers.Real):
            return self.default_fp
        raise QuadrantsTypeError(f"a {type(v).__name__} object cannot be used as a value in a kernel (unsupported "
                                 f"operand type: {type(v).__name__})", loc)

    def value(self, v: Any, loc: SourceLoc | None) -> ir.Value:
        """An IR scalar value for `v` (a Python number becomes a typed constant)."""
        if isinstance(v, ir.Value):
            if not isinstance(v.type, PrimitiveType):
                raise QuadrantsTypeError(f"an {v.type!r} cannot be used as a scalar value", loc)
            return v
        v = v[()] if isinstance(v, np.ndarray) and v.ndim == 0 else v
        t = self.literal_type(v, loc)
        py = bool(v) if t is u1 else (float(v) if t.is_float else int(v))
        with self.b.at(loc):
            return self.b.const(py, t)

    def cast(self, v: Any, dtype: PrimitiveType, loc: SourceLoc | None) -> ir.Value:
        val = self.value(v, loc)
        with self.b.at(loc):
            return self.b.cast(val, dtype)

    def cond(self, v: Any, loc: SourceLoc | None) -> ir.Value:
        """A u1 condition from an integer value (floats are rejected, as in Quadrants)."""
        val = self.value(v, loc)
        t = val.type
        assert isinstance(t, PrimitiveType)
        if t is u1:
            return val
        if t.is_float:
            raise QuadrantsTypeError(f"a condition must be an integer or u1, not {t}", loc)
        with self.b.at(loc):
            zero = self.b.const(0, t)
            return self.b.emit(ir.Binary(op="ne", lhs=val, rhs=zero, type=u1))

    # ---- operators ----------------------------------------------------------------------------------

    def binary(self, op: str, a: Any, b: Any, loc: SourceLoc | None) -> ir.Value:
        va, vb = self.value(a, loc), self.value(b, loc)
        ta, tb = va.type, vb.type
        assert isinstance(ta, PrimitiveType) and isinstance(tb, PrimitiveType)
        if op in ("and", "or", "xor", "shl", "shr", "lshr") and (ta.is_float or tb.is_float):
            raise QuadrantsTypeError(f"unsupported operand type(s) for '{SYMBOLS[op]}': '{ta}' and '{tb}'", loc)
        if op in ("shl", "shr", "lshr"):
            t = ta
        elif op == "truediv":
            t = truediv_type(ta, tb, self.default_fp)
        elif op == "atan2":
            t = float_type(promote(ta, tb), self.default_fp)
            t = dtypes.f32 if t is dtypes.f16 else t  # measured: atan2(f16, f16) is f32 in Quadrants
        elif op == "pow" and ta.is_integral and tb.is_integral:
            t = ta  # measured: an integer power keeps the base's type (i8 ** u8 -> i8)
        else:
            t = promote(ta, tb)
        if op == "pow" and t.is_integral and isinstance(vb, ir.Const) and vb.value < 0:
            raise QuadrantsNegativeExponentError("Negative exponent in pow(int, int) is not allowed.", loc)
        with self.b.at(loc):
            if op in ir.CMP_OPS:
                return self.b.emit(ir.Binary(op=op, lhs=self.b.cast(va, t), rhs=self.b.cast(vb, t), type=u1))
            return self.b.emit(ir.Binary(op=op, lhs=self.b.cast(va, t), rhs=self.b.cast(vb, t), type=t))

    def unary(self, op: str, a: Any, loc: SourceLoc | None) -> ir.Value:
        va = self.value(a, loc)
        t = va.type
        assert isinstance(t, PrimitiveType)
        with self.b.at(loc):
            if op in ("invert", "lnot", "popcnt", "clz", "ffs") and t.is_float:
                shown = "not" if op == "lnot" else op
                raise QuadrantsTypeError(f"'{shown}' takes integral inputs only, however '{t}' is provided", loc)
            if op == "lnot":
                zero = self.b.const(0, t)
                return self.b.emit(ir.Binary(op="eq", lhs=va, rhs=zero, type=u1))
            if op == "ffs":  # the 1-based position of the lowest set bit (0 for 0), as an i32 for any width
                return self.b.emit(ir.Unary(op=op, operand=va, type=i32))
            if op in ("floor", "ceil", "round") and not t.is_float:
                raise QuadrantsTypeError(f"'{op}' takes real inputs only, however '{t}' is provided", loc)
            if op in ir.FLOAT_ONLY_UNARY:
                ft = float_type(t, self.default_fp)
                return self.b.emit(ir.Unary(op=op, operand=self.b.cast(va, ft), type=ft))
            return self.b.emit(ir.Unary(op=op, operand=va, type=t))

    def select(self, cond: Any, a: Any, b: Any, loc: SourceLoc | None) -> ir.Value:
        c = self.cond(cond, loc)
        va, vb = self.value(a, loc), self.value(b, loc)
        assert isinstance(va.type, PrimitiveType) and isinstance(vb.type, PrimitiveType)
        t = promote(va.type, vb.type)
        with self.b.at(loc):
            return self.b.emit(ir.Select(cond=c, a=self.b.cast(va, t), b=self.b.cast(vb, t), type=t))
