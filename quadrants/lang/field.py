"""`qd.field`: fixed-shape tensors in the program's field memory (see runtime/fields.py).

Kernels use fields from the enclosing scope directly, or receive them as `qd.template()` / `qd.Tensor`
arguments; either way the field's place in memory is compiled into the kernel.
"""

from __future__ import annotations

import weakref
from typing import Any

import numpy as np

from quadrants.errors import QuadrantsCompilationError, QuadrantsIndexError, QuadrantsRuntimeError, QuadrantsSyntaxError
from quadrants.lang import program
from quadrants.lang.compat import Layout
from quadrants.runtime import host_views, python_backend
from quadrants.runtime.host_views import CapsuleOnCpu as _DLPackV1Adapter  # noqa: F401  - Quadrants' name
from quadrants.types import python_values, quant
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


class Companions:
    """`has_grad()` / `has_dual()` of fields and struct fields: whether the companion is allocated
    (`needs_grad=True`, `qd.root.lazy_grad()`, or `x.grad` placed by hand; one made on demand and still waiting for
    its place is not, as it lives outside the instance's own attributes)."""

    def has_grad(self) -> bool:
        return self.__dict__.get("grad") is not None

    def has_dual(self) -> bool:
        return self.__dict__.get("dual") is not None


class Field(Companions):
    def __init__(self, dtype: PrimitiveType, shape: tuple[int, ...] | None, element: MatrixType | None,
                 offset: tuple[int, ...] = (), layout: tuple[int, ...] = ()) -> None:  # fmt: skip
        prog = program.get()
        self._layout = layout  # storage order of the axes (runtime/host_views.py); Python scope sees canonical
        # Declared with a layout that interleaves it in Quadrants (a member of an AoS struct field, a vector field
        # laid out SoA): its memory is not shared (`copy=False` raises, `copy=None` copies), as there.
        self._interleaved = False
        self.offset = offset  # the index of the first element per dimension (`offset=`), () when all zero
        self._generation = prog.generation
        self._prim = dtype
        self.element_type = element
        self.element_shape: tuple[int, ...] = element.shape if element is not None else ()
        # Declared without `shape=`: no memory until an SNode tree places it (lang/snode.py), which sets
        # `_place` (its place node), `_placement` (its terms) and `_tree`.
        self._unplaced = shape is None
        self._quant: Any = None  # a qd.types.quant type: its elements are bits of words (lang/bitpacked.py)
        self._bits: Any = None  # then, once placed: its ir.bits.BitSlot
        self._place: Any = None
        self._placement: Any = None
        self._tree: Any = None
        self.shape = shape if shape is not None else ()
        if shape is not None:
            count = int(np.prod(shape + self.element_shape)) if (shape + self.element_shape) else 1
            self._region, self._offset = prog.fields.place(count * dtype.itemsize)
        prog.made_fields.append(weakref.ref(self))  # qd.root.lazy_grad() and clear_all_gradients() find it

    def __getattr__(self, name: str) -> Any:
        """`x.grad` / `x.dual` of a real field declared without shape and not placed yet, which has none: a
        companion made on demand, as Quadrants gives every real field one, so that `place(x, x.grad)` can
        place it. It becomes `x.grad` only once placed (lang/snode.py); one never placed is never allocated."""
        d = self.__dict__
        if name in ("grad", "dual") and d.get("_unplaced") and "_companion_of" not in d and d["_prim"].is_float \
                and d.get("_quant") is None and "_parts" not in d:  # (bits and split fields have none)  # fmt: skip
            pending = d.setdefault("_pending", {})
            made = pending.get(name)
            if made is None:
                made = pending[name] = unplaced_like(self)
                made._pending_of = (self, name)  # type: ignore[attr-defined]
            return made
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    @property
    def shape(self) -> tuple[int, ...]:
        """The index space (the element shape apart), as in Quadrants."""
        return self._shape

    @shape.setter
    def shape(self, value: tuple[int, ...]) -> None:
        self._shape = value

    def _bind(self, tree: Any, region: int, offset: int, placement: Any, place_offset: Any) -> None:
        """Its SNode tree was finalized: the field lives at `offset` of `region`, addressed by `placement`."""
        self._tree, self._region, self._offset, self._placement = tree, region, offset, placement
        self._bits = getattr(placement, "bits", None)
        self.shape = placement.shape
        self.offset = domain_offset(place_offset, len(self.shape))

    @property
    def snode(self) -> Any:
        """The field's place in its SNode tree (`.parent()`, `.shape`, `.id`)."""
        if self._place is None:
            from quadrants.lang.snode import flat_snode

            self._flat_place = getattr(self, "_flat_place", None) or flat_snode(self)
            return self._flat_place
        return self._place

    @property
    def _snode(self) -> Any:  # Quadrants' attribute name (its tests walk `f._snode.parent()`)
        return self.snode

    def parent(self, n: int = 1) -> Any:
        """The SNode `n` levels above the field's place (its cell's level for n=1), as in Quadrants."""
        return self.snode.parent(n)

    @property
    def _levels(self) -> tuple[tuple[Any, ...], int]:
        """A field of a sparse tree: its path of levels and its element's offset in the last cell
        (ir.GlobalNd.levels / leaf); ((), 0) otherwise."""
        levels = getattr(self._placement, "levels", ())
        return (levels, self._placement.leaf) if levels else ((), 0)

    @property
    def _sparse(self) -> bool:
        return bool(getattr(self._placement, "levels", ()))

    @property
    def _via_kernels(self) -> bool:
        """Python scope reads and writes it through kernels (lang/sparse_host.py): a sparse tree's cells are not
        one array, a quantized field's elements are bits."""
        return self._sparse or self._bits is not None

    @property
    def _terms(self) -> tuple[Any, ...]:
        """The address terms kernels bake in (ir.GlobalNd.terms): () for a flat field."""
        return self._placement.terms if self._placement is not None else ()

    def _ready(self) -> None:
        """Raise for a field without memory; finalize the tree of a placed field on its first use."""
        primal = getattr(self, "_companion_of", None)
        if self._unplaced and primal is not None:
            primal._ready()  # finalizing the primal's tree places this companion beside it
        if self._unplaced:
            raise QuadrantsRuntimeError(f"{self!r} is not placed: declare it with shape= or place it in an SNode "
                                        "tree (qd.root.dense(qd.i, n).place(x))")  # fmt: skip
        if self._place is not None and self._placement is None:
            self._place._builder.finalize()
        if self._tree is not None and self._tree.destroyed:
            raise QuadrantsRuntimeError("this field's SNode tree was destroyed (SNodeTree.destroy())")

    def _split(self) -> np.ndarray:
        """A writable view with one axis per (index, dense level) plus the element's: a placed field's cells
        are strided, not one row-major block."""
        mem = self._memory_flat() if self._placement is None else None
        if mem is not None:
            return mem
        p = self._placement
        buf = program.get().fields.materialize(self._region)
        isz = self._prim.itemsize
        shape = [t[1] or (s // max(t[0], 1)) for s, ts in zip(p.shape, p.terms) for t in ts]
        strides = [t[2] for ts in p.terms for t in ts]
        es = self.element_shape
        estrides = [int(np.prod(es[n + 1 :])) * isz for n in range(len(es))]
        return np.ndarray(tuple(shape) + es, self._prim.np_dtype, buffer=buf, offset=self._offset,
                          strides=tuple(strides + estrides))  # fmt: skip

    def _tree_view(self) -> np.ndarray | None:
        """A field placed in a dense SNode tree as one strided array over the tree's memory (canonical axes, the
        cells' layout in the strides: another field in the same cells just widens them), or None where no such
        array exists: a sparse tree, or an axis whose levels do not nest (numpy's reshape would copy)."""
        if self._via_kernels:
            return None
        split = self._split()
        view = split.reshape(self.shape + self.element_shape)
        return view if np.may_share_memory(view, split) else None

    def _split_key(self, key: tuple[int, ...]) -> tuple[int, ...]:
        if self._placement is None:
            return key
        return tuple((v // d) % m if m else v // d for v, ts in zip(key, self._placement.terms) for d, m, _ in ts)

    @property
    def dtype(self) -> Any:
        """The scalar type, also of a vector/matrix field (as in Quadrants): see `element_type`."""
        return self._prim

    @property
    def layout(self) -> tuple[int, ...] | None:
        """The storage order of the axes (`qd.tensor(layout=)`, `qd.field(order=)`), None for the identity."""
        return self._layout or None

    @property
    def _qd_layout(self) -> tuple[int, ...] | None:  # Quadrants' attribute name, which the frontend reads too
        return self._layout or None

    def __qd_field__(self) -> tuple[int, int, PrimitiveType, tuple[int, ...], tuple[int, ...]]:
        """Where a kernel finds the field: region, offset, dtype, the *physical* shape (storage order) and the
        element shape; `_qd_layout` maps canonical indices onto it."""
        if self._via_kernels:  # a kernel uses it: the region must exist
            self._ready()
            program.get().fields.materialize(self._region)
        else:
            self._memory()
        return self._region, self._offset, self._prim, host_views.physical_shape(self.shape, self._layout), \
            self.element_shape  # fmt: skip

    def _memory(self) -> np.ndarray:
        """The elements as `shape + element_shape`: a view of the memory (canonical indices over the storage
        layout), or a copy for a field placed in an SNode tree (written through `_split`)."""
        self._ready()
        if self._placement is None:
            return self._memory_flat()
        if self._via_kernels:  # through kernels: inactive cells read zeros (lang/sparse_host.py)
            from quadrants.lang import sparse_host

            return sparse_host.to_numpy(self)
        return self._split().reshape(self.shape + self.element_shape)

    def _memory_flat(self) -> np.ndarray:
        prog = program.get()
        if prog.generation != self._generation:
            raise QuadrantsRuntimeError("this field belongs to a program that qd.reset() or qd.init() ended")
        prog.fields.memory.host_access()
        phys = host_views.physical_shape(self.shape, self._layout) + self.element_shape
        return host_views.canonical_view(prog.fields.view(self._region, self._offset, self._prim.np_dtype, phys),
                                         self._layout)  # fmt: skip

    def to_numpy(self, dtype: Any = None, *, copy: bool | None = True) -> np.ndarray:
        """A copy, or with `copy=False` / `None` the field's memory itself (runtime/host_views.py)."""
        copy = self._refuse_sharing(copy)
        return host_views.to_numpy(self._memory(), program.get().fields.memory, dtype, copy, self._zero_d_ok())

    def _refuse_sharing(self, copy: bool | None) -> bool | None:
        """The `copy=` to use: a field placed in an SNode tree is not one array in memory, and one declared
        interleaved is not shared in Quadrants, so `copy=False` cannot be honoured (and `None` copies)."""
        self._ready()
        if copy is not True and self._placement is not None and self._tree_view() is None:
            if copy is False:
                raise ValueError("copy=False: this field's cells are spread over its SNode tree in a way no single "
                                 "strided array describes (a sparse tree, or an axis split over levels that do not "
                                 "nest); use copy=True")  # fmt: skip
            return True
        if self._interleaved and copy is not True:
            if copy is False:
                raise ValueError(f"Zero-copy not available for dtype={self._prim}: the field's layout interleaves "
                                 "it with other data (an AoS struct member, a vector field laid out SoA)")  # fmt: skip
            return True
        return copy

    def from_numpy(self, arr: Any) -> None:
        self._ready()  # a tree's first use finalizes it: its placement decides the path below
        if self._placement is None:
            host_views.from_numpy(self._memory(), program.get().fields.memory, arr)
            return
        a = np.asarray(arr)
        want = self.shape + self.element_shape
        if a.shape != want:
            raise ValueError(f"Mismatch shape: {want} expected, but {a.shape} provided")
        if self._via_kernels:  # every cell written, so activated, as in Quadrants
            from quadrants.lang import sparse_host

            sparse_host.from_numpy(self, a)
            return
        mem = self._split()
        np.copyto(mem, a.reshape(mem.shape), casting="unsafe")

    def to_torch(self, device: Any = None, *, copy: bool | None = True) -> Any:
        """A torch tensor holding a copy of the field (on `device`, default the CPU), or over its memory."""
        copy = self._refuse_sharing(copy)
        return host_views.to_torch(self._memory(), program.get().fields.memory, device, copy, self._zero_d_ok())

    def _zero_d_ok(self) -> bool:
        """Quadrants shares a 0-d field's memory only when its element is a vector/matrix."""
        return bool(self.shape or self.element_shape)

    def from_torch(self, arr: Any) -> None:
        """Copy a torch tensor of the field's shape in (any device; converted to the field's dtype)."""
        self.from_numpy(host_views.torch_to_numpy(arr))

    def to_dlpack(self, versioned: bool = False) -> Any:
        """A DLPack capsule over the field's memory: `torch.from_dlpack(f.to_dlpack())` shares it (no copy),
        as in Quadrants. CPU backend only: a GPU's managed memory is not offered as device memory yet."""
        self._refuse_sharing(False)
        return host_views.to_dlpack(self._memory(), program.get().fields.memory, versioned)

    def copy_from(self, other: Any) -> None:
        if not isinstance(other, Field):
            raise TypeError(f"copy_from: expected a qd.field, got {type(other).__name__}")
        self.from_numpy(other.to_numpy())

    def fill(self, value: Any) -> None:
        self._ready()
        if self._via_kernels:  # the active cells only, as Quadrants' fill (a struct-for) does
            from quadrants.lang import sparse_host

            sparse_host.fill(self, value)
            return
        self._split()[...] = value

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
        key = tuple(int(p) - o for p, o in zip(parts, self.offset)) if self.offset else tuple(int(p) for p in parts)
        if any(not 0 <= k < n for k, n in zip(key, self.shape)):
            # checked whatever `debug` says: numpy would read x[-1] as the last element, Quadrants' x[-1] is
            # outside the field (its debug mode raises this AssertionError, without it reads other memory)
            where = f"offset {self.offset}, shape {self.shape}" if self.offset else f"shape {self.shape}"
            raise QuadrantsIndexError(f"Accessing a field with indices {tuple(int(p) for p in parts)}: outside the "
                                      f"field's domain ({where})")  # fmt: skip
        return key

    def __iter__(self) -> Any:
        raise NotImplementedError("Struct for is only available in Quadrants scope (a Python loop over a qd.field)")

    def __getitem__(self, index: Any) -> Any:
        self._ready()
        if self._via_kernels:
            from quadrants.lang import sparse_host

            v = sparse_host.get(self, self._key(index))
        else:
            v = self._split()[self._split_key(self._key(index))]
        if isinstance(v, np.generic):
            return v.item()
        from quadrants.lang.matrix import Matrix

        if self.element_type is not None and v.shape == self.element_shape:
            return Matrix._wrap(v)  # a view: `f[i][j] = v` writes the field, as Quadrants' element proxies do
        return v.copy()

    def __setitem__(self, index: Any, value: Any) -> None:
        self._ready()
        if self._via_kernels:
            from quadrants.lang import sparse_host

            sparse_host.set(self, self._key(index), value)
            return
        self._split()[self._split_key(self._key(index))] = np.asarray(value)

    def __repr__(self) -> str:
        return f"<qd.field {self.element_type or self._prim!r} shape={self.shape}>"


class ScalarField(Field):
    pass


class MatrixField(Field):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # instance attributes, as Quadrants' MatrixField sets them: `ndim` is the element's dimensions (1: vector,
        # 2: matrix); ndarrays and scalar and struct fields have no `ndim` there (Genesis tells them apart with
        # `getattr(x, "ndim", ...)`); `n` rows, `m` columns (1 for a vector)
        self.ndim = len(self.element_shape)
        self.n = self.element_shape[0]
        self.m = self.element_shape[1] if len(self.element_shape) == 2 else 1

    def to_numpy(self, dtype: Any = None, keep_dims: bool = False, *, copy: bool | None = True) -> np.ndarray:
        """The elements as `shape + (n, m)`; a one-column matrix field gives `shape + (n,)` unless
        `keep_dims`, as in Quadrants."""
        out = super().to_numpy(dtype, copy=copy)
        if self._vector_like():
            out = out.reshape(self.shape + ((self.n, 1) if keep_dims else (self.n,)))
        return out

    def _vector_like(self) -> bool:
        """A vector field, or a one-column matrix field: Quadrants converts both as vectors."""
        return len(self.element_shape) == 1 or self.element_shape[1] == 1

    def to_torch(self, device: Any = None, keep_dims: bool = False, *, copy: bool | None = True) -> Any:
        out = super().to_torch(device, copy=copy)
        if self._vector_like():
            out = out.reshape(self.shape + ((self.n, 1) if keep_dims else (self.n,)))
        return out

    def from_numpy(self, arr: Any) -> None:
        a = np.asarray(arr)
        n = self.n
        if self._vector_like() and a.shape in (self.shape + (n,), self.shape + (n, 1), self.shape + (1, n)):
            # a vector's n values, as a flat vector, a column or a row (Quadrants takes all three)
            a = a.reshape(self.shape + self.element_shape)
        super().from_numpy(a)

    def get_scalar_field(self, *indices: int) -> Any:
        """Component `indices` as a scalar field of its own, to place apart (lang/component_fields.py); the
        field is declared without shape= and its components are then placed one by one."""
        from quadrants.lang import component_fields

        return component_fields.split(self).get_scalar_field(*indices)


def field(dtype: Any, shape: Any = None, order: Any = None, name: str = "", offset: Any = None,
          needs_grad: bool = False, needs_dual: bool = False, layout: Any = None, ndim: Any = None) -> Field:  # fmt: skip
    """`qd.field(qd.f32, shape=(n, m))`; `dtype` may be a vector/matrix type. `order` and `layout` choose a
    memory layout in Quadrants and are accepted (one layout here: results are the same). `offset` moves the
    field's index domain (`x[offset]` is its first element, in kernels and in Python scope). `needs_grad` /
    `needs_dual` allocate `.grad` / `.dual` (see `with_companions`). `order="ji"` stores the axes in that
    order (outermost first), as `qd.tensor(layout=(1, 0))` does; indices stay canonical."""
    if python_backend.active():  # a torch tensor (runtime/python_backend); no SNode, no companions
        return python_backend_tensor(dtype, shape)  # type: ignore[no-any-return]
    if isinstance(dtype, quant.QuantType) or (isinstance(dtype, MatrixType) and quant.is_quant(dtype.dtype)):
        return quant_field(dtype, shape, needs_grad or needs_dual)
    if needs_grad or needs_dual:
        check_real(program.resolve_dtype(dtype.dtype if isinstance(dtype, MatrixType) else dtype), True)
        return with_companions(field(dtype, shape, order, name, offset, layout=layout), lambda: field(
            dtype, shape, order, name, offset, layout=layout), needs_grad, needs_dual)  # fmt: skip
    if shape is None:  # placed later in an SNode tree (lang/snode.py); an offset then comes with place()
        domain_offset(offset, 0, None)  # Quadrants' error when one is given here
        if order is not None:
            raise QuadrantsSyntaxError("shape cannot be None when order is set")
        return _make(dtype, None, ())
    shape_t = (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(int(s) for s in shape)
    if any(n <= 0 for n in shape_t):
        raise QuadrantsRuntimeError(f"Every dimension of a Quadrants field should be positive, got shape {shape_t}")
    off = domain_offset(offset, len(shape_t), shape)
    lay = host_views.order_layout(order, len(shape_t)) if isinstance(order, str) else ()
    f = _make(dtype, shape_t, off, lay)
    f._interleaved = isinstance(dtype, MatrixType) and layout is Layout.SOA
    return f


def python_backend_tensor(dtype: Any, shape: Any) -> Any:
    """A field or ndarray of `dtype` (the program's defaults resolved) on the python backend: a PyTensor."""
    from quadrants.runtime.python_backend.tensor import allocate

    if isinstance(dtype, MatrixType):
        return allocate(MatrixType(dtype.shape, program.resolve_dtype(dtype.dtype)), shape)
    return allocate(program.resolve_dtype(dtype), shape)


def quant_field(dtype: Any, shape: Any, needs: bool) -> Field:
    """A field of a quantized type (or a vector/matrix of one), declared without shape: its elements are bits
    of the words of a qd.BitpackedFields or a quant_array it is placed in."""
    if shape is not None:
        raise QuadrantsRuntimeError(f"a field of {getattr(dtype, 'dtype', dtype)!r} is declared without shape= and "
                                    "placed in a qd.BitpackedFields or under a quant_array() level")  # fmt: skip
    if needs:
        raise QuadrantsRuntimeError("quantized fields have no gradients (needs_grad / needs_dual)")
    if isinstance(dtype, MatrixType):
        from quadrants.lang import component_fields

        return component_fields.matrix_field(dtype.shape, dtype.dtype)
    return scalar_unplaced(dtype)


def scalar_unplaced(dtype: Any) -> ScalarField:
    """A scalar field declared without shape, of a dtype or a quantized type."""
    if isinstance(dtype, quant.QuantType):
        f = ScalarField(dtype.compute, None, None)
        f._quant = dtype
        return f
    return ScalarField(program.resolve_dtype(dtype), None, None)


def unplaced_like(f: Field) -> Field:
    """A field of `f`'s element type declared without shape (a companion `lazy_grad` places beside `f`)."""
    return _make(f.element_type or f._prim, None, ())


def _make(dtype: Any, shape_t: tuple[int, ...] | None, off: tuple[int, ...], lay: tuple[int, ...] = ()) -> Field:
    if isinstance(dtype, MatrixType):
        prim = program.resolve_dtype(dtype.dtype)
        return MatrixField(prim, shape_t, MatrixType(dtype.shape, prim), off, lay)
    return ScalarField(program.resolve_dtype(dtype), shape_t, None, off, lay)


def domain_offset(offset: Any, ndim: int, shape: Any = ()) -> tuple[int, ...]:
    """`offset=` as one integer per dimension; () when it is absent or all zero. `shape`: as the caller got it
    (None is an error when an offset is given)."""
    if offset is None or (isinstance(offset, (tuple, list)) and not offset):
        return ()
    if shape is None:  # Quadrants' words and error type
        raise QuadrantsCompilationError("shape cannot be None when offset is set")
    off = tuple(int(o) for o in offset) if isinstance(offset, (tuple, list)) else (int(offset),) * ndim
    if len(off) != ndim:
        raise QuadrantsCompilationError(f"The dimensionality of shape and offset must be the same: the field's "
                                        f"offset {offset} has {len(off)} dimension(s), its shape {ndim}")  # fmt: skip
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
        companion = f.__dict__.get(kind)  # (not an on-demand companion of an unplaced field)
        if isinstance(companion, Field):
            companion.fill(0)


class _FlatFields:
    """The gradients of fields made with `shape=` (`qd.root.lazy_grad()`, lang/snode.py, calls `_lazy`)."""

    def lazy_grad(self) -> None:
        """Give every real field that lacks one its `.grad` companion."""
        self._lazy("grad")

    def lazy_dual(self) -> None:
        self._lazy("dual")

    def _lazy(self, kind: str) -> None:
        fields = live_fields()
        companions = {id(f.__dict__.get(k)) for f in fields for k in ("grad", "dual")}
        for f in fields:
            if f._unplaced or f._placement is not None:  # in an SNode tree: its builder places the companion
                continue
            if f.dtype.is_float and id(f) not in companions and not isinstance(getattr(f, kind, None), Field):
                setattr(f, kind, field(f.element_type or f.dtype, f.shape, offset=f.offset or None))


root = _FlatFields()


python_values.register_field(field)  # `qd.types.matrix(...).field(shape)` (types/ is below lang)
