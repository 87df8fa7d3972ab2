"""Parameter annotations users write on kernels and funcs: `NDArray[f32, 1]`, `qd.template()`.

Produces immutable, hashable annotation values; the frontend and the launcher read them.
"""

from __future__ import annotations

from typing import Any

from quadrants.types.compound import AnyShape, MatrixType
from quadrants.types.dtypes import PrimitiveType, to_dtype


class NdarrayType:
    """An ndarray parameter: element dtype and number of dimensions, either of which may be left open
    (`NDArray` alone, or `ndarray(ndim=2)`), in which case the kernel specializes on what it is given."""

    __slots__ = ("dtype", "ndim", "boundary", "element_dim", "needs_grad")

    dtype: Any  # PrimitiveType, a vector/matrix element type, or None (any)
    ndim: int | None
    element_dim: int | None  # 1 / 2: elements are vectors / matrices of any size (of `dtype` if given)
    boundary: str  # "unsafe", or "clamp": indices are clamped into the array (and its elements), as in Quadrants

    def __init__(self, dtype: Any = None, ndim: int | None = None, element_shape: Any = None,
                 boundary: str = "unsafe", field_dim: Any = None, element_dim: Any = None,
                 needs_grad: Any = None) -> None:  # fmt: skip
        """As Quadrants' `qd.types.ndarray(...)`: `element_shape=(3,)` makes the elements vectors of `dtype`;
        `element_dim=1` / `2` makes them vectors / matrices whose size the kernel specializes on (0: scalars);
        `field_dim` is refused as Quadrants refuses it; `needs_grad=False` passes no grad pointer, so the
        adjoint treats the argument as data without a gradient even if it has one."""
        if field_dim is not None:
            raise ValueError("The field_dim argument for ndarray type is already deprecated. Please use ndim instead.")
        if isinstance(dtype, AnyShape):  # `NDArray[qd.types.vector(), 1]`: vectors of any size
            if element_dim is not None and element_dim != dtype.element_dim:
                raise ValueError(f"{dtype!r} elements have element_dim={dtype.element_dim}, not {element_dim}")
            dtype, element_dim = dtype.dtype, dtype.element_dim
        if element_dim is not None:
            if element_dim not in (0, 1, 2):
                raise ValueError(f"Only scalars, vectors, and matrices are allowed as elements of ndarray, "
                                 f"got element_dim={element_dim}")  # fmt: skip
            if element_shape is not None and len(element_shape) != element_dim:
                raise ValueError(f"Both element_shape and element_dim are specified, but shape doesn't match "
                                 f"specified dim: {len(element_shape)}!={element_dim}")  # fmt: skip
            if element_shape is not None or element_dim == 0:
                element_dim = None  # the shape says it all
        if element_dim is not None and hasattr(dtype, "element_dtype"):
            raise TypeError("give either a vector/matrix dtype or element_dim, not both")
        if element_shape is not None and tuple(element_shape):
            if hasattr(dtype, "element_dtype"):
                raise TypeError("give either a vector/matrix dtype or element_shape, not both")
            dtype = MatrixType(tuple(element_shape), float if dtype is None else dtype)
        if dtype is not None and not hasattr(dtype, "element_dtype"):
            dtype = to_dtype(dtype)
        if boundary not in ("unsafe", "clamp"):
            raise ValueError(f"ndarray boundary must be 'unsafe' or 'clamp', got {boundary!r}")
        object.__setattr__(self, "dtype", dtype)
        object.__setattr__(self, "ndim", ndim)
        object.__setattr__(self, "boundary", boundary)
        object.__setattr__(self, "element_dim", element_dim)
        object.__setattr__(self, "needs_grad", needs_grad)

    def __class_getitem__(cls, params: Any) -> NdarrayType:
        if not isinstance(params, tuple):
            params = (params,)
        if len(params) > 2:
            raise TypeError("NDArray[dtype, ndim] takes at most two parameters")
        return cls(*params)

    def __setattr__(self, key: str, value: Any) -> None:
        raise AttributeError("annotation types are immutable")

    def __eq__(self, other: object) -> bool:
        return isinstance(other, NdarrayType) and (self.dtype, self.ndim, self.boundary, self.element_dim) == (
            other.dtype, other.ndim, other.boundary, other.element_dim)  # fmt: skip

    def __hash__(self) -> int:
        return hash(("ndarray", self.dtype, self.ndim, self.boundary, self.element_dim))

    def __repr__(self) -> str:
        dt = "Any" if self.dtype is None else repr(self.dtype)
        nd = "Any" if self.ndim is None else str(self.ndim)
        clamp = ", boundary='clamp'" if self.boundary == "clamp" else ""
        edim = f", element_dim={self.element_dim}" if self.element_dim is not None else ""
        return f"NDArray[{dt}, {nd}{edim}{clamp}]"

    @property
    def is_complete(self) -> bool:
        return self.dtype is not None and self.ndim is not None


# `qd.types.ndarray(dtype=qd.f32, ndim=1)` and `NDArray[qd.f32, 1]` (and `qd.types.ndarray[qd.f32, 1]`) are
# the same class, as in Quadrants.
NDArray = ndarray = NdarrayType


class Template:
    """A parameter specialized by value: the kernel is compiled once per distinct argument value, which is
    baked into the code. Used as `qd.Template` or `qd.template()`."""

    __slots__ = ()

    def __init__(self, *_args: Any, **_kwargs: Any) -> None:
        pass

    def __repr__(self) -> str:
        return "Template"


template = Template


class RefType:
    """`qd.ref(dtype)`: a real function's parameter passed by reference (a local variable or an element of the
    caller's): assigning it writes the caller's location. A `qd.func` takes it by value, as Quadrants 1.3.3 does
    (its writes stay local)."""

    __slots__ = ("dtype",)

    dtype: PrimitiveType

    def __init__(self, dtype: Any) -> None:
        object.__setattr__(self, "dtype", to_dtype(dtype))

    def __setattr__(self, key: str, value: Any) -> None:
        raise AttributeError("annotation types are immutable")

    def __eq__(self, other: object) -> bool:
        return isinstance(other, RefType) and self.dtype is other.dtype

    def __hash__(self) -> int:
        return hash(("ref", self.dtype))

    def __repr__(self) -> str:
        return f"ref({self.dtype})"


def ref(dtype: Any) -> RefType:
    """`qd.ref(qd.f32)`: a by-reference scalar parameter of a real function."""
    return RefType(dtype)


class BufferViewType:
    """`BufferView[qd.f32]` (`qd.BufferView`, runtime/buffer_view.py): a parameter taking a window of a 1-D ndarray
    whose element type is `dtype` (a scalar dtype or a vector/matrix type), or any (None: plain `BufferView`)."""

    __slots__ = ("dtype",)

    dtype: Any

    def __init__(self, dtype: Any = None) -> None:
        if dtype is not None and not hasattr(dtype, "element_dtype"):
            dtype = to_dtype(dtype)
        object.__setattr__(self, "dtype", dtype)

    def __setattr__(self, key: str, value: Any) -> None:
        raise AttributeError("annotation types are immutable")

    def __eq__(self, other: object) -> bool:
        return isinstance(other, BufferViewType) and self.dtype == other.dtype

    def __hash__(self) -> int:
        return hash(("buffer_view", self.dtype))

    def __repr__(self) -> str:
        return f"BufferView[{'Any' if self.dtype is None else repr(self.dtype)}]"


def is_buffer_view_annotation(annotation: Any) -> bool:
    """`BufferView[dtype]`, or the `BufferView` class itself (any element type)."""
    return isinstance(annotation, BufferViewType) or getattr(annotation, "__qd_buffer_view__", False) is True


class SparseMatrixBuilderType:
    """`qd.types.sparse_matrix_builder()`: a parameter taking a `qd.linalg.SparseMatrixBuilder`, whose
    `A[i, j] += x` in the kernel adds a triplet."""

    __slots__ = ()

    def __init__(self, *_args: Any, **_kwargs: Any) -> None:  # Quadrants' takes no arguments that matter
        pass

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SparseMatrixBuilderType)

    def __hash__(self) -> int:
        return hash("sparse_matrix_builder")

    def __repr__(self) -> str:
        return "sparse_matrix_builder()"


sparse_matrix_builder = SparseMatrixBuilderType


def is_sparse_builder_annotation(annotation: Any) -> bool:
    return isinstance(annotation, SparseMatrixBuilderType) or annotation is SparseMatrixBuilderType


def normalize(annotation: Any) -> Any:
    """Bare classes used as annotations mean their open form: `NDArray` is `NDArray[Any, Any]`."""
    if annotation is NdarrayType:
        return NdarrayType()
    return annotation


def is_template(annotation: Any) -> bool:
    return annotation is Template or isinstance(annotation, Template)


def is_scalar_annotation(annotation: Any) -> bool:
    return isinstance(annotation, PrimitiveType) or annotation in (int, float, bool)


def resolve(annotation: Any, globalns: dict[str, Any], localns: dict[str, Any] | None = None) -> Any:
    """Evaluate a string annotation (`from __future__ import annotations`) in the function's namespace."""
    if isinstance(annotation, str):
        return eval(annotation, globalns, localns or {})  # noqa: S307 - the user's own annotation
    return annotation


def return_annotation(hints: dict[str, Any]) -> Any:
    """A function's `->` annotation from its `__annotations__`; None when it has none or declares `-> None`
    (also written as the string "None", as a module with `from __future__ import annotations` keeps it)."""
    a = hints.get("return")
    return None if a is None or a == "None" or a is type(None) else a


def return_types(annotation: Any, default_ip: PrimitiveType, default_fp: PrimitiveType) -> tuple[Any, ...]:
    """The types a kernel returns, from its `->` annotation (a dtype, a vector/matrix or struct type,
    `tuple[...]`, a tuple, or None)."""
    import typing

    if annotation is None or annotation is type(None) or annotation is inspect_empty():
        return ()
    if isinstance(annotation, tuple):
        return tuple(return_types(a, default_ip, default_fp)[0] for a in annotation)
    origin = typing.get_origin(annotation)
    if origin is tuple:
        return tuple(return_types(a, default_ip, default_fp)[0] for a in typing.get_args(annotation))
    from quadrants.types.struct import StructType

    if hasattr(annotation, "element_dtype") or isinstance(annotation, StructType):
        return (annotation,)
    return (to_dtype(annotation, default_ip, default_fp),)


def inspect_empty() -> Any:
    import inspect

    return inspect.Signature.empty
