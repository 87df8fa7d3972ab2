"""Vector and matrix types: `qd.types.vector(n, dt)`, `qd.types.matrix(n, m, dt)`, `qd.math.vec3`, ...

A `MatrixType` is an immutable, hashable value. Its element dtype may be a concrete dtype or one of the Python
types `float` / `int`, meaning "the default float / int type of the program" (so `qd.math.vec3` follows
`default_fp`). Calling a type builds a value: inside a kernel, the frontend handles the call; in Python scope it
returns a `qd.Vector` / `qd.Matrix` object.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from quadrants.types import python_values
from quadrants.types.dtypes import PrimitiveType, default_uint, to_dtype


class Shaped:
    """`n`, `m` and `is_vector` of a vector (`shape == (n,)`) or matrix (`(n, m)`): its type or its value."""

    __slots__ = ()
    shape: tuple[int, ...]

    @property
    def is_vector(self) -> bool:
        return len(self.shape) == 1

    @property
    def n(self) -> int:
        return self.shape[0]

    @property
    def m(self) -> int:
        return self.shape[1] if len(self.shape) == 2 else 1


class MatrixType(Shaped):
    """A fixed-shape vector (`shape == (n,)`) or matrix (`shape == (n, m)`) of one scalar dtype."""

    __slots__ = ("shape", "dtype")

    shape: tuple[int, ...]
    dtype: Any  # PrimitiveType, or the Python type float / int (the program's defaults)

    def __init__(self, shape: tuple[int, ...], dtype: Any) -> None:
        if not 1 <= len(shape) <= 2 or any(int(s) < 1 for s in shape):
            raise ValueError(f"vector/matrix shape must be (n,) or (n, m) with positive sizes, got {shape}")
        quant = getattr(dtype, "__qd_quant__", False)  # a quantized field's element (lang/bitpacked.py)
        if dtype not in (float, int, default_uint) and not isinstance(dtype, PrimitiveType) and not quant:
            dtype = to_dtype(dtype)
        object.__setattr__(self, "shape", tuple(int(s) for s in shape))
        object.__setattr__(self, "dtype", dtype)

    def __setattr__(self, key: str, value: Any) -> None:
        raise AttributeError("types are immutable")

    def __eq__(self, other: object) -> bool:
        return isinstance(other, MatrixType) and (self.shape, self.dtype) == (other.shape, other.dtype)

    def __hash__(self) -> int:
        return hash(("matrix", self.shape, self.dtype))

    def __repr__(self) -> str:
        dt = self.dtype.__name__ if isinstance(self.dtype, type) else repr(self.dtype)
        if self.is_vector:
            return f"vector({self.n}, {dt})"
        return f"matrix({self.n}, {self.m}, {dt})"

    @property
    def element_dtype(self) -> Any:
        return self.dtype

    def field(self, shape: Any = None, **kwargs: Any) -> Any:
        """`qd.types.matrix(2, 2, qd.f32).field(shape)`: a field of this element type (no shape: placed later in
        an SNode tree), as `qd.field(this, shape)`."""
        return python_values.make_field(self, shape, **kwargs)

    @property
    def size(self) -> int:
        return self.n * self.m

    def resolve(self, default_ip: PrimitiveType, default_fp: PrimitiveType) -> PrimitiveType:
        """The concrete element dtype under the program's defaults."""
        return to_dtype(self.dtype, default_ip, default_fp)

    def __call__(self, *args: Any) -> Any:
        return python_values.construct_matrix(self, args)


def vector(n: int | None = None, dtype: Any = float, unpacked: bool = False) -> Any:
    """`qd.types.vector(3, qd.f32)`; `unpacked=True`: only as a `@qd.dataclass` member, stored as `n` scalar
    members `_name0 ..` (types/struct.py) that `obj.name[i]` (i known at compile time) reads and writes.
    `qd.types.vector()` (no size): vectors of any size, as an ndarray annotation's element (`AnyShape`)."""
    if n is None:
        return AnyShape(1, None if dtype is float else dtype)
    return UnpackedVectorType((n,), dtype) if unpacked else MatrixType((n,), dtype)


@dataclasses.dataclass(frozen=True, slots=True)
class AnyShape:
    """`qd.types.vector()` / `qd.types.matrix()`: the element of `NDArray[qd.types.vector(), 1]`, vectors
    (`element_dim` 1) or matrices (2) of whatever size and dtype (if `dtype` is None) the array has; the kernel
    specializes on them, as `qd.types.ndarray(element_dim=...)` does."""

    element_dim: int
    dtype: Any = None  # a PrimitiveType, or None: the array's own

    def __post_init__(self) -> None:
        if self.dtype is not None:
            object.__setattr__(self, "dtype", to_dtype(self.dtype))

    def __repr__(self) -> str:
        dt = "" if self.dtype is None else f"dtype={self.dtype}"
        return f"{'vector' if self.element_dim == 1 else 'matrix'}({dt})"

    def __call__(self, *args: Any) -> Any:
        raise TypeError(f"qd.types.{self!r} has no size: it builds no value (it is an ndarray element annotation)")


class UnpackedVectorType(MatrixType):
    """`qd.types.vector(n, dtype, unpacked=True)`: a member layout of a `@qd.dataclass`, not a value type."""

    __slots__ = ()

    def _refuse(self, what: str) -> Any:
        from quadrants.errors import QuadrantsSyntaxError

        raise QuadrantsSyntaxError(f"{what} of qd.types.vector(..., unpacked=True): an unpacked vector is only a "
                                   "member annotation of a @qd.dataclass (its components become scalar members)")  # fmt: skip

    def __call__(self, *args: Any) -> Any:
        return self._refuse("a value")

    def field(self, *args: Any, **kwargs: Any) -> Any:
        return self._refuse("a field")

    def ndarray(self, *args: Any, **kwargs: Any) -> Any:
        return self._refuse("an ndarray")

    def __repr__(self) -> str:
        return super().__repr__()[:-1] + ", unpacked=True)"


def matrix(n: int | None = None, m: int | None = None, dtype: Any = float) -> Any:
    """`qd.types.matrix(3, 3, qd.f32)`; `qd.types.matrix()` (no size): matrices of any size (`AnyShape`)."""
    if n is None or m is None:
        if (n, m) != (None, None):
            raise TypeError("qd.types.matrix takes both sizes (n, m) or neither")
        return AnyShape(2, None if dtype is float else dtype)
    return MatrixType((n, m), dtype)


def is_matrix_type(obj: Any) -> bool:
    return isinstance(obj, MatrixType)


def tensor_text(dtype: PrimitiveType, elem_shape: tuple[int, ...]) -> str:
    """An element type as Quadrants' messages write it: `i32`, `[Tensor (3) i32]`, `[Tensor (2, 2) f32]`."""
    if not elem_shape:
        return str(dtype)
    return f"[Tensor ({', '.join(map(str, elem_shape))}) {dtype}]"


def element_type_text(dtype: PrimitiveType, elem_shape: tuple[int, ...]) -> str:
    """A vector/matrix element type as Quadrants names it: `VectorType[3, f32]`, `MatrixType[2,2, i32]`."""
    if len(elem_shape) == 1:
        return f"VectorType[{elem_shape[0]}, {dtype}]"
    return f"MatrixType[{elem_shape[0]},{elem_shape[1]}, {dtype}]"


def element_dim_mismatch(name: str, element_dim: int, got: PrimitiveType, got_shape: tuple[int, ...]) -> str | None:
    """Why an ndarray of `got_shape` elements is not one of the vectors (`element_dim` 1) or matrices (2) of any
    size that `qd.types.ndarray(element_dim=...)` takes, as Quadrants words it; None when it is."""
    if len(got_shape) == element_dim:
        return None
    return (f"Invalid value for argument {name} - required element_dim={element_dim}, but "
            f"{tensor_text(got, got_shape)} is provided")  # fmt: skip


def element_mismatch(
    name: str, want: PrimitiveType, want_shape: tuple[int, ...], got: PrimitiveType, got_shape: tuple[int, ...]
) -> tuple[type[Exception], str] | None:
    """Why an ndarray of `got` elements (shape `got_shape`) does not fit a parameter annotated with `want`
    elements, as Quadrants words it: (TypeError, ...) against a scalar annotation, (ValueError, ...) against a
    vector/matrix one; None when it fits."""
    if got is want and got_shape == want_shape:
        return None
    got_text = tensor_text(got, got_shape)
    if not want_shape:
        return TypeError, f"Expect element type {want} for argument {name}, but get {got_text}"
    want_text = element_type_text(want, want_shape)
    return ValueError, f"Invalid value for argument {name} - required element type: {want_text}, but {got_text} is provided"


# ---- swizzles: `v.xy`, `v.rgb`, `v.stp` (one definition for Python scope and kernels) ----------------------

SWIZZLE_SETS = ("xyzw", "rgba", "stpq")


def is_swizzle(attr: str) -> bool:
    """Whether `attr` names components of a vector: 1 to 4 letters of one of xyzw / rgba / stpq."""
    return 1 <= len(attr) <= 4 and any(all(c in s for c in attr) for s in SWIZZLE_SETS)


def swizzle_indices(attr: str, n: int) -> list[int]:
    """The component indices a swizzle `attr` selects from a vector of `n` elements; ValueError with Quadrants'
    words (`vec2 only has attributes=('x', 'y'), got=('z',)`) when one is beyond it."""
    letters = next(s for s in SWIZZLE_SETS if all(c in s for c in attr))
    idx = [letters.index(c) for c in attr]
    if max(idx) >= n:
        raise ValueError(f"vec{n} only has attributes={tuple(letters[:n])}, got={tuple(attr)}")
    return idx
