"""SNode trees: `qd.root`, `qd.FieldsBuilder`, `.dense(axes, shape)` levels and `.place(fields)`.

Consumes the tree the user builds (nodes, axes, extents, the fields placed in each cell); produces, when the
tree is finalized, one memory reservation for the whole tree (runtime/fields.py) and a `Placement` per field:
its byte offset from the reservation and, per index, the `(div, mod, stride)` terms of the dense levels it
crosses. Kernels bake those into the field's `ir.GlobalNd` (codegen turns them into address arithmetic: no
runtime structure is walked), Python scope reads and writes through a strided numpy view with one axis per
(index, level). Only dense levels exist so far; the layout is in the IR text, so in the offline cache key.

Cell layout (why AoS): a node's cell holds its children in the order they were added, each aligned to its own
alignment (a placed field's element: its scalar size; a child level: its cell's alignment); a dense level is an
array of its cells, row-major over its axes in the order given.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import prod
from typing import Any

import numpy as np

from quadrants.errors import QuadrantsRuntimeError
from quadrants.ir.bits import BitSlot
from quadrants.lang import bitpacked, program, sparse_layout

Term = tuple[int, int, int]  # (div, mod, stride bytes): digit = (index // div) % mod (mod 0: none)


@dataclass(frozen=True)
class Axis:
    """One index of a field (`qd.i` is index 0, ... `qd.l` index 3)."""

    index: int

    def __repr__(self) -> str:
        return f"qd.{'ijkl'[self.index] if self.index < 4 else f'axes({self.index})'}"


def axes(*indices: int) -> list[Axis]:
    """`qd.axes(0, 2)`: the axes of those indices."""
    return [Axis(int(k)) for k in indices]


i, j, k, l = (Axis(n) for n in range(4))  # noqa: E741 - Quadrants' names
ij, ik, il, jk, jl, kl = ([i, j], [i, k], [i, l], [j, k], [j, l], [k, l])
ijk, ijl, ikl, jkl, ijkl = ([i, j, k], [i, j, l], [i, k, l], [j, k, l], [i, j, k, l])


@dataclass(frozen=True)
class Placement:
    """Where a placed field lives: bytes from its tree's base to element 0, its shape, per index its terms."""

    offset: int
    shape: tuple[int, ...]
    terms: tuple[tuple[Term, ...], ...]
    bits: BitSlot | None = None  # a quantized field: its bits of the word the terms address (ir/bits.py)


class SNode:
    """A node of a tree: the root, a dense level, or the place of one field (`field.snode`)."""

    def __init__(self, builder: FieldsBuilder, parent: SNode | None, kind: str,
                 extents: tuple[tuple[int, int], ...] = (), field: Any = None) -> None:  # fmt: skip
        self._builder = builder
        self._parent = parent
        self.kind = kind
        self.extents = extents  # (axis index, extent) of this level, in the order given
        self.field = field
        self.chunk_size = 0  # a dynamic node's cells per chunk
        self.word_bits = 0  # a quant_array level: the bits of the word its elements share
        self.bitpack: Any = None  # a bit_struct node: its qd.BitpackedFields (lang/bitpacked.py)
        self.children: list[SNode] = []
        builder._nodes.append(self)
        self.id = self._id = FieldsBuilder._ids  # unique across the process's trees, as Quadrants numbers them
        FieldsBuilder._ids += 1
        self.ptr = PlaceInfo(self)  # what Quadrants' `snode.ptr` answers about a place: gradient kind, companions

    def dense(self, indices: Any, dimensions: Any) -> SNode:
        """A dense level under this node: `dimensions` cells per axis of `indices` (one int for all)."""
        return self._level("dense", indices, dimensions)

    def pointer(self, indices: Any, dimensions: Any) -> SNode:
        """A sparse level whose cells are allocated when written (lang/sparse_layout.py)."""
        return self._level("pointer", indices, dimensions)

    def bitmasked(self, indices: Any, dimensions: Any) -> SNode:
        """A sparse level whose cells are always there, with one activity bit each."""
        return self._level("bitmasked", indices, dimensions)

    def dynamic(self, index: Any, dimension: Any, chunk_size: Any = None) -> SNode:
        """A list along one axis of up to `dimension` cells (`qd.append`, `qd.length`), allocated in chunks of
        `chunk_size` cells."""
        if not isinstance(index, Axis) and not (isinstance(index, (list, tuple)) and len(index) == 1):
            raise QuadrantsRuntimeError("dynamic() takes exactly one axis (qd.i, qd.j, ...)")
        node = self._level("dynamic", index, dimension)
        n = node.extents[0][1]
        node.chunk_size = min(n, int(chunk_size)) if chunk_size is not None else n
        if node.chunk_size <= 0:
            raise ValueError(f"dynamic(): chunk_size must be positive, got {chunk_size}")
        return node

    def quant_array(self, indices: Any, dimensions: Any, max_num_bits: int) -> SNode:
        """A level whose cells are the elements of one word of `max_num_bits` bits (lang/bitpacked.py): place
        one field of a quantized int or fixed-point type in it."""
        node = self._level("quant_array", indices, dimensions)
        node.word_bits = int(max_num_bits)
        bitpacked.word_type(node.word_bits)
        return node

    def _level(self, kind: str, indices: Any, dimensions: Any) -> SNode:
        self._builder._check_open()
        if self.kind in ("bit_struct", "quant_array"):
            raise QuadrantsRuntimeError(f"a {self.kind} holds fields only: {kind}() cannot go under it")
        if self.kind == "place":
            raise QuadrantsRuntimeError(f"a field's place has no children: call {kind}() on the level above")
        if self.kind == "dynamic":
            raise QuadrantsRuntimeError("a dynamic node holds places only: its cells cannot have levels under them")
        ax = [indices] if isinstance(indices, Axis) else list(indices)
        one = isinstance(dimensions, (int, np.integer))  # np.int32(5) too, as Quadrants takes it
        dims = [int(dimensions)] if one else [int(d) for d in dimensions]
        if len(dims) == 1:  # one extent (`8` or `(8,)`) for several axes: every axis gets it, as in Quadrants
            dims *= len(ax)
        if len(dims) != len(ax) or not all(isinstance(a, Axis) for a in ax):
            raise ValueError(f"{kind}({indices}, {dimensions}): give one extent per axis (qd.i, qd.ij, qd.axes(...))")
        if any(d <= 0 for d in dims):
            raise ValueError(f"{kind}(): extents must be positive, got {dims}")
        node = SNode(self._builder, self, kind, tuple((a.index, d) for a, d in zip(ax, dims)))
        self.children.append(node)
        return node

    def place(self, *fields: Any, offset: Any = None) -> SNode:
        """Put `fields` (and lists of fields) in this node's cell, one after another (AoS)."""
        self._builder._check_open()
        for f in fields:
            if isinstance(f, (list, tuple)):
                self.place(*f, offset=offset)
                continue
            if isinstance(f, bitpacked.BitpackedFields):
                self._place_bitpacked(f, offset)
                continue
            comps = getattr(f, "_components", None)
            if comps is not None:  # a quantized vector/matrix field: each component in the cell
                self.place(*comps(), offset=offset)
                continue
            quant = getattr(f, "_quant", None) is not None
            if quant and self.kind != "quant_array":
                raise QuadrantsRuntimeError(f"{f!r} has a quantized type: place it in a qd.BitpackedFields or "
                                            "under a quant_array() level")  # fmt: skip
            if self.kind == "quant_array" and (not quant or self.children):
                raise QuadrantsRuntimeError("a quant_array holds exactly one field, of a quantized type")
            members = getattr(f, "_members", None)
            if members is not None:  # a struct field: each member in the cell
                self.place(*members.values(), offset=offset)
                f.shape, f.offset = self.shape, next(iter(members.values())).offset
                continue
            if getattr(f, "_unplaced", None) is not True:
                raise QuadrantsRuntimeError(f"{f!r} cannot be placed: only a field declared without shape= can be")
            self._own(f, offset)
        return self

    def _place_bitpacked(self, bp: bitpacked.BitpackedFields, offset: Any) -> None:
        if self.kind in ("quant_array", "bit_struct"):
            raise QuadrantsRuntimeError(f"a qd.BitpackedFields cannot be placed under a {self.kind}")
        if bp.placed:
            raise QuadrantsRuntimeError("this qd.BitpackedFields is placed already")
        bp.placed = True
        node = SNode(self._builder, self, "bit_struct")
        node.bitpack = bp
        self.children.append(node)
        for f, k in bp.fields:
            if getattr(f, "_unplaced", None) is not True:
                raise QuadrantsRuntimeError(f"{f!r} cannot be placed: only a field declared without shape= can be")
            f._bit_member = k
            node._own(f, offset)

    def _own(self, f: Any, offset: Any) -> None:
        """Make `f` a place under this node."""
        f._unplaced = False
        pending = f.__dict__.pop("_pending_of", None)
        if pending is not None:  # an on-demand companion (`place(x, x.grad)`): now x's own
            setattr(pending[0], pending[1], f)
        node = SNode(self._builder, self, "place", field=f)
        self.children.append(node)
        f._place, f._place_offset = node, offset
        f.shape = node.shape  # known now (Quadrants answers x.shape before the tree is finalized)
        for kind in ("grad", "dual"):
            _link(f, getattr(f, kind, None))

    def lazy_grad(self) -> None:
        """Give each field placed in this tree its gradient, placed beside it (as Quadrants lays it out)."""
        self._builder._lazy("grad")

    def lazy_dual(self) -> None:
        self._builder._lazy("dual")

    def parent(self, n: int = 1) -> SNode | None:
        node: SNode | None = self
        for _ in range(n):
            node = node._parent if node is not None else None
        return node

    def _axis_extents(self) -> dict[int, int]:
        out: dict[int, int] = {}
        node: SNode | None = self
        while node is not None:
            for a, d in node.extents:
                out[a] = out.get(a, 1) * d
            node = node._parent
        return out

    @property
    def shape(self) -> tuple[int, ...]:
        """The index space below this node: per axis used on the path from the root, the product of extents."""
        ext = self._axis_extents()
        return tuple(ext[a] for a in sorted(ext))

    def deactivate_all(self) -> None:
        """Deactivate every cell under this node (sparse trees: runtime/sparse.py returns their memory); dense
        cells are always active: their fields are zeroed, as Quadrants' dense deactivation does."""
        tree = self._builder.tree
        if tree is not None and tree.sparse is not None:
            from quadrants.lang import sparse_host

            sparse_host.deactivate_all(tree, self)
            return
        for node in self._builder._nodes:
            if node.kind == "place" and _under(node, self) and node.field._placement is not None:
                node.field.fill(0)

    @property
    def _num_dynamically_allocated(self) -> int:
        """Cells of this pointer or dynamic node carved from its pool since the tree was last reset (recycled
        cells are not counted again), as Quadrants counts them; 0 for other nodes."""
        tree = self._builder.tree
        if tree is None or tree.sparse is None:
            return 0
        from quadrants.runtime import sparse as runtime

        for off, _, node_id in tree.sparse.pools:
            if node_id == self.id:
                program.get().fields.memory.host_access()
                return runtime.counter(program.get().fields.materialize(tree.region), tree.base, off)
        return 0

    @property
    def _cell_size_bytes(self) -> int:
        """Bytes of one cell of this node (Quadrants' inspection property)."""
        return sparse_layout.cell_bytes(self)  # dense and sparse trees alike

    @property
    def _offset_bytes_in_parent_cell(self) -> int:
        """Where this node's storage starts in its parent's cell."""
        parent = self._parent
        if parent is None:
            return 0
        return sparse_layout.child_offsets(parent)[parent.children.index(self)]

    @property
    def _snode_tree_id(self) -> int:
        """The number of this node's tree in its program, in the order trees were made (a flat field's own)."""
        if self._builder.tree is not None:
            return self._builder.tree.number
        return getattr(self.field, "_tree_number", -1) if self.kind == "place" else -1

    def __eq__(self, other: object) -> bool:
        if isinstance(other, _Root):
            return self.kind == "root"
        return self is other

    def __hash__(self) -> int:
        return id(self)

    def __repr__(self) -> str:
        return "qd.root" if self.kind == "root" else f"<qd.SNode {self.kind} {self.id} shape={self.shape}>"


def _link(primal: Any, companion: Any) -> None:
    """An unplaced companion of a placed field: its first use finalizes the primal's tree, which places it."""
    if companion is not None and getattr(companion, "_unplaced", False):
        companion._companion_of = primal
        companion.shape = primal.shape


def _under(node: SNode, top: SNode) -> bool:
    n: SNode | None = node
    while n is not None and n is not top:
        n = n._parent
    return n is top


class FieldsBuilder:
    """A tree under construction: `fb.dense(...).place(...)`, then `fb.finalize()` allocates it."""

    _ids = 0

    def __init__(self) -> None:
        self._nodes: list[SNode] = []
        self._generation = program.get().generation
        self.root = SNode(self, None, "root")
        self.tree: SNodeTree | None = None

    def _check_open(self) -> None:
        if self.tree is not None:
            raise QuadrantsRuntimeError("this FieldsBuilder is finalized: build a new tree with qd.FieldsBuilder()")

    def dense(self, indices: Any, dimensions: Any) -> SNode:
        return self.root.dense(indices, dimensions)

    def pointer(self, indices: Any, dimensions: Any) -> SNode:
        return self.root.pointer(indices, dimensions)

    def bitmasked(self, indices: Any, dimensions: Any) -> SNode:
        return self.root.bitmasked(indices, dimensions)

    def dynamic(self, index: Any, dimension: Any, chunk_size: Any = None) -> SNode:
        return self.root.dynamic(index, dimension, chunk_size)

    def place(self, *fields: Any, offset: Any = None) -> SNode:
        return self.root.place(*fields, offset=offset)

    def lazy_grad(self) -> None:
        self._lazy("grad")

    def _lazy(self, kind: str) -> None:
        from quadrants.lang.field import unplaced_like

        placed = [n.field for n in self._nodes if n.kind == "place"]
        companions = {id(getattr(f, k, None)) for f in placed for k in ("grad", "dual")}
        for node in list(self._nodes):
            f = node.field
            if node.kind == "place" and f._prim.is_float and getattr(f, kind, None) is None and id(f) not in companions:
                setattr(f, kind, unplaced_like(f))
                getattr(f, kind)._lazy_companion = True  # finalize() places it beside f
                _link(f, getattr(f, kind))

    def lazy_dual(self) -> None:
        self._lazy("dual")

    def quant_array(self, indices: Any, dimensions: Any, max_num_bits: int) -> SNode:
        return self.root.quant_array(indices, dimensions, max_num_bits)

    def deactivate_all(self) -> None:
        """Deactivate every cell of the finalized tree (SNode.deactivate_all of its root)."""
        self.root.deactivate_all()

    @property
    def _empty(self) -> bool:
        return len(self._nodes) == 1

    def finalize(self) -> SNodeTree:
        """Place the gradients nobody placed beside their primals, lay the tree out and reserve its memory."""
        self._check_open()
        if program.get().generation != self._generation:
            raise QuadrantsRuntimeError("this FieldsBuilder belongs to a program that qd.reset() or qd.init() ended")
        for node in list(self._nodes):
            for kind in ("grad", "dual"):
                companion = getattr(node.field, kind, None) if node.kind == "place" else None
                if companion is not None and getattr(companion, "_unplaced", False) and getattr(
                        companion, "_lazy_companion", False):  # fmt: skip
                    assert node._parent is not None
                    node._parent.place(companion, offset=node.field._place_offset)
        sparse = None
        if sparse_layout.has_sparse(self.root):
            prog = program.get()  # on a device, the pools carve their cells from an arena at the tree's end
            arena = int(prog.config.device_memory_GB * 2**30) // 64 * 64 if prog.device is not None else 0
            sparse = sparse_layout.layout(self.root, arena)
        size, placements = (sparse.size, list(sparse.placements)) if sparse is not None else layout(self.root)
        region, base = program.get().fields.place(size)
        self.tree = SNodeTree(self, region, base, sparse)
        if sparse is not None:  # its pools' chunks (CPU) are not field memory: freed when the program ends
            program.get().on_end.append(self.tree.destroy)
        for node, p in placements:
            node.field._bind(self.tree, region, base + p.offset, p, node.field._place_offset)
        return self.tree


class SNodeTree:
    """A finalized tree: its memory and fields; `destroy()` ends them (later use of its fields raises)."""

    def __init__(self, builder: FieldsBuilder, region: int, base: int = 0,
                 sparse: sparse_layout.SparseTree | None = None) -> None:  # fmt: skip
        self.builder = builder
        self.region = region
        self.base = base  # byte offset of the tree in its region
        self.number = program.next_tree_number()  # `_snode_tree_id`: trees in the order they were made
        self.sparse = sparse  # the layout of a tree with sparse levels (lang/sparse_layout.py), else None
        self.id = builder.root.id
        self.destroyed = False

    def destroy(self) -> None:
        if self.sparse is not None and not self.destroyed:
            from quadrants.lang import sparse_host

            sparse_host.release(self)  # its pool cells go back to the system
        self.destroyed = True


def layout(root: SNode) -> tuple[int, list[tuple[SNode, Placement]]]:
    """The tree's size in bytes and the placement of each field placed in it (see the module docstring)."""
    out: list[tuple[SNode, Placement]] = []

    def walk(node: SNode, base: int, levels: dict[int, list[tuple[int, int]]]) -> None:
        size, _, offsets = sparse_layout.cell_layout(node)
        for child, off in zip(node.children, offsets):
            if child.kind == "place":
                p = _placement(base + off, levels)
                bits = sparse_layout.slot_of(child, sorted(levels))
                out.append((child, Placement(p.offset, p.shape, p.terms, bits) if bits is not None else p))
                continue
            sub = {a: list(v) for a, v in levels.items()}
            cell = sparse_layout.cell_layout(child)[0]
            ext = [d for _, d in child.extents]
            for n, (a, d) in enumerate(child.extents):  # a quant_array's elements share its word: no stride
                sub.setdefault(a, []).append((d, 0 if child.kind == "quant_array" else cell * prod(ext[n + 1 :])))
            walk(child, base + off, sub)

    walk(root, 0, {})
    return max(sparse_layout.cell_layout(root)[0], 1), out


def _placement(offset: int, levels: dict[int, list[tuple[int, int]]]) -> Placement:
    shape, terms = [], []
    for a in sorted(levels):
        lv = levels[a]
        shape.append(prod(d for d, _ in lv))
        terms.append(tuple((prod(d for d, _ in lv[n + 1 :]), d if n else 0, s) for n, (d, s) in enumerate(lv)))
    return Placement(offset, tuple(shape), tuple(terms))


class _Root:
    """`qd.root`: the program's default builder, finalized when a kernel or Python first uses one of its
    fields; after that, `qd.root.dense(...)` starts a new tree (as in Quadrants)."""

    _builder: FieldsBuilder | None = None

    def _current(self) -> FieldsBuilder:
        b = _Root._builder
        if b is None or b.tree is not None or b._generation != program.get().generation:
            b = _Root._builder = FieldsBuilder()
        return b

    @property
    def _node(self) -> SNode:
        return self._current().root

    def __getattr__(self, name: str) -> Any:
        return getattr(self._current().root, name)

    def lazy_grad(self) -> None:
        """Every real field gets its `.grad`: those of the open tree placed beside them, the others (made with
        `shape=`) as fields of their own shape."""
        self._lazy("grad")

    def lazy_dual(self) -> None:
        self._lazy("dual")

    def deactivate_all(self) -> None:
        """Every tree `qd.root` made (and the open one): all their cells deactivated."""
        deactivate_all_snodes()

    def _lazy(self, kind: str) -> None:
        from quadrants.lang.field import root as flat_fields

        self._current()._lazy(kind)
        flat_fields._lazy(kind)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, (SNode, _Root)) and getattr(other, "kind", "root") == "root"

    def __hash__(self) -> int:
        return 0

    def __repr__(self) -> str:
        return "qd.root"


root = _Root()


class PlaceInfo:
    """`snode.ptr` of a place: `get_snode_grad_type()` (the field is a primal, some field's `.grad` / `.dual`,
    or a validating tape's check bits), `has_adjoint()`, `has_dual()`, `has_adjoint_checkbit()`."""

    def __init__(self, node: SNode) -> None:
        self._node = node

    @property
    def field(self) -> Any:
        return self._node.field

    def _own(self, kind: str) -> bool:
        return self.field is not None and self.field.__dict__.get(kind) is not None

    def has_adjoint(self) -> bool:
        return self._own("grad")

    def has_dual(self) -> bool:
        return self._own("dual")

    def has_adjoint_checkbit(self) -> bool:
        return self._own("_checkbit")

    def get_snode_grad_type(self) -> Any:
        from quadrants.lang.field import live_fields
        from quadrants.types.enums import SNodeGradType

        kinds = {"grad": SNodeGradType.ADJOINT, "dual": SNodeGradType.DUAL,
                 "_checkbit": SNodeGradType.ADJOINT_CHECKBIT}  # fmt: skip
        for f in live_fields():
            for kind, t in kinds.items():
                if self.field is not None and f.__dict__.get(kind) is self.field:
                    return t
        return SNodeGradType.PRIMAL


def materialize() -> None:
    """What a kernel launch does first when fields were declared since the last one, as Quadrants'
    materialization: finalize `qd.root`'s open tree, then raise RuntimeError for a field placed nowhere or a
    `needs_grad` / `needs_dual` companion left unplaced (lazy_grad's companions are placed by finalize)."""
    prog = program.get()
    b = _Root._builder
    number = None
    if b is not None and b.tree is None and not b._empty and b._generation == prog.generation:
        number = b.finalize().number
    start, prog.checked_fields = prog.checked_fields, len(prog.made_fields)
    new = [f for f in (r() for r in prog.made_fields[start:]) if f is not None]
    flat = [f for f in new if not f._unplaced and f._place is None]
    if flat:  # fields made with shape= since the last launch: one tree in Quadrants (its root's)
        number = program.next_tree_number() if number is None else number
        for f in flat:
            f._tree_number = number
    companions = {id(getattr(f, k, None)): k for f in new for k in ("grad", "dual")}
    split = [f for f in new if hasattr(f, "_parts")]  # its components are placed, not it (component_fields.py)
    for f in split:
        from quadrants.lang.component_fields import check_shapes

        check_shapes(f)
    for kind in ("", "grad", "dual"):
        bad = [f for f in new if f._unplaced and companions.get(id(f), "") == kind and not hasattr(f, "_parts")
               and not getattr(f, "_lazy_companion", False)]  # fmt: skip
        if bad:
            bar = "=" * 44 + "\n"
            names = bar.join(f"{f!r}\n" for f in bad)
            if not kind:
                raise QuadrantsRuntimeError(f"These field(s) are not placed:\n{bar}{names}{bar}Please consider "
                                            "specifying a shape for them. E.g.,\n\n  x = qd.field(float, shape=(2, 3))")
            raise QuadrantsRuntimeError(f"These field(s) requrie `needs_{kind}=True`, however their {kind} field(s) "
                                        f"are not placed:\n{bar}{names}{bar}Please consider place the {kind} field(s)."
                                        f" E.g.,\n\n  qd.root.dense(qd.i, 1).place(x.{kind})")  # fmt: skip


def deactivate_all_snodes() -> None:
    """Deactivate every cell of every tree of the program (sparse trees give their pool memory back)."""
    gen = program.get().generation
    for f in _live_tree_fields():
        tree = f._tree
        if tree is not None and not tree.destroyed and tree.builder._generation == gen and id(tree) not in _seen:
            _seen.add(id(tree))
            tree.builder.root.deactivate_all()
    _seen.clear()


_seen: set[int] = set()


def _live_tree_fields() -> list[Any]:
    from quadrants.lang.field import live_fields

    return [f for f in live_fields() if f._tree is not None]


def flat_snode(field: Any) -> SNode:
    """`field.snode` of a field made with `shape=`: its own dense level under a root of its own (the layout
    Quadrants gives it), for inspection only."""
    b = FieldsBuilder()
    level = b.root.dense(axes(*range(len(field.shape))), field.shape) if field.shape else b.root
    node = SNode(b, level, "place", field=field)
    level.children.append(node)
    return node
