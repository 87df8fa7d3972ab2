"""qd.solve, qd.zero / qd.one, Matrix.diag, Vector.unit, qd.math.ffs and qd.math.fns, checked against numpy and
plain-Python references."""

from __future__ import annotations

import numpy as np
import pytest

import quadrants as qd
from tests.conftest import qd_init


@pytest.mark.parametrize("n", [2, 3, 4, 6])
@pytest.mark.parametrize("dt", [qd.f32, qd.f64])
def test_solve_matches_numpy_also_where_pivoting_is_needed(n: int, dt: qd.types.PrimitiveType) -> None:
    qd_init(default_fp=dt)
    A = qd.Matrix.field(n, n, dtype=dt, shape=())
    b = qd.Vector.field(n, dtype=dt, shape=())
    x = qd.Vector.field(n, dtype=dt, shape=())

    @qd.kernel
    def k():
        x[None] = qd.solve(A[None], b[None])

    rng = np.random.default_rng(n)
    a = rng.normal(size=(n, n))
    a[0, 0] = 0.0  # elimination without row swaps would divide by zero
    rhs = rng.normal(size=n)
    A.from_numpy(a)
    b.from_numpy(rhs)
    k()
    tol = 1e-4 if dt is qd.f32 else 1e-12
    np.testing.assert_allclose(x.to_numpy(), np.linalg.solve(a, rhs), rtol=tol, atol=tol)


@pytest.mark.parametrize(
    "shapes, message",
    [(((2, 3), 2), "Only square matrix"), (((3, 3), 2), "dimension dismatch"), (((7, 7), 7), "6×6")],
)
def test_solve_refuses_other_shapes(shapes: tuple[tuple[int, int], int], message: str) -> None:
    (n, m), k = shapes

    @qd.kernel
    def bad() -> qd.f32:
        x = qd.solve(qd.Matrix.zero(qd.f32, n, m), qd.Vector.zero(qd.f32, k))
        return x[0]

    with pytest.raises(qd.QuadrantsCompilationError, match=message):
        bad()


def test_zero_one_diag_unit_in_kernels_and_python() -> None:
    @qd.kernel
    def k(s: qd.f32, i: qd.i32) -> qd.types.vector(4, qd.f32):
        v = qd.Vector([s, 2 * s, 3.0])
        r = qd.one(v) + qd.zero(v) + qd.Vector.unit(3, 1, qd.f32) + qd.Matrix.diag(3, s)[2, :]
        return qd.Vector([r[0], r[1], r[2], qd.one(i) + qd.zero(i)])

    np.testing.assert_array_equal(k(2.0, 7), [1.0, 2.0, 3.0, 1.0])
    np.testing.assert_array_equal(qd.Matrix.diag(2, 3).to_numpy(), [[3, 0], [0, 3]])
    np.testing.assert_array_equal(qd.Vector.unit(3, 2).to_numpy(), [0, 0, 1])
    assert qd.zero(5) == 0 and qd.one(2.5) == 1.0


def _fns(mask: int, base: int, offset: int) -> int:
    if offset == 0:
        return base if base < 32 and (mask >> base) & 1 else 0xFFFFFFFF
    n = abs(offset)
    for p in range(base, 32) if offset > 0 else range(min(base, 31), -1, -1):
        if (mask >> p) & 1:
            n -= 1
            if n == 0:
                return p
    return 0xFFFFFFFF


def test_ffs_and_fns_against_python() -> None:
    @qd.kernel
    def ffs64(x: qd.i64) -> qd.i32:
        return qd.math.ffs(x)

    @qd.kernel
    def ffs8(x: qd.u8) -> qd.i32:
        return qd.math.ffs(x)

    @qd.kernel
    def fns(m: qd.u32, b: qd.u32, o: qd.i32) -> qd.u32:
        return qd.math.fns(m, b, o)

    for v in (0, 1, 12, 1 << 32, -1, -(2**63), 3 << 40):
        assert ffs64(v) == (v & -v).bit_length()
    assert [ffs8(v) for v in (0, 128, 6)] == [0, 8, 2]
    rng = np.random.default_rng(0)
    masks = [0, 0xFFFFFFFF, 1, 0x80000000, 0xAAAAAAAA, *map(int, rng.integers(0, 2**32, 4, dtype=np.uint64))]
    for m in masks:
        for b in (0, 1, 15, 31, 40):
            for o in (-3, -1, 0, 1, 2, 5):
                assert fns(m, b, o) == _fns(m, b, o), (hex(m), b, o)


@pytest.mark.parametrize("body", ["return not x", "return qd.math.ffs(x)"])
def test_integer_only_operators_refuse_floats(body: str) -> None:
    from tests.helpers import define

    k = define(f"@qd.kernel\ndef k(x: qd.f32) -> qd.i32:\n    {body}\n")["k"]
    with pytest.raises(qd.QuadrantsTypeError, match="takes integral inputs only"):
        k(1.0)
