"""`qd.linalg.SparseMatrixBuilder` and `qd.linalg.SparseMatrix`, as in Quadrants (CPU: host memory).

A builder owns four ndarrays that a kernel parameter annotated `qd.types.sparse_matrix_builder()` receives
(lang/args.py): the rows, columns and values of up to `max_num_triplets` triplets, and the count of triplets
added (frontend/sparse_builders.py appends with an atomic counter). `build()` sums the triplets of each entry
into a `SparseMatrix` (column-major storage is SciPy's CSC, row-major its CSR). More triplets than
`max_num_triplets` is an error at `build()` (Quadrants writes past its buffer), naming both numbers.
"""

from __future__ import annotations

import numbers
import warnings
from typing import Any

import numpy as np

from quadrants.errors import QuadrantsRuntimeError
from quadrants.linalg import _scipy
from quadrants.runtime.ndarray import Ndarray
from quadrants.types import dtypes
from quadrants.types.dtypes import PrimitiveType

_FORMATS = {"col_major": "csc", "row_major": "csr"}


def _real_dtype(dtype: Any) -> PrimitiveType:
    t = dtypes.to_dtype(dtype)
    if t not in (dtypes.f32, dtypes.f64):
        raise QuadrantsRuntimeError(f"sparse matrices hold f32 or f64 values, not {t}")
    return t


def _format(storage_format: str) -> str:
    if storage_format not in _FORMATS:
        raise QuadrantsRuntimeError(f"storage_format must be 'col_major' or 'row_major', got {storage_format!r}")
    return _FORMATS[storage_format]


class SparseMatrix:
    """An n x m sparse matrix of f32 or f64 values."""

    def __init__(self, n: int | None = None, m: int | None = None, sm: Any = None, dtype: Any = dtypes.f32,
                 storage_format: str = "col_major") -> None:  # fmt: skip
        """`SparseMatrix(n, m, dtype=, storage_format=)` is an empty (all-zero) matrix; `sm` wraps a SciPy
        sparse matrix (what the operations return)."""
        self.dtype = _real_dtype(dtype)
        sp = _scipy.sparse()
        if sm is None:
            if n is None:
                raise QuadrantsRuntimeError("SparseMatrix needs its number of rows n (and columns m)")
            m = m if m else n
            self._format = _format(storage_format)
            sm = sp.coo_matrix((n, m), dtype=self.dtype.np_dtype).asformat(self._format)
        else:
            self._format = sm.format if sm.format in ("csr", "csc") else "csc"
            sm = sm.asformat(self._format).astype(self.dtype.np_dtype)
            sm.sum_duplicates()
        self.matrix = sm

    @property
    def n(self) -> int:
        return int(self.matrix.shape[0])

    @property
    def m(self) -> int:
        return int(self.matrix.shape[1])

    @property
    def shape(self) -> tuple[int, int]:
        return (self.n, self.m)

    def _same_shape(self, other: SparseMatrix, what: str) -> None:
        if not isinstance(other, SparseMatrix):
            raise QuadrantsRuntimeError(f"sparse matrix {what} needs another SparseMatrix, got {type(other).__name__}")
        if self.shape != other.shape:
            raise QuadrantsRuntimeError(f"Dimension mismatch between sparse matrices {self.shape} and {other.shape}")

    def _wrap(self, sm: Any) -> SparseMatrix:
        return SparseMatrix(sm=sm.asformat(self._format), dtype=self.dtype)

    def __add__(self, other: SparseMatrix) -> SparseMatrix:
        self._same_shape(other, "addition")
        return self._wrap(self.matrix + other.matrix)

    def __sub__(self, other: SparseMatrix) -> SparseMatrix:
        self._same_shape(other, "subtraction")
        return self._wrap(self.matrix - other.matrix)

    def __iadd__(self, other: SparseMatrix) -> SparseMatrix:
        self._same_shape(other, "addition")
        self.matrix = (self.matrix + other.matrix).asformat(self._format).astype(self.dtype.np_dtype)
        return self

    def __isub__(self, other: SparseMatrix) -> SparseMatrix:
        self._same_shape(other, "subtraction")
        self.matrix = (self.matrix - other.matrix).asformat(self._format).astype(self.dtype.np_dtype)
        return self

    def __mul__(self, other: Any) -> SparseMatrix:
        """A scalar multiple, or the element-wise (Hadamard) product with another matrix."""
        if isinstance(other, SparseMatrix):
            self._same_shape(other, "element-wise multiplication")
            return self._wrap(self.matrix.multiply(other.matrix))
        if isinstance(other, numbers.Real) and not isinstance(other, bool):
            return self._wrap(self.matrix * float(other))
        return NotImplemented

    def __rmul__(self, other: Any) -> SparseMatrix:
        if isinstance(other, numbers.Real) and not isinstance(other, bool):
            return self._wrap(self.matrix * float(other))
        return NotImplemented

    def transpose(self) -> SparseMatrix:
        return self._wrap(self.matrix.transpose())

    @property
    def T(self) -> SparseMatrix:  # noqa: N802 - numpy's name
        return self.transpose()

    def __matmul__(self, other: Any) -> Any:
        """A matrix product (a SparseMatrix), or a matrix-vector product: an ndarray gives a new ndarray of its
        dtype, a field or a numpy vector a numpy array, as in Quadrants."""
        if isinstance(other, SparseMatrix):
            if self.m != other.n:
                raise QuadrantsRuntimeError(f"Dimension mismatch between sparse matrices {self.shape} and {other.shape}")
            return self._wrap(self.matrix @ other.matrix)
        if isinstance(other, Ndarray):
            x = self._vector(other.to_numpy(), other.shape)
            out = Ndarray(other.dtype, (self.n,))
            out.from_numpy((self.matrix @ x.astype(self.dtype.np_dtype)).astype(other.dtype.np_dtype))
            return out
        if getattr(other, "__qd_field__", None) is not None:
            return self.matrix @ self._vector(other.to_numpy(), other.shape).astype(self.dtype.np_dtype)
        if isinstance(other, np.ndarray):
            return self.matrix @ self._vector(other, other.shape)
        raise QuadrantsRuntimeError(
            f"Sparse matrix-matrix/vector multiplication does not support {type(other)} for now. Supported types "
            "are SparseMatrix, qd.ndarray, qd.field, and numpy ndarray."
        )

    def _vector(self, x: np.ndarray, shape: Any) -> np.ndarray:
        if x.ndim != 1 or x.shape[0] != self.m:
            raise QuadrantsRuntimeError(f"Dimension mismatch between sparse matrix {self.shape} and vector {tuple(shape)}")
        return x

    def __getitem__(self, indices: tuple[int, int]) -> float:
        i, j = self._entry(indices)
        return float(self.matrix[i, j])

    def __setitem__(self, indices: tuple[int, int], value: float) -> None:
        i, j = self._entry(indices)
        with warnings.catch_warnings():  # a new non-zero changes the structure: fine for one entry
            warnings.simplefilter("ignore", _scipy.sparse().SparseEfficiencyWarning)
            self.matrix[i, j] = value

    def _entry(self, indices: Any) -> tuple[int, int]:
        if not isinstance(indices, tuple) or len(indices) != 2:
            raise QuadrantsRuntimeError(f"a sparse matrix is indexed with two integers A[i, j], got {indices!r}")
        i, j = int(indices[0]), int(indices[1])
        if not (0 <= i < self.n and 0 <= j < self.m):
            raise QuadrantsRuntimeError(f"index ({i}, {j}) is out of the bounds of a {self.n} x {self.m} sparse matrix")
        return i, j

    def to_numpy(self) -> np.ndarray:
        """The matrix as a dense numpy array (of its dtype)."""
        return np.asarray(self.matrix.toarray())

    def __str__(self) -> str:
        """Rows `[a, b, ...]` of every entry to 4 significant digits, right-aligned to one width (Quadrants'
        layout, which is Eigen's)."""
        cells = [[f"{float(v):.4g}" for v in row] for row in self.to_numpy()]
        width = max((len(c) for row in cells for c in row), default=0)
        return "\n".join("[" + ", ".join(c.rjust(width) for c in row) + "]" for row in cells)

    __repr__ = __str__

    def build_from_ndarray(self, ndarray: Any) -> None:
        """Set the matrix to the triplets `(row, col, value)` held in an ndarray (any shape whose element count
        is a multiple of 3, read in order; entries named twice are summed)."""
        if not isinstance(ndarray, Ndarray):
            raise QuadrantsRuntimeError(
                "Sparse matrix only supports building from [qd.ndarray, qd.Vector.ndarray, qd.Matrix.ndarray]"
            )
        flat = ndarray.to_numpy().reshape(-1)
        if flat.size % 3 != 0:
            raise QuadrantsRuntimeError("The number of ndarray elements must have a length that is divisible by 3.")
        t = flat.reshape(-1, 3)
        self.matrix = _from_triplets(t[:, 0], t[:, 1], t[:, 2], self.shape, self.dtype, self._format)

    def mmwrite(self, filename: Any) -> None:
        """Write the matrix to a Matrix Market file."""
        import scipy.io

        scipy.io.mmwrite(filename, self.matrix)


def _from_triplets(rows: np.ndarray, cols: np.ndarray, vals: np.ndarray, shape: tuple[int, int],
                   dtype: PrimitiveType, fmt: str) -> Any:  # fmt: skip
    r, c = rows.astype(np.int64), cols.astype(np.int64)
    bad = (r < 0) | (r >= shape[0]) | (c < 0) | (c >= shape[1])
    if bad.any():
        k = int(np.argmax(bad))
        raise QuadrantsRuntimeError(f"triplet ({r[k]}, {c[k]}) is out of the bounds of a {shape[0]} x {shape[1]} "
                                    "sparse matrix")  # fmt: skip
    sm = _scipy.sparse().coo_matrix((vals.astype(dtype.np_dtype), (r, c)), shape=shape).asformat(fmt)
    sm.sum_duplicates()
    return sm


class SparseMatrixBuilder:
    """Collects the triplets kernels add (`A[i, j] += x`) for a `num_rows x num_cols` sparse matrix."""

    __qd_sparse_builder__ = True  # what the specializer and the frontend recognize it by

    def __init__(self, num_rows: int | None = None, num_cols: int | None = None, max_num_triplets: int = 0,
                 dtype: Any = dtypes.f32, storage_format: str = "col_major") -> None:  # fmt: skip
        if num_rows is None:
            raise QuadrantsRuntimeError("SparseMatrixBuilder needs num_rows (and num_cols)")
        self.num_rows = int(num_rows)
        self.num_cols = int(num_cols) if num_cols else self.num_rows
        self.dtype = _real_dtype(dtype)
        self.storage_format = storage_format
        self._fmt = _format(storage_format)
        self.max_num_triplets = int(max_num_triplets)
        if self.max_num_triplets < 0:
            raise QuadrantsRuntimeError(f"max_num_triplets must be >= 0, got {max_num_triplets}")
        cap = max(self.max_num_triplets, 1)  # an ndarray has at least one element; the counter says how many hold
        self._rows = Ndarray(dtypes.i32, (cap,))
        self._cols = Ndarray(dtypes.i32, (cap,))
        self._vals = Ndarray(self.dtype, (cap,))
        self._count = Ndarray(dtypes.i32, (1,))

    def _triplets(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        n = int(self._count.to_numpy()[0])
        if n > self.max_num_triplets:
            raise QuadrantsRuntimeError(
                f"{n} triplets were added to a SparseMatrixBuilder of max_num_triplets={self.max_num_triplets}; "
                "make max_num_triplets at least the number of `A[i, j] += x` updates"
            )
        return self._rows.to_numpy()[:n], self._cols.to_numpy()[:n], self._vals.to_numpy()[:n]

    def num_triplets(self) -> int:
        return int(self._count.to_numpy()[0])

    def print_triplets(self) -> None:
        """Print the triplets added so far, in the order they were added (Quadrants' format)."""
        rows, cols, vals = self._triplets()
        print(f"n={self.num_rows}, m={self.num_cols}, num_triplets={len(vals)} (max={self.max_num_triplets})")
        for i, j, v in zip(rows, cols, vals):
            text = str(v) if self.dtype is dtypes.f32 else repr(float(v))
            print(f"[{i}, {j}] = {text[:-2] if text.endswith('.0') else text}")

    def build(self, dtype: Any = None, _format: str = "CSR") -> SparseMatrix:
        """The matrix of the triplets added so far (triplets of one entry summed), of the builder's dtype (as in
        Quadrants, `dtype` does not change it). The triplets stay: more updates and another `build()` add to
        them."""
        rows, cols, vals = self._triplets()
        sm = _from_triplets(rows, cols, vals, (self.num_rows, self.num_cols), self.dtype, self._fmt)
        return SparseMatrix(sm=sm, dtype=self.dtype)
