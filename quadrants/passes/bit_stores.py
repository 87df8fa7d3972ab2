"""Fuse consecutive stores into members of one bit-packed word (qd.BitpackedFields) into one `ir.BitStore`, as
Quadrants' optimize_bit_struct_stores does: the word is then written once, and a store of every member writes
it whole (codegen/quant.py), and shared exponents are computed from all the new values at once.

Within one block, between statements that hold blocks (if, loops), the stores to the same word (same field
layout and equal indices) become one `BitStore` where the last of them was; a load of that word between two of
them stops the fusion of those before it (the load must see them), as in Quadrants. Stores into a quant_array
are never fused.

    before:  %7 = extptr %1[%5] : ptr<i32>          (x, bits 0-15 of the word)
             store %7, %6
             %9 = extptr %2[%5] : ptr<i32>          (y, bits 16-31 of the same word)
             store %9, %8
    after:   %7 = extptr %1[%5] : ptr<i32>
             %9 = extptr %2[%5] : ptr<i32>
             bitstore %7, %9, %6, %8
"""

from __future__ import annotations

from typing import Any

from quadrants.ir import nodes as ir


def run(kernel: ir.Kernel) -> None:
    for block in _blocks(kernel):
        _fuse(block)


def _blocks(kernel: ir.Kernel) -> list[ir.Block]:
    out: list[ir.Block] = []
    roots = [kernel.body] + [f.body for f in kernel.functions]
    stack = list(roots)
    while stack:
        b = stack.pop()
        out.append(b)
        for s in b.stmts:
            stack.extend(s.blocks())
    return out


def _word_ptr(p: ir.Value) -> bool:
    return isinstance(p, ir.ExtPtr) and isinstance(p.arr, ir.GlobalNd) and p.arr.bits is not None \
        and not p.arr.bits.array  # fmt: skip


def _fuse(block: ir.Block) -> None:
    keys: dict[int, Any] = {}
    versions: dict[int, int] = {}  # alloca -> stores seen (loads of a local read the same value in between)
    groups: dict[Any, list[ir.Store]] = {}
    loaded: set[Any] = set()
    merged: dict[int, ir.Stmt | None] = {}  # store id -> its replacement (None: removed)

    def close() -> None:
        for stores in groups.values():
            if len(stores) < 2:
                continue
            last: dict[int, ir.Store] = {}
            for s in stores:  # a member stored twice keeps its last value
                assert isinstance(s.ptr, ir.ExtPtr) and isinstance(s.ptr.arr, ir.GlobalNd)
                assert s.ptr.arr.bits is not None
                last[s.ptr.arr.bits.member] = s
            kept = [s for s in stores if last[s.ptr.arr.bits.member] is s]  # type: ignore[attr-defined]
            for s in stores[:-1]:
                merged[id(s)] = None
            if len(kept) == 1:
                merged[id(stores[-1])] = kept[0]
                continue
            merged[id(stores[-1])] = ir.BitStore(ptrs=tuple(s.ptr for s in kept), values=tuple(s.value for s in kept),
                                                 loc=stores[-1].loc)  # fmt: skip
        groups.clear()
        loaded.clear()

    for s in block.stmts:
        if s.blocks():
            close()
            continue
        if isinstance(s, ir.Value):
            keys[id(s)] = _key(s, keys, versions)
        if isinstance(s, ir.Store) and isinstance(s.ptr, ir.Alloca):
            versions[id(s.ptr)] = versions.get(id(s.ptr), 0) + 1
        if isinstance(s, ir.Store) and _word_ptr(s.ptr):
            word = keys[id(s.ptr)]
            if word in loaded:  # a load of the word came after the stores gathered so far: they stay apart
                groups.pop(word, None)
                loaded.discard(word)
            else:
                groups.setdefault(word, []).append(s)
        elif isinstance(s, ir.Load) and _word_ptr(s.ptr) and keys[id(s.ptr)] in groups:
            loaded.add(keys[id(s.ptr)])
    close()
    if merged:
        out: list[ir.Stmt] = []
        for s in block.stmts:
            if id(s) in merged:
                r = merged[id(s)]
                if r is not None:
                    out.append(r)
            else:
                out.append(s)
        block.stmts = out


def _key(v: ir.Value, keys: dict[int, Any], versions: dict[int, int]) -> Any:
    """A value's structure, equal for values that must be equal (the word an element pointer addresses)."""

    def k(x: ir.Value) -> Any:
        return keys.get(id(x), ("id", id(x)))

    if isinstance(v, ir.ExtPtr) and _word_ptr(v):
        a = v.arr
        assert isinstance(a, ir.GlobalNd)
        return ("word", a.region, a.offset, a.terms, a.levels, a.leaf, tuple(k(i) for i in v.indices))
    if isinstance(v, ir.Const):
        return ("const", v.value, v.type)
    if isinstance(v, ir.Load) and isinstance(v.ptr, ir.Alloca):
        return ("load", id(v.ptr), versions.get(id(v.ptr), 0))
    if isinstance(v, ir.LoopCoord):
        return ("coord", id(v.loop), v.dim)
    if isinstance(v, (ir.Binary, ir.Unary, ir.Cast)):
        return (type(v).__name__, getattr(v, "op", getattr(v, "bitcast", None)), v.type,
                tuple(k(x) for x in v.operands()))  # fmt: skip
    return ("id", id(v))
