"""`qd.linalg.SparseSolver`: direct solvers of `A x = b` for a `SparseMatrix`, as in Quadrants (Eigen there).

`solver_type` LLT (Cholesky: A symmetric positive definite), LDLT (A symmetric) or LU (any square A), each with
an `ordering` of AMD or COLAMD. As Eigen's simplicial Cholesky solvers do, LLT and LDLT read only the lower
triangle of A (the upper one is taken as its mirror). The factorization is SuperLU's (SciPy): LU with partial
pivoting in the ordering asked for; LLT / LDLT in symmetric mode (no pivoting, a symmetric ordering), where
LLT fails unless every pivot is positive and LDLT unless every pivot is non-zero, so `info()` reports what
Eigen's would. `solve` after a failed factorization raises (Quadrants returns meaningless numbers).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from quadrants.errors import QuadrantsRuntimeError
from quadrants.linalg import _scipy
from quadrants.linalg.sparse_matrix import SparseMatrix
from quadrants.runtime.ndarray import Ndarray
from quadrants.types import dtypes

SOLVER_TYPES = ("LLT", "LDLT", "LU")
ORDERINGS = ("AMD", "COLAMD")
# SuperLU's column orderings for each: a symmetric one (AMD on A^T + A) for the symmetric factorizations
_PERMC = {("LU", "AMD"): "MMD_AT_PLUS_A", ("LU", "COLAMD"): "COLAMD"}


class SparseSolver:
    def __init__(self, dtype: Any = dtypes.f32, solver_type: str = "LLT", ordering: str = "AMD") -> None:
        if solver_type not in SOLVER_TYPES or ordering not in ORDERINGS:
            raise QuadrantsRuntimeError(
                f"The solver type {solver_type} with {ordering} is not supported for now. Only "
                f"{list(SOLVER_TYPES)} with {list(ORDERINGS)} are supported."
            )
        self.dtype = dtypes.to_dtype(dtype)
        self.solver_type = solver_type
        self.ordering = ordering
        self._shape: tuple[int, int] | None = None
        self._lu: Any = None
        self._ok = False
        self._factorized = False

    def _matrix(self, A: Any) -> Any:
        if not isinstance(A, SparseMatrix):
            raise QuadrantsRuntimeError(f"SparseSolver needs a qd.linalg.SparseMatrix, got {type(A).__name__}")
        if A.n != A.m:
            raise QuadrantsRuntimeError(f"SparseSolver needs a square matrix, got {A.n} x {A.m}")
        m = A.matrix.astype(np.float64)
        if self.solver_type != "LU":  # the lower triangle, mirrored (Eigen's simplicial Cholesky reads only it)
            sp = _scipy.sparse()
            low = sp.tril(m, format="csc")
            m = low + sp.tril(m, k=-1, format="csc").T
        return m.tocsc()

    def analyze_pattern(self, A: SparseMatrix) -> None:
        """Check A and remember its shape (the ordering is computed with the factorization)."""
        self._shape = self._matrix(A).shape

    def factorize(self, A: SparseMatrix) -> None:
        m = self._matrix(A)
        self._shape = m.shape
        self._factorized = True
        self._lu, self._ok = None, False
        spla = _scipy.sparse_linalg()
        try:
            if self.solver_type == "LU":
                self._lu = spla.splu(m, permc_spec=_PERMC[(self.solver_type, self.ordering)])
            else:
                self._lu = spla.splu(m, permc_spec="MMD_AT_PLUS_A", diag_pivot_thresh=0.0,
                                     options={"SymmetricMode": True})  # fmt: skip
        except RuntimeError:  # a singular matrix: a zero pivot
            return
        pivots = self._lu.U.diagonal()
        if self.solver_type == "LLT":
            self._ok = bool(np.all(pivots > 0))
        else:
            self._ok = bool(np.all(pivots != 0) and np.all(np.isfinite(pivots)))

    def compute(self, A: SparseMatrix) -> None:
        """`analyze_pattern` and `factorize` in one."""
        self.analyze_pattern(A)
        self.factorize(A)

    def info(self) -> bool:
        """Whether the last factorization succeeded."""
        return self._ok

    def solve(self, b: Any) -> Any:
        """x with A x = b: an ndarray for an ndarray b, else a numpy array (b a field or a numpy vector)."""
        if not self._factorized:
            raise QuadrantsRuntimeError("Please call compute() before calling solve().")
        if not self._ok:
            raise QuadrantsRuntimeError(f"the {self.solver_type} factorization failed (a matrix that is not "
                                        f"{_NEEDS[self.solver_type]}): there is no solution to give")  # fmt: skip
        rhs = b.to_numpy() if isinstance(b, Ndarray) or getattr(b, "__qd_field__", None) is not None else np.asarray(b)
        assert self._shape is not None
        if rhs.shape != (self._shape[0],):
            raise QuadrantsRuntimeError(f"the right-hand side has shape {rhs.shape}, the matrix is {self._shape}")
        x = self._lu.solve(rhs.astype(np.float64)).astype(self.dtype.np_dtype)
        if isinstance(b, Ndarray):
            out = Ndarray(b.dtype, (self._shape[1],))
            out.from_numpy(x.astype(b.dtype.np_dtype))
            return out
        return x


_NEEDS = {"LLT": "symmetric positive definite", "LDLT": "symmetric and non-singular", "LU": "non-singular"}
