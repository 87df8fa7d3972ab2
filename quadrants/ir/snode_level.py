"""A level of an SNode tree as the IR records it (the `levels` of `ir.GlobalNd`'s sparse placement).

Its own module, like ir/bits.py, so that lang/sparse_layout.py builds levels without importing every IR node
class at `import quadrants` (ir.nodes is loaded when a kernel first compiles).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class SNodeLevel:
    """One level of an SNode tree on a field's path from the root (lang/sparse_layout.py computes them). Its
    storage starts `storage` bytes into the parent's cell (the tree's base for the first level):

    - dense: `n` cells of `cell` bytes; bitmasked: the same cells, then `ceil(n / 32)` u32 activity words;
    - pointer: `n` 8-byte slots, each null or a cell from the pool whose header is `pool` bytes from the base;
    - dynamic: an i32 length, then `ceil(n / chunk)` 8-byte slots of chunks of `chunk` cells (from the pool).

    `axes` gives the cell's index: per axis `(index, div, extent)`, digit `(I[index] // div) % extent`,
    row-major in that order. `children` are the levels under one cell that own pool cells (deactivating a cell
    returns theirs first). A pooled level's pool carves cells on a device from the tree's arena: its 64-byte
    header `arena` bytes from the base, then `arena_bytes` of cells (0 on the CPU, whose pools map chunks)."""

    kind: str
    storage: int
    axes: tuple[tuple[int, int, int], ...]
    n: int
    cell: int
    pool: int = -1
    chunk: int = 0
    children: tuple[SNodeLevel, ...] = ()
    arena: int = -1
    arena_bytes: int = 0
