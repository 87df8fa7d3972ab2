"""The IR-building helpers the derivative rules (derivatives.py) call on a builder: constants, unary and binary
ops, comparisons and selects, each appended where the builder is emitting (`emit`). Shared by the reverse builder
(adjoint.py) and the forward one (forward.py), which differ only in where a statement goes."""

from __future__ import annotations

from typing import Any

from quadrants.ir import nodes as ir
from quadrants.types.dtypes import PrimitiveType, u1


class Emitter:
    def emit(self, s: Any) -> Any:
        raise NotImplementedError

    def const(self, value: float, t: Any) -> ir.Const:
        return self.emit(ir.Const(value=float(value) if is_float(t) else int(value), type=t))  # type: ignore[no-any-return]

    def un(self, op: str, a: ir.Value) -> ir.Value:
        return self.emit(ir.Unary(op=op, operand=a, type=a.type))  # type: ignore[no-any-return]

    def bin(self, op: str, a: ir.Value, b: ir.Value) -> ir.Value:
        return self.emit(ir.Binary(op=op, lhs=a, rhs=b, type=a.type))  # type: ignore[no-any-return]

    def mul(self, a: ir.Value, b: ir.Value) -> ir.Value:
        return self.bin("mul", a, b)

    def cmp(self, op: str, a: ir.Value, b: ir.Value) -> ir.Value:
        return self.emit(ir.Binary(op=op, lhs=a, rhs=b, type=u1))  # type: ignore[no-any-return]

    def select(self, c: ir.Value, a: ir.Value, b: ir.Value) -> ir.Value:
        return self.emit(ir.Select(cond=c, a=a, b=b, type=a.type))  # type: ignore[no-any-return]


def is_float(t: Any) -> bool:
    return isinstance(t, PrimitiveType) and t.is_float
