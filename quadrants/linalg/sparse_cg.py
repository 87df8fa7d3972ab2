"""`qd.linalg.SparseCG`: the conjugate gradient method for `A x = b`, A a symmetric positive definite
`SparseMatrix`, as in Quadrants: `SparseCG(A, b, x0, max_iter, atol).solve()` gives `(x, converged)`, x a numpy
array of A's dtype. It stops once the residual's norm is at most `atol` (an absolute tolerance, as Quadrants
documents), or after `max_iter` iterations (then `converged` is False).
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
        A = self.matrix.matrix
        x = self._x0.copy()
        r = self._b - A @ x
        d = r.copy()
        rr = float(r @ r)
        if np.sqrt(rr) <= self.atol:
            return x, True
        for _ in range(self.max_iter):
            q = A @ d
            dq = float(d @ q)
            if dq == 0.0:
                break
            alpha = rr / dq
            x += (alpha * d).astype(x.dtype)
            r -= (alpha * q).astype(r.dtype)
            rr_new = float(r @ r)
            if np.sqrt(rr_new) <= self.atol:
                return x, True
            d = r + (rr_new / rr) * d
            rr = rr_new
        return x, False
