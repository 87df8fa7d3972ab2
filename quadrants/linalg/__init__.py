"""`qd.linalg`: sparse matrices and the host-side solvers that use them, as in Quadrants.

- `SparseMatrixBuilder` (sparse_matrix.py): triplets added by kernels (`A[i, j] += x` on a parameter annotated
  `qd.types.sparse_matrix_builder()`; frontend/sparse_builders.py), then `build()` sums them into a matrix.
- `SparseMatrix`: `+`, `-`, `*` (a scalar, or element-wise), `@` (a matrix, an ndarray, a field or a numpy
  vector), `transpose()`, `A[i, j]`, `shape`, printing, `build_from_ndarray`, `mmwrite`.
- `SparseSolver` (sparse_solver.py): direct LLT / LDLT / LU solvers with AMD / COLAMD orderings.
- `SparseCG` (sparse_cg.py): conjugate gradients on a sparse matrix.
- `LinearOperator`, `MatrixFreeCG`, `MatrixFreeBICGSTAB` (matrixfree.py): Krylov solvers over fields whose
  operator is a kernel.

The matrices and factorizations are SciPy's (`pip install quadrants-fastcache[linalg]`): Quadrants does this
on the host with Eigen, and SciPy's sparse formats and SuperLU are the same kind of tool for Python. SciPy is
imported when a matrix is first built, so `import quadrants` never loads it.
"""

from quadrants.linalg.matrixfree import LinearOperator, MatrixFreeBICGSTAB, MatrixFreeCG
from quadrants.linalg.sparse_cg import SparseCG
from quadrants.linalg.sparse_matrix import SparseMatrix, SparseMatrixBuilder
from quadrants.linalg.sparse_solver import SparseSolver

__all__ = ["LinearOperator", "MatrixFreeBICGSTAB", "MatrixFreeCG", "SparseCG", "SparseMatrix", "SparseMatrixBuilder", "SparseSolver"]
