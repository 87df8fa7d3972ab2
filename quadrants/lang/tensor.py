"""`qd.ndarray`, and `qd.tensor` / `qd.Tensor`: one API over ndarrays and fields, with per-tensor layouts.

`qd.tensor(dtype, shape, backend=qd.Backend.NDARRAY | FIELD, layout=None, needs_grad=False)` allocates either
and returns a `qd.Tensor` wrapper (`qd.Vector.tensor` / `qd.Matrix.tensor`: a `VectorTensor` / `MatrixTensor`);
`qd.wrap(impl)` wraps an existing one; `qd.Tensor` as a kernel parameter annotation accepts an ndarray, a field,
a wrapper of either, or None. `layout` is the canonical axis at each memory level, outermost first: the memory
is allocated in that order (runtime/host_views.py), kernels and every Python accessor keep canonical indices and
the canonical shape (frontend/ndarrays.py permutes kernel indices).
"""

from __future__ import annotations

import enum
from functools import cached_property
from typing import Any

from quadrants.lang import program
from quadrants.runtime import host_views, python_backend
from quadrants.runtime.ndarray import MatrixNdarray, Ndarray, VectorNdarray
from quadrants.types.compound import MatrixType
from quadrants.types.dtypes import PrimitiveType


def ndarray(dtype: Any, shape: Any, needs_grad: bool = False, *, layout: Any = None) -> Ndarray:
    """`qd.ndarray(dtype, shape)`: a zero-initialized ndarray. `dtype` may be a vector/matrix type; `needs_grad`
    allocates `.grad` beside it (with the same layout)."""
    if python_backend.active():  # a torch tensor (runtime/python_backend)
        from quadrants.lang.field import python_backend_tensor

        return python_backend_tensor(dtype, shape)  # type: ignore[no-any-return]
    if needs_grad:
        from quadrants.errors import QuadrantsRuntimeError
        from quadrants.lang.field import with_companions

        prim = program.resolve_dtype(dtype.dtype if isinstance(dtype, MatrixType) else dtype)
        if not prim.is_float:
            raise QuadrantsRuntimeError(f"{prim} is not supported for ndarray with `needs_grad=True` or "
                                        "`needs_dual=True`.")  # fmt: skip
        return with_companions(ndarray(dtype, shape, layout=layout), lambda: ndarray(dtype, shape, layout=layout),
                               needs_grad)  # fmt: skip
    if isinstance(dtype, MatrixType):
        elem = MatrixType(dtype.shape, program.resolve_dtype(dtype.dtype))
        return Ndarray(None, shape, element_type=elem, layout=layout)
    return Ndarray(program.resolve_dtype(dtype), shape, layout=layout)


class Backend(enum.IntEnum):
    """Which allocator `qd.tensor` uses: `FIELD` (compiled-in shapes) or `NDARRAY` (runtime shapes)."""

    FIELD = 0
    NDARRAY = 1


class Tensor:
    """A wrapper over an ndarray or a field, with the surface both share. Also a parameter annotation.

    Host indexing is canonical on both backends: a field's own indexing already is, an ndarray's indexes its
    storage order (as in Quadrants), so the wrapper permutes the key for a layout-tagged ndarray."""

    def __init__(self, impl: Any) -> None:
        from quadrants.lang.field import Field

        if not isinstance(impl, (Ndarray, Field)):
            raise TypeError(f"Tensor(impl) requires an Ndarray or Field; got {type(impl).__name__}")
        self._impl: Any = impl

    def _unwrap(self) -> Any:
        return self._impl

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self._impl.shape)

    @property
    def dtype(self) -> Any:
        return self._impl.dtype

    @property
    def layout(self) -> tuple[int, ...] | None:
        return self._impl.layout

    @property
    def backend(self) -> Backend:
        return Backend.NDARRAY if isinstance(self._impl, Ndarray) else Backend.FIELD

    def _key(self, key: Any) -> Any:
        layout = self._impl.layout if isinstance(self._impl, Ndarray) else None
        if layout is None:
            return key
        parts = (key,) if not isinstance(key, (tuple, list)) else tuple(key)
        if len(parts) != len(layout):
            raise TypeError(f"layout-tagged Tensor key has {len(parts)} entries but rank is {len(layout)}")
        return host_views.physical_key(parts, layout)

    def __getitem__(self, key: Any) -> Any:
        return self._impl[self._key(key)]

    def __setitem__(self, key: Any, value: Any) -> None:
        self._impl[self._key(key)] = value

    def to_numpy(self, dtype: Any = None, *, copy: bool | None = True) -> Any:
        return self._impl.to_numpy(dtype, copy=copy)

    def from_numpy(self, arr: Any) -> None:
        self._impl.from_numpy(arr)

    def to_torch(self, device: Any = None, *, copy: bool | None = True) -> Any:
        return self._impl.to_torch(device, copy=copy)

    def from_torch(self, arr: Any) -> None:
        self._impl.from_torch(arr)

    def to_dlpack(self, versioned: bool = False) -> Any:
        return self._impl.to_dlpack(versioned=versioned)

    def fill(self, value: Any) -> None:
        self._impl.fill(value)

    def copy_from(self, other: Any) -> None:
        other = other._unwrap() if isinstance(other, Tensor) else other
        if isinstance(other, Ndarray) != isinstance(self._impl, Ndarray):
            raise TypeError("copy_from between a field and an ndarray is not supported; route the data through "
                            "torch or numpy: a.from_torch(b.to_torch())")  # fmt: skip
        self._impl.copy_from(other)

    @cached_property
    def grad(self) -> Tensor | None:
        g = getattr(self._impl, "grad", None)
        return None if g is None else wrap(g)

    def has_grad(self) -> bool:
        return getattr(self._impl, "grad", None) is not None

    def has_dual(self) -> bool:
        return getattr(self._impl, "dual", None) is not None

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        """Pickled as its backend, element type, canonical shape, layout and canonical data (both backends)."""
        return _rebuild, (int(self.backend), _element_type(self._impl), self.shape, self.layout, self.to_numpy())

    def __repr__(self) -> str:
        lay = "" if self.layout is None else f", layout={self.layout!r}"
        return f"Tensor(shape={self.shape!r}, dtype={self.dtype!r}, backend={self.backend.name}{lay})"


class VectorTensor(Tensor):
    """A wrapper over a vector ndarray or field (`qd.Vector.tensor`): `element_shape` is `(n,)`."""

    def __init__(self, impl: Any) -> None:
        if len(getattr(impl, "element_shape", ())) != 1:
            raise TypeError(f"VectorTensor requires a vector-element impl; got {type(impl).__name__}")
        super().__init__(impl)

    @property
    def element_shape(self) -> tuple[int, ...]:
        return tuple(self._impl.element_shape)


class MatrixTensor(Tensor):
    """A wrapper over a matrix ndarray or field (`qd.Matrix.tensor`): `element_shape` is `(n, m)`."""

    def __init__(self, impl: Any) -> None:
        if len(getattr(impl, "element_shape", ())) != 2:
            raise TypeError(f"MatrixTensor requires a matrix-element impl; got {type(impl).__name__}")
        super().__init__(impl)

    @property
    def element_shape(self) -> tuple[int, ...]:
        return tuple(self._impl.element_shape)


def wrap(impl: Any) -> Tensor:
    """`qd.wrap(impl)`: the most specific wrapper of a bare ndarray or field."""
    if isinstance(impl, Tensor):
        raise TypeError("qd.wrap() takes a bare ndarray or field, not a qd.Tensor (it is already wrapped)")
    n = len(getattr(impl, "element_shape", ()) or ())
    if isinstance(impl, VectorNdarray) or (n == 1 and not isinstance(impl, Ndarray)):
        return VectorTensor(impl)
    if isinstance(impl, MatrixNdarray) or (n == 2 and not isinstance(impl, Ndarray)):
        return MatrixTensor(impl)
    return Tensor(impl)


def with_layout(arr: Any, layout: Any) -> Any:
    """`quadrants._tensor._with_layout(nd, layout)`: an ndarray allocated at its physical shape, tagged as
    stored in `layout` order (its `shape` becomes canonical), with its `.grad`."""
    nd = arr._unwrap() if isinstance(arr, Tensor) else arr
    if not isinstance(nd, Ndarray):
        raise TypeError(f"_with_layout takes an ndarray, not {type(nd).__name__}")
    nd._set_layout(layout)
    grad = getattr(nd, "grad", None)
    if isinstance(grad, Ndarray) and grad.layout != nd.layout:
        grad._set_layout(layout)
    return nd


def _element_type(impl: Any) -> Any:
    """The element as pickle can carry it: the scalar dtype, or (element shape, dtype)."""
    es = tuple(getattr(impl, "element_shape", ()) or ())
    return (es, impl.dtype) if es else impl.dtype


def _rebuild(backend: int, dtype: Any, shape: tuple[int, ...], layout: Any, data: Any) -> Tensor:
    if isinstance(dtype, tuple):
        dtype = MatrixType(dtype[0], dtype[1])
    t = tensor(dtype, shape, backend=Backend(backend), layout=layout) if layout else _alloc(dtype, shape, backend)
    t.from_numpy(data)
    return t


def _alloc(dtype: Any, shape: Any, backend: Any, **kw: Any) -> Tensor:
    return wrap(_allocate(dtype, _shape(shape), _backend(backend), None, **kw))


_SCALAR_KWARGS = frozenset({"needs_grad"})


def _check_kwargs(kwargs: dict[str, Any], factory: str, layout_ok: bool) -> None:
    if "order" in kwargs:
        if layout_ok:
            raise TypeError(f"{factory}(...) does not accept order=; pass layout=(...) instead")
        raise TypeError(f"{factory}(...) does not accept order= (or layout=); use the underlying qd.Vector.field / "
                        "qd.Matrix.field for non-default storage order")  # fmt: skip
    extra = set(kwargs) - _SCALAR_KWARGS
    if extra:
        accepted = "backend, dtype, needs_grad, shape" + (", layout" if layout_ok else "")
        raise TypeError(f"{factory}() got unexpected keyword argument(s) {sorted(extra)!r}; accepted: {accepted}")


def _backend(backend: Any) -> Backend:
    try:
        return Backend(backend)
    except (ValueError, TypeError) as e:
        valid = ", ".join(f"qd.Backend.{m.name}" for m in Backend)
        raise ValueError(f"backend={backend!r} is not a valid qd.Backend; expected one of {valid}") from e


def _shape(shape: Any) -> tuple[int, ...]:
    return (shape,) if isinstance(shape, int) else tuple(shape)


def _allocate(dtype: Any, shape: tuple[int, ...], backend: Backend, layout: tuple[int, ...] | None,
              needs_grad: bool = False) -> Any:  # fmt: skip
    """The bare ndarray or field; `needs_grad` gives real-typed tensors a `.grad` of the same layout."""
    prim = dtype.dtype if isinstance(dtype, MatrixType) else dtype
    real = isinstance(program.resolve_dtype(prim), PrimitiveType) and program.resolve_dtype(prim).is_float
    # a vector/matrix ndarray of integers with needs_grad is refused by name (qd.ndarray raises), as in Quadrants
    grad = bool(needs_grad) and (real or (isinstance(dtype, MatrixType) and backend is not Backend.FIELD))
    if backend is Backend.FIELD:
        from quadrants.lang.field import field

        order = "".join(chr(ord("i") + a) for a in layout) if layout else None
        return field(dtype, shape, order=order, needs_grad=grad)
    return ndarray(dtype, shape, grad, layout=layout)


def tensor(dtype: Any, shape: Any, *, backend: Any = Backend.NDARRAY, layout: Any = None, **kwargs: Any) -> Tensor:
    """Allocate an ndarray or a field (`backend`) of the canonical `shape`, stored in `layout` order, and wrap
    it. Errors as Quadrants raises them: a ValueError for a bad backend or layout, a TypeError for `order=`,
    unknown keywords, a layout on vector/matrix elements or an existing tensor in place of the dtype."""
    from quadrants.lang.field import Field

    if isinstance(dtype, (Ndarray, Field, Tensor)):
        raise TypeError(f"qd.tensor() allocates a new tensor; to wrap an existing {type(dtype).__name__}, use "
                        "qd.wrap(impl) instead")  # fmt: skip
    if layout is not None and isinstance(dtype, MatrixType):
        raise TypeError("layout= is not supported with compound dtypes (vector/matrix). Use qd.Vector.tensor(...) "
                        "or qd.Matrix.tensor(...) without layout= instead.")  # fmt: skip
    _check_kwargs(kwargs, "qd.tensor", layout_ok=True)
    b = _backend(backend)
    shape_t = _shape(shape)
    lay = host_views.check_layout(layout, len(shape_t)) if layout is not None else ()
    return wrap(_allocate(dtype, shape_t, b, lay or None, **kwargs))


def vector_tensor(n: int, dtype: Any, shape: Any, *, backend: Any = Backend.NDARRAY, **kwargs: Any) -> Tensor:
    """`qd.Vector.tensor(n, dtype, shape)`: a `VectorTensor` (no `layout=`, as in Quadrants)."""
    _check_kwargs(kwargs, "qd.Vector.tensor", layout_ok=False)
    return VectorTensor(_allocate(MatrixType((n,), dtype), _shape(shape), _backend(backend), None, **kwargs))


def matrix_tensor(n: int, m: int, dtype: Any, shape: Any, *, backend: Any = Backend.NDARRAY, **kwargs: Any) -> Tensor:
    """`qd.Matrix.tensor(n, m, dtype, shape)`: a `MatrixTensor` (no `layout=`, as in Quadrants)."""
    _check_kwargs(kwargs, "qd.Matrix.tensor", layout_ok=False)
    return MatrixTensor(_allocate(MatrixType((n, m), dtype), _shape(shape), _backend(backend), None, **kwargs))
