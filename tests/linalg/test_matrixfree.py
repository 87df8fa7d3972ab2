"""qd.linalg.MatrixFreeCG / MatrixFreeBICGSTAB: an operator given as a kernel, checked against numpy's solve."""

from __future__ import annotations

import numpy as np
import pytest

import quadrants as qd
from quadrants.linalg import LinearOperator, MatrixFreeBICGSTAB, MatrixFreeCG

N = 12


def _dense(shift: float) -> np.ndarray:
    """The operator below as a matrix: 4 on the diagonal, -1 (and -1 + shift above) beside it."""
    A = np.diag(np.full(N, 4.0)) - np.eye(N, k=-1) - np.eye(N, k=1)
    return A + shift * np.eye(N, k=1)


@pytest.mark.parametrize("solver, shift", [(MatrixFreeCG, 0.0), (MatrixFreeBICGSTAB, 0.0), (MatrixFreeBICGSTAB, 0.7)])
@pytest.mark.parametrize("dtype", [qd.f32, qd.f64])
def test_solves_match_numpy(solver, shift: float, dtype) -> None:  # noqa: ANN001
    @qd.kernel
    def matvec(v: qd.template(), out: qd.template()):
        for i in v:
            left = v[i - 1] if i >= 1 else 0.0
            right = v[i + 1] if i + 1 < N else 0.0
            out[i] = 4.0 * v[i] - left + (shift - 1.0) * right

    b = qd.field(dtype, shape=N)
    x = qd.field(dtype, shape=N)
    rhs = np.sin(np.arange(N) + 1.0)
    b.from_numpy(rhs.astype(dtype.np_dtype))
    assert solver(LinearOperator(matvec), b, x, tol=1e-5, maxiter=200) is True
    np.testing.assert_allclose(x.to_numpy(), np.linalg.solve(_dense(shift), rhs), atol=1e-5)


def test_mismatched_fields_are_refused() -> None:
    a, b = qd.field(qd.f32, shape=4), qd.field(qd.f64, shape=4)
    with pytest.raises(qd.QuadrantsTypeError, match="Dtype mismatch"):
        MatrixFreeCG(LinearOperator(None), a, b)
    with pytest.raises(qd.QuadrantsRuntimeError, match="Dimension mismatch"):
        MatrixFreeCG(LinearOperator(None), a, qd.field(qd.f32, shape=5))
