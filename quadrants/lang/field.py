"""`qd.field`: fixed-shape tensors in the program's field memory (see runtime/fields.py).

Kernels use fields from the enclosing scope directly, or receive them as `qd.template()` / `qd.Tensor`
arguments; either way the field's place in memory is compiled into the kernel.
"""

from __future__ import annotations

import weakref
from typing import Any

import numpy as np

from quadrants.errors import QuadrantsIndexError, QuadrantsRuntimeError
from quadrants.lang import program
from quadrants.types.compound import MatrixType
from quadrants.types.dtypes import PrimitiveType


def with_companions(value: Any, make: Any, needs_grad: bool = False, needs_dual: bool = False) -> Any:
    """`needs_grad=True` / `needs_dual=True`: `value.grad` / `value.dual`, zeroed companions of the same type and
    shape made by `make()`, as Quadrants allocates them (Genesis allocates such ndarrays whether or not it
    differentiates). Kernels and Python read and write them like any tensor; `kernel.grad()` accumulates into
    `.grad` (ARCHITECTURE.md, "Automatic differentiation"). A struct field's members get theirs too."""
    if needs_grad:
        value.grad = make()
        _link_members(value, "grad")
    if needs_dual:
        value.dual = make()
        _link_members(value, "dual")
    return value


def _link_members(value: Any, kind: str) -> None:
    """A struct field's companion is a struct field: each member field gets its member as `.grad`/`.dual`, which
    is what kernels differentiate (`s.a.grad` as in Quadrants)."""
    members = getattr(value, "_members", None)
    if members is None:
        return
    companion = getattr(value, kind)
    for name, m in members.items():
        setattr(m, kind, companion._members[name])
        _link_members(m, kind)


def check_real(dtype: Any, needs: bool) -> None:
    """Only real dtypes have gradients: Quadrants' error otherwise."""
    if needs and not dtype.is_float:
        raise QuadrantsRuntimeError(f"{dtype} is not supported for field with `needs_grad=True` or `needs_dual=True`.")


class Field:
    def __init__(self, dtype: PrimitiveType, shape: tuple[int, ...], element: MatrixType | None,
                 offset: tuple[int, ...] = ()) -> None:  # fmt: skip
        prog = program.get()
        self.offset = offset  # the index of the first element per dimension (`offset=`), () when all zero
        self._generation = prog.generation
        self._prim = dtype
        self.element_type = element
        self.shape = shape
        self.element_shape: tuple[int, ...] = element.shape if element is not None else ()
        count = int(np.prod(shape + self.element_shape)) if (shape + self.element_shape) else 1
        self._region, self._offset = prog.fields.place(count * dtype.itemsize)
        prog.made_fields.append(weakref.ref(self))  # qd.root.lazy_grad() and clear_all_gradients() find it

    @property
    def dtype(self) -> Any:
        """The scalar type, also of a vector/matrix field (as in Quadrants): see `element_type`."""
        return self._prim

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def __qd_field__(self) -> tuple[int, int, PrimitiveType, tuple[int, ...], tuple[int, ...]]:
        self._memory()  # a kernel uses it: the region must exist
        return self._region, self._offset, self._prim, self.shape, self.element_shape

    def _memory(self) -> np.ndarray:
        prog = program.get()
        if prog.generation != self._generation:
            raise QuadrantsRuntimeError("this field belongs to a program that qd.reset() or qd.init() ended")
        prog.fields.memory.host_access()
        return prog.fields.view(self._region, self._offset, self._prim.np_dtype, self.shape + self.element_shape)

    def to_numpy(self, dtype: Any = None) -> np.ndarray:
        out = self._memory().copy()
        return out if dtype is None else out.astype(_np_type(dtype))

    def from_numpy(self, arr: Any) -> None:
        a = np.asarray(arr)
        mem = self._memory()
        if a.shape != mem.shape:
            raise ValueError(f"from_numpy: shape {a.shape} does not match the field's {mem.shape}")
        np.copyto(mem, a, casting="unsafe")

    def to_torch(self, device: Any = None) -> Any:
        """A torch tensor holding a copy of the field (on `device`, default the CPU)."""
        import torch

        return torch.from_numpy(self.to_numpy()).to(device)

    def from_torch(self, arr: Any) -> None:
        """Copy a torch tensor of the field's shape in (any device; converted to the field's dtype)."""
        self.from_numpy(arr.detach().cpu().numpy())

    def to_dlpack(self) -> Any:
        """A DLPack capsule over the field's memory: `torch.from_dlpack(f.to_dlpack())` shares it (no copy),
        as in Quadrants. CPU backend only: a GPU's managed memory is not offered as device memory yet."""
        view = self._memory()
        return _dlpack(view, program.get().fields.memory)

    def copy_from(self, other: Any) -> None:
        if not isinstance(other, Field):
            raise TypeError(f"copy_from: expected a qd.field, got {type(other).__name__}")
        self.from_numpy(other.to_numpy())

    def fill(self, value: Any) -> None:
        self._memory()[...] = value

    def _key(self, index: Any) -> tuple[int, ...]:
        """A whole element's index, as Quadrants accepts it in Python scope: one integer per dimension."""
        parts = () if index is None else index if isinstance(index, tuple) else (index,)
        for p in parts:
            if not isinstance(p, (int, np.integer)) or isinstance(p, bool):
                raise TypeError(f"Detected illegal element of type: {type(p).__name__}. Please be aware that slicing "
                                "a qd.field is not supported so far.")  # fmt: skip
        if len(parts) != len(self.shape):
            raise QuadrantsIndexError(f"Slicing is not supported on qd.field: a {len(self.shape)}d field indexed with "
                                      f"{len(parts)} indices")  # fmt: skip
        if self.offset:
            key = tuple(int(p) - o for p, o in zip(parts, self.offset))
            if any(not 0 <= k < n for k, n in zip(key, self.shape)):
                raise QuadrantsIndexError(f"index {tuple(parts)} is outside the field's domain: offset {self.offset}, "
                                          f"shape {self.shape}")  # fmt: skip
            return key
        return tuple(int(p) for p in parts)

    def __iter__(self) -> Any:
        raise NotImplementedError("Struct for is only available in Quadrants scope (a Python loop over a qd.field)")

    def __getitem__(self, index: Any) -> Any:
        v = self._memory()[self._key(index)]
        if isinstance(v, np.generic):
            return v.item()
        from quadrants.lang.matrix import Matrix

        if self.element_type is not None and v.shape == self.element_shape:
            return Matrix._wrap(v)  # a view: `f[i][j] = v` writes the field, as Quadrants' element proxies do
        return v.copy()

    def __setitem__(self, index: Any, value: Any) -> None:
        self._memory()[self._key(index)] = np.asarray(value)

    def __repr__(self) -> str:
        return f"<qd.field {self.element_type or self._prim!r} shape={self.shape}>"


class ScalarField(Field):
    pass


class MatrixField(Field):
    def to_numpy(self, dtype: Any = None, keep_dims: bool = False) -> np.ndarray:
        """The elements as `shape + (n, m)`; a one-column matrix field gives `shape + (n,)` unless
        `keep_dims`, as in Quadrants."""
        out = super().to_numpy(dtype)
        if not keep_dims and len(self.element_shape) == 2 and self.m == 1:
            out = out.reshape(self.shape + (self.n,))
        return out

    def to_torch(self, device: Any = None, keep_dims: bool = False) -> Any:
        import torch

        return torch.from_numpy(self.to_numpy(keep_dims=keep_dims)).to(device)

    def from_numpy(self, arr: Any) -> None:
        a = np.asarray(arr)
        if len(self.element_shape) == 2 and self.m == 1 and a.shape == self.shape + (self.n,):
            a = a.reshape(self.shape + self.element_shape)  # a one-column matrix field takes vectors too
        super().from_numpy(a)

    @property
    def n(self) -> int:
        return self.element_shape[0]

    @property
    def m(self) -> int:
        return self.element_shape[1] if len(self.element_shape) == 2 else 1


def _np_type(dtype: Any) -> Any:
    return dtype.np_dtype if isinstance(dtype, PrimitiveType) else np.dtype(dtype)


def _dlpack(view: np.ndarray, memory: Any) -> Any:
    from quadrants.runtime import device

    if memory is not device.HOST:
        raise QuadrantsRuntimeError("to_dlpack() is supported on the CPU backend only (here, a GPU's managed "
                                    "memory is not shared through DLPack yet): use to_numpy() / to_torch()")  # fmt: skip
    return view.__dlpack__()


def field(dtype: Any, shape: Any = (), order: Any = None, name: str = "", offset: Any = None,
          needs_grad: bool = False, needs_dual: bool = False, layout: Any = None, ndim: Any = None) -> Field:  # fmt: skip
    """`qd.field(qd.f32, shape=(n, m))`; `dtype` may be a vector/matrix type. `order` and `layout` choose a
    memory layout in Quadrants and are accepted (one layout here: results are the same). `offset` moves the
    field's index domain (`x[offset]` is its first element, in kernels and in Python scope). `needs_grad` /
    `needs_dual` allocate `.grad` / `.dual` (see `with_companions`)."""
    if needs_grad or needs_dual:
        check_real(program.resolve_dtype(dtype.dtype if isinstance(dtype, MatrixType) else dtype), True)
        return with_companions(field(dtype, shape, order, name, offset, layout=layout), lambda: field(
            dtype, shape, order, name, offset, layout=layout), needs_grad, needs_dual)  # fmt: skip
    shape_t = (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(int(s) for s in (shape or ()))
    off = domain_offset(offset, len(shape_t))
    if isinstance(dtype, MatrixType):
        prim = program.resolve_dtype(dtype.dtype)
        return MatrixField(prim, shape_t, MatrixType(dtype.shape, prim), off)
    return ScalarField(program.resolve_dtype(dtype), shape_t, None, off)


def domain_offset(offset: Any, ndim: int) -> tuple[int, ...]:
    """`offset=` as one integer per dimension; () when it is absent or all zero."""
    if offset is None or (isinstance(offset, (tuple, list)) and not offset):
        return ()
    off = tuple(int(o) for o in offset) if isinstance(offset, (tuple, list)) else (int(offset),) * ndim
    if len(off) != ndim:
        raise ValueError(f"the field's offset {offset} has {len(off)} dimension(s), its shape {ndim}")
    return off if any(off) else ()


def live_fields() -> list[Field]:
    """Every field of the current program that is still referenced."""
    out = []
    for ref in program.get().made_fields:
        f = ref()
        if f is not None:
            out.append(f)
    return out


def clear_all_gradients(kind: str = "grad") -> None:
    """`qd.ad.clear_all_gradients()`: zero the `.grad` (or `.dual`) companion of every field (ndarray grads are
    left alone, as in Quadrants)."""
    for f in live_fields():
        companion = getattr(f, kind, None)
        if isinstance(companion, Field):
            companion.fill(0)


class _Root:
    """`qd.root`: only what gradients need of it today (`lazy_grad` / `lazy_dual`); SNode trees are issue 26."""

    def lazy_grad(self) -> None:
        """Give every real field that lacks one its `.grad` companion."""
        self._lazy("grad")

    def lazy_dual(self) -> None:
        self._lazy("dual")

    def _lazy(self, kind: str) -> None:
        fields = live_fields()
        companions = {id(getattr(f, k, None)) for f in fields for k in ("grad", "dual")}
        for f in fields:
            if f.dtype.is_float and id(f) not in companions and not isinstance(getattr(f, kind, None), Field):
                setattr(f, kind, field(f.element_type or f.dtype, f.shape, offset=f.offset or None))


root = _Root()
