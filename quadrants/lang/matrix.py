"""`qd.Vector` and `qd.Matrix` in Python scope: small numpy-backed values, plus the vector/matrix ndarray, field
and tensor factories (`qd.Vector.ndarray(3, qd.f32, shape)`, `qd.Matrix.field(2, 2, qd.f32, shape)`, ...).

Inside kernels the same names are handled by the frontend (their `__qd_intrinsic__`): `qd.Vector([...])` builds
an in-register vector there.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from quadrants.types import python_values
from quadrants.types.compound import MatrixType, is_swizzle, swizzle_indices


def _intrinsic(name: str) -> Any:
    def mark(fn: Any) -> Any:
        fn.__qd_intrinsic__ = name
        return fn

    return mark


def _generate_swizzle_patterns(key_group: str, required_length: int = 4) -> list[str]:
    """Every swizzle spelled with the letters of `key_group` ("xyzw", "rgba" or "stpq"), of 1 to `required_length`
    letters, repeats allowed, shortest first (what Quadrants' helper of that name lists: 340 for four letters)."""
    from itertools import product

    return ["".join(p) for k in range(1, required_length + 1) for p in product(key_group, repeat=k)]


def _np_dtype(dt: Any) -> Any:
    if dt is None:
        return None
    from quadrants.lang.program import resolve_dtype

    return resolve_dtype(dt).np_dtype


class Matrix:
    """A vector or matrix value in Python scope (what kernels return for vector/matrix results)."""

    __qd_intrinsic__ = "Matrix"
    __array_priority__ = 100

    def __init__(self, data: Any, dt: Any = None) -> None:
        arr = np.array(data.to_numpy() if isinstance(data, Matrix) else data, dtype=_np_dtype(dt))
        if arr.ndim not in (1, 2):
            raise ValueError(f"a vector or matrix needs 1 or 2 dimensions, got shape {arr.shape}")
        if arr.dtype.kind not in "biuf":
            raise TypeError(f"vector/matrix elements must be numbers, got {arr.dtype}")
        self._arr = arr

    @classmethod
    def _wrap(cls, arr: np.ndarray) -> Matrix:
        out = object.__new__(Vector if arr.ndim == 1 else Matrix)
        out._arr = arr
        return out

    # -- kernel interop --
    def __qd_matrix__(self) -> tuple[tuple[int, ...], list[Any]]:
        return tuple(self._arr.shape), [x.item() for x in self._arr.reshape(-1)]

    # -- numpy-like surface --
    def to_list(self) -> list[Any]:
        """The elements as Python numbers: a list for a vector, a list of rows for a matrix (Quadrants')."""
        return self._arr.tolist()  # type: ignore[no-any-return]

    def to_numpy(self) -> np.ndarray:
        return self._arr.copy()

    @property
    def entries(self) -> np.ndarray:
        """The elements themselves (a numpy array; writing it writes the value), as Quadrants exposes them."""
        return self._arr

    def copy(self) -> Matrix:
        return Matrix._wrap(self._arr.copy())

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        return self._arr if dtype is None else self._arr.astype(dtype)

    @property
    def n(self) -> int:
        return int(self._arr.shape[0])

    @property
    def m(self) -> int:
        return int(self._arr.shape[1]) if self._arr.ndim == 2 else 1

    def get_shape(self) -> tuple[int, ...]:
        return tuple(self._arr.shape)

    def __len__(self) -> int:
        return len(self._arr)

    def __iter__(self) -> Any:
        for x in self._arr:
            yield x.item() if isinstance(x, np.generic) else Matrix._wrap(x)

    def __getitem__(self, index: Any) -> Any:
        v = self._arr[index]
        return v.item() if isinstance(v, np.generic) else Matrix._wrap(v)

    def __setitem__(self, index: Any, value: Any) -> None:
        self._arr[index] = value

    def fill(self, val: Any) -> None:
        """Every element set to `val`, in place (a field element's: the field's memory, as its `[i] =` writes)."""
        self._arr[...] = val

    def __repr__(self) -> str:
        return repr(self._arr).replace("array", type(self).__name__)

    def __str__(self) -> str:
        return str(self._arr)

    def __eq__(self, other: Any) -> Any:  # type: ignore[override]
        return Matrix._wrap(self._arr == np.asarray(other))

    def all(self) -> bool:
        """Whether every element is non-zero (`(v == w).all()`, as in Quadrants)."""
        return bool(np.all(self._arr))

    def any(self) -> bool:
        return bool(np.any(self._arr))

    def __bool__(self) -> bool:
        """`assert v == [1.0, 2.0]`: true when every element is (real Quadrants answers True for any vector)."""
        return self.all()

    __hash__ = None  # type: ignore[assignment]

    def _op(self, other: Any, fn: Any) -> Matrix:
        return Matrix._wrap(fn(self._arr, np.asarray(other)))

    def __add__(self, o: Any) -> Matrix:
        return self._op(o, np.add)

    def __radd__(self, o: Any) -> Matrix:
        return Matrix._wrap(np.asarray(o) + self._arr)

    def __sub__(self, o: Any) -> Matrix:
        return self._op(o, np.subtract)

    def __rsub__(self, o: Any) -> Matrix:
        return Matrix._wrap(np.asarray(o) - self._arr)

    def __mul__(self, o: Any) -> Matrix:
        return self._op(o, np.multiply)

    def __rmul__(self, o: Any) -> Matrix:
        return Matrix._wrap(np.asarray(o) * self._arr)

    def __truediv__(self, o: Any) -> Matrix:
        return self._op(o, np.true_divide)

    def __neg__(self) -> Matrix:
        return Matrix._wrap(-self._arr)

    def __invert__(self) -> Matrix:
        """`~v`: bitwise not of each (integer) element, as in kernels (a float vector raises numpy's TypeError)."""
        return Matrix._wrap(~self._arr)

    def __ne__(self, other: Any) -> Any:  # type: ignore[override]
        return Matrix._wrap(self._arr != np.asarray(other))

    def __lt__(self, o: Any) -> Matrix:
        return self._op(o, np.less)

    def __le__(self, o: Any) -> Matrix:
        return self._op(o, np.less_equal)

    def __gt__(self, o: Any) -> Matrix:
        return self._op(o, np.greater)

    def __ge__(self, o: Any) -> Matrix:
        return self._op(o, np.greater_equal)

    # Python's floor `//` and `%`, shifts and bit operations, element-wise as numpy computes them (`m //= n`
    # and the other in-place forms fall back to these and rebind the name, as with Quadrants' matrices).
    def __floordiv__(self, o: Any) -> Matrix:
        return self._op(o, np.floor_divide)

    def __mod__(self, o: Any) -> Matrix:
        return self._op(o, np.mod)

    def __pow__(self, o: Any) -> Matrix:
        return self._op(o, np.power)

    def __lshift__(self, o: Any) -> Matrix:
        return self._op(o, np.left_shift)

    def __rshift__(self, o: Any) -> Matrix:
        return self._op(o, np.right_shift)

    def __and__(self, o: Any) -> Matrix:
        return self._op(o, np.bitwise_and)

    def __or__(self, o: Any) -> Matrix:
        return self._op(o, np.bitwise_or)

    def __xor__(self, o: Any) -> Matrix:
        return self._op(o, np.bitwise_xor)

    def __abs__(self) -> Matrix:
        return Matrix._wrap(np.abs(self._arr))

    def __matmul__(self, o: Any) -> Any:
        r = self._arr @ np.asarray(o)
        return r.item() if isinstance(r, np.generic) or np.ndim(r) == 0 else Matrix._wrap(r)

    # -- linear algebra (Python scope) --
    def dot(self, o: Any) -> Any:
        return float(np.dot(self._arr.reshape(-1), np.asarray(o).reshape(-1)))

    def norm(self) -> float:
        return float(np.linalg.norm(self._arr))

    def norm_sqr(self) -> Any:
        return (self._arr * self._arr).sum().item()

    def norm_inv(self, eps: float = 0.0) -> float:
        """1 / sqrt(norm_sqr + eps)."""
        return float(1.0 / np.sqrt(self.norm_sqr() + eps))

    def sum(self) -> Any:
        """The sum of every element."""
        return self._arr.sum().item()

    def max(self) -> Any:
        """The largest element."""
        return self._arr.max().item()

    def min(self) -> Any:
        """The smallest element."""
        return self._arr.min().item()

    def outer_product(self, o: Any) -> Matrix:
        """`self` (a vector) times `o` (a vector) transposed: a len(self) x len(o) matrix."""
        a, b = self._arr, np.asarray(o)
        if a.ndim != 1 or b.ndim != 1:
            raise ValueError("outer_product takes two vectors")
        return Matrix._wrap(np.outer(a, b))

    def frobenius_inner(self, o: Any) -> Any:
        """The sum of the element-wise products (two matrices or vectors of one shape)."""
        b = np.asarray(o)
        if b.shape != self._arr.shape:
            raise ValueError(f"frobenius_inner: shapes {self._arr.shape} and {b.shape} differ")
        return (self._arr * b).sum().item()

    def cast(self, dtype: Any) -> Matrix:
        """Every element converted to `dtype` (toward zero for an integer type, as a kernel's cast)."""
        return Matrix._wrap(self._arr.astype(_np_dtype(dtype)))

    def normalized(self) -> Matrix:
        return Matrix._wrap(self._arr / np.linalg.norm(self._arr))

    def transpose(self) -> Matrix:
        return Matrix._wrap(self._arr.T.copy())

    def determinant(self) -> float:
        return float(np.linalg.det(self._arr))

    def trace(self) -> Any:
        """The sum of the diagonal of a square matrix (QuadrantsCompilationError otherwise, as in Quadrants)."""
        if self._arr.ndim != 2 or self._arr.shape[0] != self._arr.shape[1]:
            from quadrants.errors import QuadrantsCompilationError

            raise QuadrantsCompilationError(f"trace: expected a square matrix, got shape {self._arr.shape}")
        return np.trace(self._arr).item()

    def inverse(self) -> Matrix:
        return Matrix._wrap(np.linalg.inv(self._arr))

    def cross(self, o: Any) -> Any:
        r = np.cross(self._arr, np.asarray(o))
        return r.item() if np.ndim(r) == 0 else Matrix._wrap(r)

    # -- constructors usable in both scopes --
    @staticmethod
    @_intrinsic("Matrix.zero")
    def zero(dt: Any, n: int, m: int | None = None) -> Matrix:
        return Matrix(np.zeros((n,) if m is None else (n, m)), dt)

    @staticmethod
    @_intrinsic("Matrix.one")
    def one(dt: Any, n: int, m: int | None = None) -> Matrix:
        return Matrix(np.ones((n,) if m is None else (n, m)), dt)

    @staticmethod
    @_intrinsic("Matrix.identity")
    def identity(dt: Any, n: int) -> Matrix:
        return Matrix(np.eye(n), dt)

    @staticmethod
    @_intrinsic("Matrix.diag")
    def diag(dim: int, val: Any) -> Matrix:
        return Matrix(np.eye(dim) * val)

    @staticmethod
    @_intrinsic("Matrix.unit")
    def unit(n: int, i: int, dt: Any = None) -> Matrix:
        if not 0 <= i < n:
            raise IndexError(f"unit vector index {i} is out of range for a {n}-vector")
        return Vector(np.eye(n)[i], dt if dt is not None else int)

    @staticmethod
    @_intrinsic("Matrix.rows")
    def rows(rows: Any) -> Matrix:
        return Matrix([list(np.asarray(r).reshape(-1)) for r in rows])

    @staticmethod
    @_intrinsic("Matrix.cols")
    def cols(cols: Any) -> Matrix:
        return Matrix(np.array([np.asarray(c).reshape(-1) for c in cols]).T)

    # -- containers of matrices --
    @staticmethod
    def ndarray(n: int, m: int, dtype: Any, shape: Any, needs_grad: bool = False) -> Any:
        from quadrants.lang.tensor import ndarray

        return ndarray(MatrixType((n, m), dtype), shape, needs_grad)

    @staticmethod
    def field(n: int, m: int, dtype: Any, shape: Any = None, **kw: Any) -> Any:
        from quadrants.lang.field import field

        if isinstance(dtype, (list, tuple)):  # a type per component (lang/component_fields.py)
            from quadrants.lang.component_fields import matrix_field

            return matrix_field((n, m), dtype, shape, **kw)
        return field(MatrixType((n, m), dtype), shape, **kw)

    @staticmethod
    def tensor(n: int, m: int, dtype: Any, shape: Any, **kw: Any) -> Any:
        from quadrants.lang.tensor import matrix_tensor

        return matrix_tensor(n, m, dtype, shape, **kw)


class Vector(Matrix):
    """A vector in Python scope: `qd.Vector([1, 2, 3])`."""

    __qd_intrinsic__ = "Vector"

    def __init__(self, data: Any, dt: Any = None) -> None:
        super().__init__(data, dt)
        if self._arr.ndim != 1:
            raise ValueError("qd.Vector takes a flat list of values")

    def _component(self, i: int) -> Any:
        return self._arr[i].item()

    def __getattr__(self, name: str) -> Any:
        """A swizzle: `v.x`, `v.xy`, `v.rgb`, `v.stp` (a number for one letter, else a vector)."""
        if not is_swizzle(name):
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        idx = _swizzle(name, len(self._arr))
        return self._component(idx[0]) if len(idx) == 1 else Vector(self._arr[idx].copy())

    def __setattr__(self, name: str, value: Any) -> None:
        """`v.xy = (1, 2)`, `v.rgb += 1`: writes the components the swizzle names."""
        if not is_swizzle(name):
            object.__setattr__(self, name, value)
            return
        idx = _swizzle(name, len(self._arr))
        values = np.asarray(value.to_numpy() if isinstance(value, Matrix) else value).reshape(-1)
        if len(idx) == 1 and values.size == 1:
            self.__setitem__(idx[0], values[0].item())
            return
        if values.size != len(idx):
            from quadrants.errors import QuadrantsRuntimeError

            raise QuadrantsRuntimeError(f"value len does not match the swizzle pattern={name}")
        for i, v in zip(idx, values):
            self.__setitem__(i, v.item())

    @staticmethod
    @_intrinsic("Vector.zero")
    def zero(dt: Any, n: int, m: int | None = None) -> Matrix:
        return Vector(np.zeros(n), dt)

    @staticmethod
    @_intrinsic("Vector.unit")
    def unit(n: int, i: int, dt: Any = None) -> Matrix:  # type: ignore[override]
        return Matrix.unit(n, i, dt)

    @staticmethod
    @_intrinsic("Vector.one")
    def one(dt: Any, n: int, m: int | None = None) -> Matrix:
        return Vector(np.ones(n), dt)

    @staticmethod
    def ndarray(n: int, dtype: Any, shape: Any, needs_grad: bool = False) -> Any:  # type: ignore[override]
        from quadrants.lang.tensor import ndarray

        return ndarray(MatrixType((n,), dtype), shape, needs_grad)

    @staticmethod
    def field(n: int, dtype: Any, shape: Any = None, **kw: Any) -> Any:  # type: ignore[override]
        from quadrants.lang.field import field

        if isinstance(dtype, (list, tuple)):  # a type per component (lang/component_fields.py)
            from quadrants.lang.component_fields import matrix_field

            return matrix_field((n,), dtype, shape, **kw)
        return field(MatrixType((n,), dtype), shape, **kw)

    @staticmethod
    def tensor(n: int, dtype: Any, shape: Any, **kw: Any) -> Any:  # type: ignore[override]
        from quadrants.lang.tensor import vector_tensor

        return vector_tensor(n, dtype, shape, **kw)


def construct(mtype: MatrixType, args: tuple[Any, ...]) -> Matrix:
    """`qd.math.vec3(1, 2, 3)` in Python scope: broadcast one value, or concatenate values and vectors."""
    from quadrants.lang.program import resolve_dtype

    flat: list[Any] = []
    for a in args:
        flat.extend(np.asarray(a).reshape(-1).tolist())
    if len(flat) == 1:
        flat = flat * mtype.size
    if len(flat) != mtype.size:
        raise ValueError(f"{mtype!r} needs {mtype.size} values, got {len(flat)}")
    arr = np.array(flat, dtype=resolve_dtype(mtype.dtype).np_dtype).reshape(mtype.shape)
    return Matrix._wrap(arr)


def _swizzle(name: str, n: int) -> list[int]:
    from quadrants.errors import QuadrantsSyntaxError

    try:
        return swizzle_indices(name, n)
    except ValueError as e:
        raise QuadrantsSyntaxError(str(e)) from None


python_values.register_matrix(Matrix._wrap, construct)  # the rooms below lang hand out vectors through this
