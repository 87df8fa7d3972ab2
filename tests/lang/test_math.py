"""Math functions and casts against numpy."""

from __future__ import annotations

import numpy as np
import pytest

import quadrants as qd
from tests.helpers import define

Nd = qd.types.NDArray
rng = np.random.default_rng(7)

UNARY = {
    "qd.sin": np.sin, "qd.cos": np.cos, "qd.tan": np.tan, "qd.exp": np.exp, "qd.sqrt": np.sqrt,
    "qd.log": np.log, "qd.floor": np.floor, "qd.ceil": np.ceil, "qd.tanh": np.tanh, "qd.atan": np.arctan,
    "abs": np.abs, "qd.abs": np.abs, "qd.rsqrt": lambda x: 1 / np.sqrt(x), "qd.math.log2": np.log2,
    "qd.math.fract": lambda x: x - np.floor(x), "qd.math.sign": np.sign,
}  # fmt: skip
DOMAIN = {"qd.sqrt": (0.1, 50), "qd.log": (0.1, 50), "qd.rsqrt": (0.1, 50), "qd.math.log2": (0.1, 50),
          "qd.exp": (-5, 5), "qd.tan": (-1.2, 1.2)}  # fmt: skip


def _unary_kernel(fn: str):
    return define(
        f"""
        @qd.kernel
        def k(x: Nd, out: Nd):
            for i in range(x.shape[0]):
                out[i] = {fn}(x[i])
    """,
        Nd=Nd,
    )["k"]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("fn", list(UNARY))
def test_unary_math(fn: str, dtype) -> None:
    lo, hi = DOMAIN.get(fn, (-10, 10))
    x = rng.uniform(lo, hi, 500).astype(dtype)
    out = np.zeros_like(x)
    _unary_kernel(fn)(x, out)
    np.testing.assert_allclose(out, UNARY[fn](x).astype(dtype), rtol=2e-6 if dtype == np.float32 else 1e-12, atol=1e-6)


def test_round_halves_away_from_zero() -> None:
    x = np.array([0.5, 1.5, 2.5, -0.5, -2.5, 2.4, -2.6], np.float32)
    out = np.zeros_like(x)
    _unary_kernel("qd.round")(x, out)
    np.testing.assert_array_equal(out, np.sign(x) * np.floor(np.abs(x) + 0.5))


def test_binary_math() -> None:
    ns = define(
        """
        @qd.kernel
        def k(a: Nd[qd.f32, 1], b: Nd[qd.f32, 1], out: Nd[qd.f32, 2]):
            for i in range(a.shape[0]):
                out[0, i] = qd.atan2(a[i], b[i])
                out[1, i] = qd.pow(qd.abs(a[i]), b[i])
                out[2, i] = qd.min(a[i], b[i], 0.0)
                out[3, i] = qd.max(a[i], b[i])
                out[4, i] = qd.math.clamp(a[i], -1.0, 1.0)
                out[5, i] = qd.math.mix(a[i], b[i], 0.25)
                out[6, i] = qd.select(a[i] > b[i], a[i], b[i])
    """,
        Nd=Nd,
    )
    a = rng.uniform(-3, 3, 300).astype(np.float32)
    b = rng.uniform(-2, 2, 300).astype(np.float32)
    out = np.zeros((7, 300), np.float32)
    ns["k"](a, b, out)
    np.testing.assert_allclose(out[0], np.arctan2(a, b), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out[1], np.abs(a) ** b, rtol=1e-5)
    np.testing.assert_array_equal(out[2], np.minimum(np.minimum(a, b), 0))
    np.testing.assert_array_equal(out[3], np.maximum(a, b))
    np.testing.assert_array_equal(out[4], np.clip(a, -1, 1))
    np.testing.assert_allclose(out[5], a * 0.75 + b * 0.25, rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(out[6], np.maximum(a, b))


def test_casts_truncate_and_wrap() -> None:
    @qd.kernel
    def k(x: qd.f32, n: qd.i32) -> tuple[qd.i32, qd.u8, qd.i32, qd.f32, qd.i8]:
        return int(x), qd.cast(n, qd.u8), qd.cast(x, qd.i32), float(n), qd.cast(n, qd.i8)

    assert k(-2.7, 300) == (-2, 44, -2, 300.0, 44)
    assert k(2.7, -1) == (2, 255, 2, -1.0, -1)

    @qd.kernel
    def lit() -> tuple[qd.u8, qd.f16]:
        return qd.cast(300, qd.u8), qd.f16(0.1)

    assert lit() == (44, float(np.float16(0.1)))


def test_typed_literal_errors() -> None:
    @qd.kernel
    def bad() -> qd.i32:
        return qd.i32(3.7)

    with pytest.raises(qd.QuadrantsTypeError, match="Floating-point literals"):
        bad()


def test_math_in_python_scope() -> None:
    assert qd.sqrt(4.0) == 2.0 and qd.round(2.5) == 3.0 and qd.round(-2.5) == -3.0
    assert qd.math.pi == np.pi
