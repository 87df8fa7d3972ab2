"""Matrix-free Krylov solvers, as in Quadrants: `A` is a `LinearOperator` wrapping a kernel `matvec(x, Ax)` over
fields, `b` and `x` fields of one shape (1-D to 3-D, f32 or f64); `x` holds the initial guess and receives the
solution. `MatrixFreeCG` (A symmetric positive definite) and `MatrixFreeBICGSTAB` (any non-singular A) return
whether the residual's norm fell below `tol` within `maxiter` iterations.

The vector work runs as kernels over the fields (`_dot` reduces in f64); the scalars of the iteration live in
Python, passed to the kernels as arguments.
"""

# mypy: disable-error-code="valid-type, operator"
# (the kernels' annotations are Quadrants types and their bodies kernel-language code, not Python mypy can type)

from __future__ import annotations

import math
from typing import Any

from quadrants.errors import QuadrantsRuntimeError, QuadrantsTypeError
from quadrants.frontend.intrinsics import grouped
from quadrants.lang.data_oriented import data_oriented
from quadrants.lang.field import field
from quadrants.lang.kernel import kernel
from quadrants.types import dtypes
from quadrants.types.annotations import template


@data_oriented
class LinearOperator:
    """`A` of `A x = b`, given as the kernel that writes `A x` into its second argument."""

    def __init__(self, matvec_kernel: Any) -> None:
        self._matvec = matvec_kernel

    def matvec(self, x: Any, Ax: Any) -> None:  # noqa: N803 - Quadrants' names
        if x.shape != Ax.shape:
            raise QuadrantsRuntimeError(f"Dimension mismatch x.shape{x.shape} != Ax.shape{Ax.shape}.")
        self._matvec(x, Ax)


@kernel
def _dot(p: template(), q: template()) -> dtypes.f64:
    result = dtypes.f64(0.0)
    for idx in grouped(p):
        result += dtypes.f64(p[idx]) * dtypes.f64(q[idx])
    return result


@kernel
def _combine(out: template(), a: template(), beta: dtypes.f64, c: template()):
    """out = a + beta * c (`out` may be `a` or `c`)."""
    for idx in grouped(out):
        out[idx] = a[idx] + beta * c[idx]


def _work_fields(b: Any, x: Any, n: int, who: str) -> tuple[Any, list[Any]]:
    if b.dtype != x.dtype:
        raise QuadrantsTypeError(f"Dtype mismatch b.dtype({b.dtype}) != x.dtype({x.dtype}).")
    if b.dtype not in (dtypes.f32, dtypes.f64):
        raise QuadrantsTypeError(f"Not supported dtype: {b.dtype}")
    if b.shape != x.shape:
        raise QuadrantsRuntimeError(f"Dimension mismatch b.shape{b.shape} != x.shape{x.shape}.")
    if not 1 <= len(b.shape) <= 3:
        raise QuadrantsRuntimeError(f"{who} only support 1D, 2D, 3D inputs; your inputs is {len(b.shape)}-D.")
    return b.dtype, [field(b.dtype, shape=b.shape) for _ in range(n)]


def MatrixFreeCG(A: LinearOperator, b: Any, x: Any, tol: float = 1e-6, maxiter: int = 5000,  # noqa: N802
                 quiet: bool = True) -> bool:  # fmt: skip
    """Conjugate gradients for a symmetric positive definite `A`."""
    _, (p, r, Ap, Ax) = _work_fields(b, x, 4, "MatrixFreeCG")
    A._matvec(x, Ax)
    _combine(r, b, -1.0, Ax)  # r = b - A x
    _combine(p, r, 0.0, r)
    rr = _dot(r, r)
    if not quiet:
        print(f">>> Initial residual = {rr:e}")
    if math.sqrt(rr) < tol:
        return True
    for i in range(maxiter):
        A._matvec(p, Ap)
        pAp = _dot(p, Ap)
        if pAp == 0.0:
            break
        alpha = rr / pAp
        _combine(x, x, alpha, p)
        _combine(r, r, -alpha, Ap)
        rr_new = _dot(r, r)
        if not quiet:
            print(f">>> Iter = {i + 1:4}, Residual = {math.sqrt(rr_new):e}")
        if math.sqrt(rr_new) < tol:
            return True
        _combine(p, r, rr_new / rr, p)
        rr = rr_new
    if not quiet:
        print(f">>> Conjugate Gradient method failed to converge in {maxiter} iterations")
    return False


def MatrixFreeBICGSTAB(A: LinearOperator, b: Any, x: Any, tol: float = 1e-6, maxiter: int = 5000,  # noqa: N802
                       quiet: bool = True) -> bool:  # fmt: skip
    """The biconjugate gradient stabilized method for a non-singular `A`."""
    _, (r, r0, p, v, s, t, Ax) = _work_fields(b, x, 7, "MatrixFreeBICGSTAB")
    A._matvec(x, Ax)
    _combine(r, b, -1.0, Ax)  # r = b - A x
    _combine(r0, r, 0.0, r)
    if math.sqrt(_dot(r, r)) < tol:
        return True
    rho_old = alpha = omega = 1.0
    for i in range(maxiter):
        rho = _dot(r0, r)
        if rho == 0.0:
            break
        if i == 0:
            _combine(p, r, 0.0, r)
        else:
            _combine(p, p, -omega, v)  # p = r + beta (p - omega v)
            _combine(p, r, (rho / rho_old) * (alpha / omega), p)
        A._matvec(p, v)
        r0v = _dot(r0, v)
        if r0v == 0.0:
            break
        alpha = rho / r0v
        _combine(s, r, -alpha, v)
        if math.sqrt(_dot(s, s)) < tol:
            _combine(x, x, alpha, p)
            return True
        A._matvec(s, t)
        tt = _dot(t, t)
        omega = _dot(t, s) / tt if tt != 0.0 else 0.0
        _combine(x, x, alpha, p)
        _combine(x, x, omega, s)
        _combine(r, s, -omega, t)
        res = math.sqrt(_dot(r, r))
        if not quiet:
            print(f">>> Iter = {i + 1:4}, Residual = {res:e}")
        if res < tol:
            return True
        if omega == 0.0:
            break
        rho_old = rho
    if not quiet:
        print(f">>> BiCGSTAB failed to converge in {maxiter} iterations")
    return False
