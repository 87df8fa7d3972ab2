"""`qd.linalg.SparseCG`: the conjugate gradient method for `A x = b`, A a symmetric positive definite
`SparseMatrix`, as in Quadrants: `SparseCG(A, b, x0, max_iter, atol).solve()` gives `(x, converged)`, x a numpy
array of A's dtype. Quadrants runs Eigen's `ConjugateGradient` (Jacobi preconditioner, the whole matrix) and so
does this: it stops once `|r| <= atol * |b|` (Eigen's tolerance is relative to the right-hand side, whatever the
parameter's name says) or after `max_iter` iterations, and prints Eigen's two report lines (`#iterations:` and
`estimated error:`), as Quadrants' CPU solver does.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from quadrants.errors import QuadrantsRuntimeError
from quadrants.linalg.sparse_matrix import SparseMatrix
from quadrants.runtime.ndarray import Ndarray


def _vector(v: Any, n: int, what: str) -> np.ndarray:
    arr = v.to_numpy() if isinstance(v, Ndarray) else np.asarray(v)
    if arr.shape != (n,):
        raise QuadrantsRuntimeError(f"SparseCG: {what} has shape {arr.shape}, the matrix has {n} rows")
    return arr


class SparseCG:
    def __init__(self, A: SparseMatrix, b: Any, x0: Any = None, max_iter: int = 50, atol: float = 1e-6) -> None:
        if not isinstance(A, SparseMatrix):
            raise QuadrantsRuntimeError(f"SparseCG needs a qd.linalg.SparseMatrix, got {type(A).__name__}")
        if A.n != A.m:
            raise QuadrantsRuntimeError(f"SparseCG needs a square matrix, got {A.n} x {A.m}")
        self.matrix = A
        self.dtype = A.dtype
        self.b = b
        self.max_iter = int(max_iter)
        self.atol = float(atol)
        np_dtype = A.dtype.np_dtype
        self._b = _vector(b, A.n, "b").astype(np_dtype)
        self._x0 = np.zeros(A.n, np_dtype) if x0 is None else _vector(x0, A.n, "x0").astype(np_dtype)

    def solve(self) -> tuple[np.ndarray, bool]:
        x, iterations, error = _eigen_cg(self.matrix.matrix, self._b, self._x0.copy(), self.max_iter, self.atol)
        print(f"#iterations:     {iterations}\nestimated error: {error:g}")
        return x, bool(error <= self.atol)


def _eigen_cg(A: Any, b: np.ndarray, x: np.ndarray, max_iter: int, tol: float) -> tuple[np.ndarray, int, float]:
    """Eigen's preconditioned conjugate gradient (`internal::conjugate_gradient`) with the Jacobi preconditioner:
    (x, iterations, estimated relative error)."""
    diag = A.diagonal()
    inv_diag = np.where(diag != 0, 1.0 / np.where(diag != 0, diag, 1), 1.0).astype(x.dtype)
    rhs_norm2 = float(b @ b)
    if rhs_norm2 == 0.0:
        return np.zeros_like(x), 0, 0.0
    threshold = max(tol * tol * rhs_norm2, float(np.finfo(x.dtype).tiny))
    r = b - A @ x
    r_norm2 = float(r @ r)
    if r_norm2 < threshold:
        return x, 0, float(np.sqrt(r_norm2 / rhs_norm2))
    p = inv_diag * r
    abs_new = float(r @ p)
    i = 0
    while i < max_iter:
        q = A @ p
        alpha = abs_new / float(p @ q)
        x += (alpha * p).astype(x.dtype)
        r -= (alpha * q).astype(r.dtype)
        r_norm2 = float(r @ r)
        if r_norm2 < threshold:
            break
        z = inv_diag * r
        abs_old, abs_new = abs_new, float(r @ z)
        p = (z + (abs_new / abs_old) * p).astype(x.dtype)
        i += 1
    return x, i, float(np.sqrt(r_norm2 / rhs_norm2))
