"""`qd.ndarray`: a contiguous, zero-initialized array, passed to kernels by descriptor.

Its storage comes from the program's memory (runtime/device.py): host memory on the CPU, managed memory on a
GPU, which numpy addresses directly once the kernels in flight are done.

Each ndarray keeps a small native descriptor `{data pointer, shape...}` that lives as long as it does, so a
kernel launch passes one integer per ndarray argument (no marshalling on the call path). Storage is a numpy
array, so `to_numpy`/`from_numpy` are single copies.
"""

from __future__ import annotations

import ctypes
import weakref
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from quadrants._logging import warn
from quadrants.errors import QuadrantsIndexError, QuadrantsRuntimeError
from quadrants.ir.types import NdType
from quadrants.runtime import device, host_views
from quadrants.types import dtypes, python_values
from quadrants.types.dtypes import PrimitiveType

_INTERNED: dict[tuple[PrimitiveType, int, tuple[int, ...], tuple[int, ...]], NdType] = {}


def nd_type(dtype: PrimitiveType, ndim: int, elem_shape: tuple[int, ...] = (), layout: tuple[int, ...] = ()) -> NdType:
    """The one NdType object for these parameters (launchers compare them by identity); an identity `layout`
    is stored as `()`."""
    if layout == tuple(range(len(layout))):
        layout = ()
    key = (dtype, ndim, elem_shape, layout)
    t = _INTERNED.get(key)
    if t is None:
        t = _INTERNED[key] = NdType(dtype, ndim, elem_shape, layout)
    return t


def _shape(shape: Any) -> tuple[int, ...]:
    """A qd.ndarray's shape: whole numbers from 1 to 2**31 - 1 (kernels read `x.shape[k]` as i32), as in
    Quadrants; anything else is a QuadrantsRuntimeError."""
    dims = (shape,) if isinstance(shape, (int, np.integer, float)) else tuple(shape)
    ok = all(isinstance(s, (int, np.integer)) and not isinstance(s, bool) and 1 <= int(s) < 2**31 for s in dims)
    if not ok:
        raise QuadrantsRuntimeError(f"{shape!r} is not a valid shape for ndarray: every dimension must be a whole "
                                    "number from 1 to 2**31 - 1")  # fmt: skip
    return tuple(int(s) for s in dims)


def descriptor(data: int, shape: tuple[int, ...]) -> ctypes.Array:  # type: ignore[type-arg]
    return (ctypes.c_int64 * (1 + len(shape)))(data, *shape)


class TensorElement:
    """The element type of a vector/matrix ndarray as Quadrants reports it (`x.element_type`): its scalar type
    (`element_type()`), its shape (`shape()`, a list), printed `[Tensor (3) f32]`."""

    __slots__ = ("_dtype", "_shape")

    def __init__(self, dtype: PrimitiveType, shape: tuple[int, ...]) -> None:
        self._dtype = dtype
        self._shape = shape

    def element_type(self) -> PrimitiveType:
        return self._dtype

    def shape(self) -> list[int]:
        return list(self._shape)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TensorElement) and (self._dtype, self._shape) == (other._dtype, other._shape)

    def __hash__(self) -> int:
        return hash((self._dtype, self._shape))

    def __repr__(self) -> str:
        return f"[Tensor ({', '.join(map(str, self._shape))}) {self._dtype}]"


@dataclass(frozen=True)
class NdarrayTypeMetadata:
    """`x.get_type()`: an ndarray's element type, physical shape and whether it has a `.grad` (Quadrants'
    quadrants.types.ndarray_type.NdarrayTypeMetadata, by its attribute names)."""

    element_type: Any
    shape: tuple[int, ...]
    needs_grad: bool


class NativeArray:
    """`ndarray.arr`: the memory behind an ndarray, as Quadrants' native Ndarray object reports it."""

    __slots__ = ("_address",)

    def __init__(self, address: int) -> None:
        self._address = address

    def device_allocation_ptr(self) -> int:
        return self._address


LIVE: weakref.WeakSet[Ndarray] = weakref.WeakSet()  # the running program's ndarrays (a new program: none)


class Ndarray:
    """A kernel-accessible array. `shape` excludes the element shape of vector/matrix ndarrays.

    As in Quadrants, an ndarray is a `ScalarNdarray`, a `VectorNdarray` or a `MatrixNdarray` (constructing an
    `Ndarray` gives the one its element type asks for)."""

    # `dtype`, `element_type`, `n`, `m` and `arr` are instance attributes (in the subclasses' __dict__), as in
    # Quadrants, so that `dir(qd.Ndarray)` and its subclasses list what Quadrants' do
    __slots__ = ("_arr", "_view", "_desc_buf", "_desc", "_spec", "_mem", "_elem", "shape", "__weakref__")

    def __new__(cls, dtype: Any, shape: Any, element_type: Any = None, layout: Any = None) -> Ndarray:
        if cls is Ndarray:
            cls = ndarray_class(element_type.shape if element_type is not None else ())
        return object.__new__(cls)

    def __init__(self, dtype: Any, shape: Any, element_type: Any = None, layout: Any = None) -> None:
        """`dtype` is a scalar dtype; or None with `element_type` a vector/matrix type of a concrete dtype.
        `shape` is canonical; a `layout` (runtime/host_views.py) stores the axes in its order: `_arr` is the
        memory in storage order (what kernels get), `_view` its canonical view (what Python reads and writes)."""
        self._elem = element_type
        prim: PrimitiveType = element_type.dtype if element_type is not None else dtypes.to_dtype(dtype)
        elem_shape: tuple[int, ...] = element_type.shape if element_type is not None else ()
        self.shape = _shape(shape)
        lay = host_views.check_layout(layout, len(self.shape))
        self._mem = device.current()  # host memory on the CPU, managed memory on a GPU
        phys = host_views.physical_shape(self.shape, lay)
        full = phys + elem_shape
        nbytes = int(np.prod(full, dtype=np.int64)) * prim.itemsize if full else prim.itemsize
        self._arr = self._mem.zeros(nbytes)[:nbytes].view(prim.np_dtype).reshape(full)
        self._view = host_views.canonical_view(self._arr, lay)
        address = int(self._arr.ctypes.data)
        self._desc_buf = descriptor(address, phys)
        self._desc = ctypes.addressof(self._desc_buf)
        self._spec = nd_type(prim, len(self.shape), elem_shape, lay)
        # instance attributes in the subclass's __dict__ (declared for type checkers below): the scalar type, also
        # of a vector/matrix ndarray; the element type (the scalar type, else a `TensorElement`); rows and columns
        # of an element (a vector: m = 1); Quadrants' handle of the native array (`nd.arr.device_allocation_ptr()`)
        self.__dict__.update(dtype=prim, element_type=prim if element_type is None else TensorElement(prim, elem_shape),
                             n=elem_shape[0] if elem_shape else 1, m=elem_shape[1] if len(elem_shape) == 2 else 1,
                             arr=NativeArray(address))  # fmt: skip
        LIVE.add(self)

    if TYPE_CHECKING:  # every ndarray is one of the three subclasses, which add the host I/O (_HostIO below)
        dtype: PrimitiveType
        element_type: Any
        n: int
        m: int
        arr: NativeArray

        def to_numpy(self, dtype: Any = None, *, copy: bool | None = True) -> np.ndarray: ...
        def to_torch(self, device: Any = None, *, copy: bool | None = True) -> Any: ...
        def from_numpy(self, arr: Any) -> None: ...
        def from_torch(self, arr: Any) -> None: ...

    def get_type(self) -> NdarrayTypeMetadata:
        """Its element type, physical shape and whether it has a `.grad`, as Quadrants' `get_type()` reports."""
        return NdarrayTypeMetadata(self.element_type, self._physical_shape, self.has_grad())

    def _get_element_size(self) -> int:
        """Bytes of one element (a vector/matrix element: all its components), as Quadrants reports them."""
        return self.dtype.itemsize * int(np.prod(self._spec.elem_shape, dtype=np.int64))

    def _get_nelement(self) -> int:
        """How many elements (the product of `shape`)."""
        return int(np.prod(self.shape, dtype=np.int64))

    def has_grad(self) -> bool:
        """Whether it was allocated with `needs_grad=True` (it has a `.grad` companion)."""
        return getattr(self, "grad", None) is not None

    def has_dual(self) -> bool:
        """Ndarrays have no dual storage (forward mode runs on fields): always False, as in Quadrants."""
        return False

    def _set_layout(self, layout: Any) -> None:
        """Re-read this ndarray's memory as stored in `layout` order: its current shape becomes the physical
        one (what `quadrants._tensor._with_layout` does to an ndarray allocated at its physical shape)."""
        phys = host_views.physical_shape(self.shape, self._spec.layout)
        lay = host_views.check_layout(layout, len(phys), "ndarray")
        inv = host_views.inverse(lay) if lay else tuple(range(len(phys)))
        self.shape = tuple(phys[inv[k]] for k in range(len(phys)))
        self._view = host_views.canonical_view(self._arr, lay)
        self._spec = nd_type(self._spec.dtype, self._spec.ndim, self._spec.elem_shape, lay)

    @property
    def layout(self) -> tuple[int, ...] | None:
        """The `qd.tensor(layout=)` permutation, None for the identity (as Quadrants reports it)."""
        return self._spec.layout or None

    @property
    def _qd_layout(self) -> tuple[int, ...] | None:  # Quadrants' attribute name, which programs read
        return self._spec.layout or None

    @_qd_layout.setter
    def _qd_layout(self, layout: Any) -> None:  # Quadrants' way to tag an ndarray of the physical shape
        self._set_layout(layout)

    @property
    def _physical_shape(self) -> tuple[int, ...]:
        return host_views.physical_shape(self.shape, self._spec.layout)

    @property
    def element_shape(self) -> tuple[int, ...]:
        return self._spec.elem_shape

    def to_dlpack(self, versioned: bool = False) -> Any:
        """A DLPack capsule over the ndarray's memory, canonical shape with the layout's strides:
        `torch.from_dlpack(x.to_dlpack())` shares it (no copy), as in Quadrants. CPU backend only: a GPU's
        managed memory is not offered as device memory yet."""
        return host_views.to_dlpack(self._view, self._mem, versioned)

    def copy_from(self, other: Ndarray) -> None:
        other._mem.host_access()
        self.from_numpy(other._view)

    def __deepcopy__(self, memo: dict[int, Any]) -> Ndarray:
        """`copy.deepcopy(x)`: a new ndarray of the same type and shape holding a copy of the data."""
        out = Ndarray(None if self._elem is not None else self.dtype, self.shape, self._elem, self._spec.layout or None)
        out.copy_from(self)
        memo[id(self)] = out
        return out

    def __reduce__(self) -> tuple[Any, tuple[dict[str, Any]]]:
        """Pickling, as in Quadrants: a copy of the elements (canonical order) with the dtype, shape and element
        shape; unpickling allocates a new ndarray on the current device. A layout tag and a `.grad` are not
        kept (Quadrants drops them too)."""
        state = {"version": _PICKLE_VERSION, "dtype": self.dtype.name, "shape": tuple(self.shape),
                 "element_shape": tuple(self._spec.elem_shape), "data": self.to_numpy()}  # fmt: skip
        return _unpickle, (state,)

    def _check_index(self, index: Any) -> None:
        """Whole-element indices must name every dimension, as in Quadrants (numpy slices are let through)."""
        parts = index if isinstance(index, tuple) else (index,)
        whole = all(isinstance(p, (int, np.integer)) and not isinstance(p, bool) for p in parts)
        if whole and len(parts) != len(self.shape):
            raise QuadrantsIndexError(f"{len(self.shape)}d ndarray indexed with {len(parts)}d indices: {index!r}")

    def fill(self, value: Any) -> None:
        self._mem.host_access()
        self._arr[...] = value  # the same value everywhere: storage order does not matter

    def __getitem__(self, index: Any) -> Any:
        """An element (`x[None]` or `x[()]` of a 0-d ndarray): a number, or a `qd.Vector`/`qd.Matrix` of a
        vector/matrix ndarray's element that views the ndarray's memory, so `x[i][j] = v` writes the ndarray
        (as Quadrants' element proxies do). A slice `x[a:b]` of a 1-D ndarray is a `qd.BufferView` of those
        elements, as in Quadrants (a slice of any other ndarray is refused there and here); other numpy-style
        indices give a numpy copy."""
        if isinstance(index, slice):
            from quadrants.runtime.buffer_view import view_of  # the view type (it builds on this module)

            return view_of(self, index)
        self._check_index(index)
        self._mem.host_access()
        v = self._arr[() if index is None else index]
        if isinstance(v, np.generic):
            return v.item()
        if self._spec.elem_shape and v.shape == self._spec.elem_shape:
            return python_values.wrap_matrix(v)  # the Python-scope value type (registered by lang, which builds on runtime)
        return v.copy()

    def __setitem__(self, index: Any, value: Any) -> None:
        self._check_index(index)
        self._mem.host_access()
        self._arr[() if index is None else index] = value

    def __len__(self) -> int:
        return self.shape[0] if self.shape else 0

    def __repr__(self) -> str:
        return f"<qd.ndarray {self._spec!r} shape={self.shape}>"


# The three classes have a __dict__ (no __slots__), as Quadrants' ndarrays do: programs keep their own
# attributes on them (Genesis caches its torch views as `x._tc`).


class _HostIO:
    """numpy and torch copies in and out: methods of the three ndarray classes, not of `qd.Ndarray` itself (whose
    `dir()` is Quadrants' base class's)."""

    def to_numpy(self: Any, dtype: Any = None, *, copy: bool | None = True) -> np.ndarray:
        """The canonical view as numpy: a copy, or with `copy=False` / `None` the memory itself
        (runtime/host_views.py); `dtype` converts."""
        return host_views.to_numpy(self._view, self._mem, dtype, copy)

    def to_torch(self: Any, device: Any = None, *, copy: bool | None = True) -> Any:
        """The canonical view as a torch tensor: a copy (on `device`), or over the memory itself (`copy=`)."""
        return host_views.to_torch(self._view, self._mem, device, copy)

    def from_torch(self: Any, arr: Any) -> None:
        self.from_numpy(host_views.torch_to_numpy(arr))

    def from_numpy(self: Any, arr: Any) -> None:
        a = np.asarray(arr)
        if a.dtype != self._arr.dtype:
            if not np.can_cast(a.dtype, self._arr.dtype, casting="safe"):
                warn(f"from_numpy: converting {a.dtype} data to {self._arr.dtype}", tag="runtime")
        host_views.from_numpy(self._view, self._mem, a)


class ScalarNdarray(_HostIO, Ndarray):
    pass


class VectorNdarray(_HostIO, Ndarray):
    pass


class MatrixNdarray(_HostIO, Ndarray):
    pass


_PICKLE_VERSION = 1


def _unpickle(state: dict[str, Any]) -> Ndarray:
    """An ndarray from the state `Ndarray.__reduce__` made."""
    if not isinstance(state, dict) or state.get("version") != _PICKLE_VERSION:
        version = state.get("version") if isinstance(state, dict) else None
        raise ValueError(f"Unsupported ndarray pickle version {version!r} (expected {_PICKLE_VERSION})")
    dtype = getattr(dtypes, str(state["dtype"]), None)
    if not isinstance(dtype, dtypes.PrimitiveType):
        raise ValueError(f"Unknown dtype {state['dtype']!r} during unpickle")
    elem_shape = tuple(state["element_shape"])
    if len(elem_shape) > 2:
        raise ValueError(f"Unpickling element_shape {elem_shape} is not supported (scalars, vectors, matrices)")
    elem = None
    if elem_shape:
        from quadrants.types.compound import MatrixType

        elem = MatrixType(elem_shape, dtype)
    out = Ndarray(None if elem is not None else dtype, tuple(state["shape"]), elem)
    out.from_numpy(state["data"])
    return out


def ndarray_class(elem_shape: tuple[int, ...]) -> type[Ndarray]:
    """The class of an ndarray whose elements have `elem_shape` (the launcher's fast path checks it)."""
    return (ScalarNdarray, VectorNdarray, MatrixNdarray)[len(elem_shape)]
