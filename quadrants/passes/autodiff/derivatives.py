"""The derivative table of reverse mode: for each operator, what its result's adjoint adds to its operands'.

Consumes one forward statement (`Unary`, `Binary`, `Select`, `Cast`) and the adjoint of its value, through the
builder of `adjoint.py` (which emits the statements and accumulates into operands' adjoints, skipping those that
are not differentiable: constants, arguments, integers); produces nothing itself. Operators whose gradient is
zero are listed as such (`ZERO_*`); an operator in neither table is refused at its source location. The rules
are Quadrants' (`make_adjoint`), checked against real Quadrants 1.3.3 and central differences in
tests/passes/test_autodiff_property.py. `atan` is differentiated here (1 / (1 + x^2)); Quadrants 1.3.3 refuses it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from quadrants.ir import nodes as ir

if TYPE_CHECKING:
    from quadrants.passes.autodiff.adjoint import AdjointBuilder

Rule = Callable[["AdjointBuilder", Any, ir.Value], None]

ZERO_UNARY = frozenset({"floor", "ceil", "round", "lnot", "invert", "popcnt", "clz"})
ZERO_BINARY = frozenset({"floordiv", "raw_div", "raw_mod"}) | ir.CMP_OPS | ir.BIT_OPS


def _neg(b: AdjointBuilder, s: ir.Unary, g: ir.Value) -> None:
    b.acc(s.operand, b.un("neg", g))


def _abs(b: AdjointBuilder, s: ir.Unary, g: ir.Value) -> None:
    x = b.primal(s.operand)
    zero, one = b.const(0, x.type), b.const(1, x.type)
    sign = b.select(b.cmp("gt", x, zero), one, b.select(b.cmp("lt", x, zero), b.un("neg", one), zero))
    b.acc(s.operand, b.mul(g, sign))


def _sin(b: AdjointBuilder, s: ir.Unary, g: ir.Value) -> None:
    b.acc(s.operand, b.mul(g, b.un("cos", b.primal(s.operand))))


def _cos(b: AdjointBuilder, s: ir.Unary, g: ir.Value) -> None:
    b.acc(s.operand, b.un("neg", b.mul(g, b.un("sin", b.primal(s.operand)))))


def _tan(b: AdjointBuilder, s: ir.Unary, g: ir.Value) -> None:
    t = b.primal(s)
    b.acc(s.operand, b.mul(g, b.bin("add", b.const(1, t.type), b.mul(t, t))))


def _tanh(b: AdjointBuilder, s: ir.Unary, g: ir.Value) -> None:
    t = b.primal(s)
    b.acc(s.operand, b.mul(g, b.bin("sub", b.const(1, t.type), b.mul(t, t))))


def _inv_sqrt_one_minus_sq(b: AdjointBuilder, x: ir.Value) -> ir.Value:
    one = b.const(1, x.type)
    return b.bin("truediv", one, b.un("sqrt", b.bin("sub", one, b.mul(x, x))))


def _asin(b: AdjointBuilder, s: ir.Unary, g: ir.Value) -> None:
    b.acc(s.operand, b.mul(g, _inv_sqrt_one_minus_sq(b, b.primal(s.operand))))


def _acos(b: AdjointBuilder, s: ir.Unary, g: ir.Value) -> None:
    b.acc(s.operand, b.un("neg", b.mul(g, _inv_sqrt_one_minus_sq(b, b.primal(s.operand)))))


def _atan(b: AdjointBuilder, s: ir.Unary, g: ir.Value) -> None:
    x = b.primal(s.operand)
    b.acc(s.operand, b.bin("truediv", g, b.bin("add", b.const(1, x.type), b.mul(x, x))))


def _exp(b: AdjointBuilder, s: ir.Unary, g: ir.Value) -> None:
    b.acc(s.operand, b.mul(g, b.primal(s)))


def _log(b: AdjointBuilder, s: ir.Unary, g: ir.Value) -> None:
    b.acc(s.operand, b.bin("truediv", g, b.primal(s.operand)))


def _sqrt(b: AdjointBuilder, s: ir.Unary, g: ir.Value) -> None:
    r = b.primal(s)
    b.acc(s.operand, b.bin("truediv", b.mul(g, b.const(0.5, r.type)), r))


def _rsqrt(b: AdjointBuilder, s: ir.Unary, g: ir.Value) -> None:
    r = b.primal(s)  # d/dx x^-1/2 = -1/2 x^-3/2 = -1/2 rsqrt(x)^3
    b.acc(s.operand, b.mul(g, b.mul(b.const(-0.5, r.type), b.mul(r, b.mul(r, r)))))


UNARY: dict[str, Rule] = {
    "neg": _neg, "abs": _abs, "sin": _sin, "cos": _cos, "tan": _tan, "tanh": _tanh, "asin": _asin,
    "acos": _acos, "atan": _atan, "exp": _exp, "log": _log, "sqrt": _sqrt, "rsqrt": _rsqrt,
}  # fmt: skip


def _add(b: AdjointBuilder, s: ir.Binary, g: ir.Value) -> None:
    b.acc(s.lhs, g)
    b.acc(s.rhs, g)


def _sub(b: AdjointBuilder, s: ir.Binary, g: ir.Value) -> None:
    b.acc(s.lhs, g)
    if b.active(s.rhs):
        b.acc(s.rhs, b.un("neg", g))


def _mul(b: AdjointBuilder, s: ir.Binary, g: ir.Value) -> None:
    if b.active(s.lhs):
        b.acc(s.lhs, b.mul(g, b.primal(s.rhs)))
    if b.active(s.rhs):
        b.acc(s.rhs, b.mul(g, b.primal(s.lhs)))


def _div(b: AdjointBuilder, s: ir.Binary, g: ir.Value) -> None:
    y = b.primal(s.rhs)
    if b.active(s.lhs):
        b.acc(s.lhs, b.bin("truediv", g, y))
    if b.active(s.rhs):  # d(x/y)/dy = -x / y^2
        b.acc(s.rhs, b.un("neg", b.bin("truediv", b.mul(g, b.primal(s.lhs)), b.mul(y, y))))


def _mod(b: AdjointBuilder, s: ir.Binary, g: ir.Value) -> None:
    """Python's `x % y` = x - y * floor(x / y) (Quadrants lowers it so): d/dx = 1, d/dy = -floor(x / y)."""
    b.acc(s.lhs, g)
    if b.active(s.rhs):
        q = b.un("floor", b.bin("truediv", b.primal(s.lhs), b.primal(s.rhs)))
        b.acc(s.rhs, b.un("neg", b.mul(g, q)))


def _atan2(b: AdjointBuilder, s: ir.Binary, g: ir.Value) -> None:
    y, x = b.primal(s.lhs), b.primal(s.rhs)  # atan2(y, x): d/dy = x / r^2, d/dx = -y / r^2
    r2 = b.bin("add", b.mul(y, y), b.mul(x, x))
    if b.active(s.lhs):
        b.acc(s.lhs, b.bin("truediv", b.mul(g, x), r2))
    if b.active(s.rhs):
        b.acc(s.rhs, b.un("neg", b.bin("truediv", b.mul(g, y), r2)))


def _pow(b: AdjointBuilder, s: ir.Binary, g: ir.Value) -> None:
    x, y = b.primal(s.lhs), b.primal(s.rhs)
    if b.active(s.lhs):  # y x^(y-1)
        b.acc(s.lhs, b.mul(g, b.mul(y, b.bin("pow", x, b.bin("sub", y, b.const(1, y.type))))))
    if b.active(s.rhs):  # log(x) x^y
        b.acc(s.rhs, b.mul(g, b.mul(b.un("log", x), b.primal(s))))


def _min_max(b: AdjointBuilder, s: ir.Binary, g: ir.Value) -> None:
    x, y = b.primal(s.lhs), b.primal(s.rhs)
    pick_lhs = b.cmp("lt", x, y) if s.op == "min" else b.cmp("lt", y, x)  # ties go to the right, as in Quadrants
    zero = b.const(0, g.type)
    b.acc(s.lhs, b.select(pick_lhs, g, zero))
    b.acc(s.rhs, b.select(pick_lhs, zero, g))


BINARY: dict[str, Rule] = {
    "add": _add, "sub": _sub, "mul": _mul, "truediv": _div, "atan2": _atan2, "pow": _pow, "min": _min_max,
    "max": _min_max, "mod": _mod,
}  # fmt: skip


def select(b: AdjointBuilder, s: ir.Select, g: ir.Value) -> None:
    cond, zero = b.primal(s.cond), b.const(0, g.type)
    b.acc(s.a, b.select(cond, g, zero))
    b.acc(s.b, b.select(cond, zero, g))


def cast(b: AdjointBuilder, s: ir.Cast, g: ir.Value) -> None:
    src = s.value.type
    if not s.bitcast and b.active(s.value) and src != s.type:
        b.acc(s.value, b.emit(ir.Cast(value=g, type=src)))
    elif not s.bitcast and b.active(s.value):
        b.acc(s.value, g)
