"""Type promotion: the rules measured on real Quadrants 1.3.3, plus their algebraic properties."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from quadrants.frontend.ops import TypedOps
from quadrants.ir import nodes as ir
from quadrants.ir.builder import Builder
from quadrants.types import dtypes as T
from quadrants.types.promotion import promote, truediv_type

# (lhs, rhs, op, result) observed with real Quadrants 1.3.3 (probe: static_print of the expression's type).
OBSERVED = [
    (T.u8, T.i32, "add", T.i32), (T.f16, T.i32, "add", T.f16), (T.f16, T.i64, "add", T.f16),
    (T.u32, T.i32, "add", T.u32), (T.u32, T.i64, "add", T.i64), (T.i8, T.i8, "add", T.i8),
    (T.i8, T.u8, "add", T.u8), (T.u8, T.u16, "add", T.u16), (T.i8, T.u16, "add", T.u16),
    (T.u1, T.u1, "add", T.u1), (T.u1, T.i32, "add", T.i32), (T.i64, T.f32, "add", T.f32),
    (T.i32, T.i32, "truediv", T.f32), (T.u8, T.u8, "truediv", T.f32), (T.f16, T.i32, "truediv", T.f32),
    (T.f16, T.f16, "truediv", T.f16), (T.f64, T.i32, "truediv", T.f64), (T.i32, T.i32, "floordiv", T.i32),
    (T.f16, T.i32, "floordiv", T.f16), (T.f32, T.i32, "mod", T.f32), (T.u8, T.i32, "mod", T.i32),
    (T.i8, T.u8, "floordiv", T.u8), (T.u8, T.i8, "and", T.u8), (T.i32, T.i64, "xor", T.i64),
    (T.i32, T.u32, "or", T.u32), (T.u8, T.i32, "pow", T.u8), (T.i32, T.u8, "pow", T.i32),
    (T.i32, T.i64, "pow", T.i32), (T.i64, T.i32, "pow", T.i64), (T.i8, T.u8, "pow", T.i8),
    (T.f16, T.i32, "pow", T.f16), (T.i32, T.f16, "pow", T.f16), (T.f32, T.f16, "pow", T.f32),
    (T.f32, T.f64, "pow", T.f64), (T.u8, T.i32, "shl", T.u8), (T.i64, T.i32, "shl", T.i64),
    (T.i32, T.i64, "shl", T.i32), (T.u8, T.i32, "shr", T.u8), (T.i32, T.f32, "min", T.f32),
    (T.u8, T.i8, "max", T.u8), (T.i32, T.i64, "max", T.i64), (T.u8, T.i8, "atan2", T.f32),
    (T.f16, T.f16, "atan2", T.f32), (T.f64, T.f32, "atan2", T.f64), (T.i32, T.f32, "lt", T.u1),
    (T.f64, T.f64, "eq", T.u1),
]  # fmt: skip


def _ops() -> tuple[TypedOps, Builder]:
    b = Builder(ir.Block())
    return TypedOps(b, T.i32, T.f32), b


def _arg(t: T.PrimitiveType) -> ir.Value:
    return ir.Arg(index=0, type=t)


@pytest.mark.parametrize("lhs,rhs,op,result", OBSERVED, ids=lambda x: str(x))
def test_binary_result_type_matches_real_quadrants(lhs, rhs, op, result) -> None:
    ops, _ = _ops()
    assert ops.binary(op, _arg(lhs), _arg(rhs), None).type is result


@pytest.mark.parametrize(
    "op,x,result",
    [("sqrt", T.i32, T.f32), ("sqrt", T.i64, T.f32), ("sqrt", T.f16, T.f16), ("sqrt", T.u1, T.f32),
     ("exp", T.f64, T.f64), ("floor", T.f32, T.f32), ("abs", T.i8, T.i8), ("abs", T.u8, T.u8),
     ("neg", T.u8, T.u8), ("invert", T.u8, T.u8), ("lnot", T.i32, T.u1), ("tan", T.f16, T.f16)],
)  # fmt: skip
def test_unary_result_type_matches_real_quadrants(op, x, result) -> None:
    ops, _ = _ops()
    assert ops.unary(op, _arg(x), None).type is result


def test_literals_take_default_types() -> None:
    ops, _ = _ops()
    assert ops.binary("add", _arg(T.u8), 1, None).type is T.i32
    assert ops.binary("mul", _arg(T.f16), 2.0, None).type is T.f32
    assert ops.binary("add", _arg(T.i64), 1.5, None).type is T.f32
    assert ops.binary("add", _arg(T.i32), True, None).type is T.i32
    f64_ops = TypedOps(Builder(ir.Block()), T.i64, T.f64)
    assert f64_ops.binary("add", _arg(T.f32), 1.5, None).type is T.f64
    assert f64_ops.binary("add", _arg(T.i32), 1, None).type is T.i64


def test_float_only_functions_reject_integers() -> None:
    ops, _ = _ops()
    from quadrants.errors import QuadrantsTypeError

    with pytest.raises(QuadrantsTypeError, match="takes real inputs only"):
        ops.unary("floor", _arg(T.i32), None)
    with pytest.raises(QuadrantsTypeError, match="unsupported operand"):
        ops.binary("and", _arg(T.f32), _arg(T.i32), None)


dtype = st.sampled_from(T.ALL_TYPES)


@given(dtype, dtype)
def test_promote_is_symmetric_and_picks_an_operand(a, b) -> None:
    assert promote(a, b) is promote(b, a)
    assert promote(a, b) in (a, b)


@given(dtype, dtype, dtype)
def test_promote_is_associative(a, b, c) -> None:
    assert promote(promote(a, b), c) is promote(a, promote(b, c))


@given(dtype, dtype)
def test_float_beats_int_and_width_wins(a, b) -> None:
    r = promote(a, b)
    if a.is_float != b.is_float:
        assert r.is_float
    elif a.bits != b.bits:
        assert r.bits == max(a.bits, b.bits)


@given(dtype, dtype)
def test_true_division_is_always_float(a, b) -> None:
    r = truediv_type(a, b, T.f32)
    assert r.is_float
    assert r.bits >= max(t.bits for t in (a, b) if t.is_float) if (a.is_float or b.is_float) else r is T.f32
