"""The memory layout of an SNode tree that has sparse levels (pointer, bitmasked, dynamic).

Consumes a tree's nodes (lang/snode.py); produces its size in bytes, the byte offsets of its pools' headers and,
per placed field, a `SparsePlacement`: the `ir.SNodeLevel` path from the root and the element's offset in the
last cell, which kernels bake into the field's `ir.GlobalNd` (codegen/sparse.py walks it). All-dense trees keep
the flat address terms of `snode.layout`.

A cell holds its children's storage in the order they were added, each aligned to its own alignment:

- a place: the element (its components contiguous); a dense level: its `n` cells;
- a bitmasked level: its cells, then one u32 activity word per 32 cells;
- a pointer level: `n` 8-byte slots; a dynamic level: an i32 length (8 bytes) and one 8-byte slot per chunk.

Cells of pointer and dynamic levels live outside the tree's cells, in memory their pool hands out
(codegen/sparse_pool.py: a free list, then mmap'd chunks on the CPU, the tree's arena on a device); the pool
headers (64 bytes each) follow the root cell, then the arena: a 64-byte header (the bytes carved so far) and
`arena_bytes` of cells (none on the CPU), the end of the tree.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import prod
from typing import Any

from quadrants.ir.bits import BitSlot
from quadrants.ir.snode_level import SNodeLevel

SPARSE_KINDS = ("pointer", "bitmasked", "dynamic")
POOLED = ("pointer", "dynamic")
BIT_KINDS = ("bit_struct", "quant_array")  # nodes whose fields are bits of a word (lang/bitpacked.py)
POOL_HEADER = 64
POOL_CELL_ALIGN = 16


@dataclass(frozen=True)
class SparsePlacement:
    """A field of a sparse tree: its path from the root and its element's byte offset in the last cell."""

    offset: int  # from the field's base (the tree's): 0
    shape: tuple[int, ...]
    levels: tuple[SNodeLevel, ...]
    leaf: int
    terms: tuple[Any, ...] = ()
    bits: BitSlot | None = None  # a quantized field: its bits of the word at `leaf` (lang/bitpacked.py)


@dataclass(frozen=True)
class SparseTree:
    size: int
    pools: tuple[tuple[int, str, int], ...]  # (header offset, node kind, node id)
    placements: tuple[tuple[Any, SparsePlacement], ...]  # (place node, placement)
    arena: int = -1  # the arena header's offset (a tree with pools), else -1
    arena_bytes: int = 0


def has_sparse(root: Any) -> bool:
    stack = [root]
    while stack:
        node = stack.pop()
        if node.kind in SPARSE_KINDS:
            return True
        stack.extend(node.children)
    return False


def _n(node: Any) -> int:
    return prod(d for _, d in node.extents)


def word_bytes(node: Any) -> int:
    """The word of a bit_struct (a qd.BitpackedFields' cell) or of a quant_array level, in bytes."""
    return (node.bitpack.word.bits if node.kind == "bit_struct" else node.word_bits) // 8


def cell_layout(node: Any) -> tuple[int, int, list[int]]:
    """(cell size, alignment, each child's storage offset in the cell) of `node`, dense and sparse trees alike."""
    if node.kind in BIT_KINDS:  # its fields are bits of one word
        w = word_bytes(node)
        return w, w, [0] * len(node.children)
    off, align, offsets = 0, 1, []
    for c in node.children:
        size, a = _footprint(c)
        off = (off + a - 1) // a * a
        offsets.append(off)
        off += size
        align = max(align, a)
    return (off + align - 1) // align * align, align, offsets


def _footprint(node: Any) -> tuple[int, int]:
    """(bytes, alignment) of `node`'s storage in its parent's cell."""
    if node.kind == "place":
        f = node.field
        return prod(f.element_shape) * f._prim.itemsize, f._prim.itemsize
    if node.kind in BIT_KINDS:  # a quant_array's cells share one word
        return word_bytes(node), word_bytes(node)
    n = _n(node)
    if node.kind == "pointer":
        return 8 * n, 8
    if node.kind == "dynamic":
        return 8 + 8 * _chunks(node), 8
    cell, align, _ = cell_layout(node)
    if node.kind == "bitmasked":
        return n * cell + 4 * ((n + 31) // 32) + (-(n * cell)) % 4, max(align, 4)
    return n * cell, align


def _chunks(node: Any) -> int:
    return (_n(node) + node.chunk_size - 1) // node.chunk_size


def layout(root: Any, arena_bytes: int = 0) -> SparseTree:
    """The tree's size, its pools and each placed field's path (see the module docstring); a tree with pools
    reserves an arena of `arena_bytes` (a device's pool memory) at its end."""
    root_cell = cell_layout(root)[0]
    pools: dict[int, int] = {}  # node id -> header offset
    pool_list: list[tuple[int, str, int]] = []

    def number(node: Any) -> None:
        if node.kind in POOLED:
            pools[id(node)] = (root_cell + POOL_HEADER - 1) // POOL_HEADER * POOL_HEADER + POOL_HEADER * len(pools)
            pool_list.append((pools[id(node)], node.kind, node.id))
        for c in node.children:
            number(c)

    number(root)
    end = max(list(pools.values()) + [root_cell - POOL_HEADER]) + POOL_HEADER
    arena = -1
    if pools:
        arena = (end + POOL_HEADER - 1) // POOL_HEADER * POOL_HEADER
        end = arena + POOL_HEADER + arena_bytes

    def level(node: Any, storage: int, axes: tuple[tuple[int, int, int], ...]) -> SNodeLevel:
        cell, _, offsets = cell_layout(node)
        children = tuple(level(c, o, ()) for c, o in zip(node.children, offsets) if _owns_pool_cells(c))
        pooled = id(node) in pools
        return SNodeLevel(node.kind, storage, axes, _n(node), cell, pools.get(id(node), -1),
                          getattr(node, "chunk_size", 0), children, arena if pooled else -1,
                          arena_bytes if pooled else 0)  # fmt: skip

    out: list[tuple[Any, SparsePlacement]] = []

    def walk(node: Any, path: list[tuple[Any, int]], base: int = 0) -> None:
        _, _, offsets = cell_layout(node)
        for child, off in zip(node.children, offsets):
            if child.kind == "place":
                tail = node.extents if node.kind == "quant_array" else ()
                if path or tail:
                    out.append((child, _placement(path, base + off, child, tail)))
                else:  # placed in the root's cell: a 0-d field at that offset, no level to walk
                    out.append((child, SparsePlacement(base + off, (), (), 0, (), slot_of(child, []))))
                continue
            if child.kind in BIT_KINDS:  # its fields are at its word: no level of its own to walk
                walk(child, path, base + off)
                continue
            walk(child, path + [(child, off)])

    def _placement(path: list[tuple[Any, int]], leaf: int, place: Any, tail: Any) -> SparsePlacement:
        ext: dict[int, int] = {}
        for node, _ in path:
            for a, d in node.extents:
                ext[a] = ext.get(a, 1) * d
        for a, d in tail:  # a quant_array's elements: index digits below the last level, bits of one word
            ext[a] = ext.get(a, 1) * d
        levels, below = [], dict(ext)
        position = {a: k for k, a in enumerate(sorted(ext))}  # an axis's place among the field's indices
        for node, storage in path:
            axes = []
            for a, d in node.extents:
                below[a] //= d
                axes.append((position[a], below[a], d))
            levels.append(level(node, storage, tuple(axes)))
        shape = tuple(ext[a] for a in sorted(ext))
        if not levels:  # a quant_array in the root's cell: its words' terms are none
            return SparsePlacement(leaf, shape, (), 0, ((),) * len(shape), slot_of(place, sorted(ext)))
        return SparsePlacement(0, shape, tuple(levels), leaf, (), slot_of(place, sorted(ext)))

    walk(root, [])
    return SparseTree(max(end, 1), tuple(pool_list), tuple(out), arena, arena_bytes if pools else 0)


def slot_of(place: Any, axes: list[int]) -> BitSlot | None:
    """The bits of a field placed under a bit_struct or a quant_array (`axes`: the field's, sorted); None for
    any other place."""
    from quadrants.lang import bitpacked

    parent = place.parent()
    if parent.kind == "bit_struct":
        return parent.bitpack.slot(place.field._bit_member)
    if parent.kind == "quant_array":
        digits = tuple((axes.index(a), 1, d) for a, d in parent.extents)
        return bitpacked.array_slot(place.field, parent.word_bits, _n(parent), digits)
    return None


def _owns_pool_cells(node: Any) -> bool:
    if node.kind in POOLED:
        return True
    return node.kind != "place" and any(_owns_pool_cells(c) for c in node.children)


def cell_bytes(node: Any) -> int:
    return cell_layout(node)[0]


def child_offsets(node: Any) -> list[int]:
    return cell_layout(node)[2]
