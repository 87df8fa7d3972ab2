"""Lower accesses to fields of sparse SNode trees and the SNode operations (the sparse runtime's kernel side).

Consumes an `ir.ExtPtr` of a field whose `ir.GlobalNd` has `levels` (lang/sparse_layout.py) and `ir.SNodeOp`s;
produces the walk down the tree's levels in the function being built: per level the cell index from the
index digits, then

- dense: the cell; bitmasked: the cell, a write sets its bit (an atomic `or`);
- pointer: the slot's cell; a write that finds it null claims the slot (compare-exchange), allocates a cell
  from the node's pool and publishes it, while other writers of that cell wait; a read that finds no cell
  reads zeros (`ambient`);
- dynamic: the chunk's cell; a write allocates the chunk and raises the length (atomic max), a read past the
  length or of a missing chunk reads zeros.

Cells come from the level's pool (codegen/sparse_pool.py) zeroed, so a newly active cell reads 0; an
allocation that finds the pool's memory exhausted unclaims the slot and fails the kernel with `ERROR_POOL` at
the access's site. Deactivating a pointer cell first returns the pool cells under it. `fl` is the FnLowering
(codegen/lower.py imports this module).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from llvmlite import ir as ll

from quadrants.codegen import sparse_pool
from quadrants.codegen.llvm_types import ERROR_POOL, I8, I32, I64, PTR
from quadrants.codegen.sparse_pool import at as _at
from quadrants.ir import nodes as ir

AMBIENT_BYTES = 4096  # zeros that reads of inactive cells see (an element is at most this big)


def _c(n: int) -> ll.Constant:
    return ll.Constant(I64, n)


def _loop(fl: Any, n: ll.Value, body: Callable[[ll.Value], None]) -> None:
    """for k in range(n): body(k), with an i64 `k`."""
    b = fl.b
    pre = b.block
    head, inner, out = (fl.fn.append_basic_block(x) for x in ("sp.loop", "sp.body", "sp.end"))
    b.branch(head)
    b.position_at_end(head)
    k = b.phi(I64)
    k.add_incoming(_c(0), pre)
    b.cbranch(b.icmp_signed("<", k, n), inner, out)
    b.position_at_end(inner)
    body(k)
    k.add_incoming(b.add(k, _c(1)), b.block)
    b.branch(head)
    b.position_at_end(out)


# ---- walking the levels ----------------------------------------------------------------------------------


def _ambient(fl: Any) -> ll.Value:
    g = fl.m.globals.get("qd_sparse_ambient")
    if g is None:
        g = ll.GlobalVariable(fl.m, ll.ArrayType(I8, AMBIENT_BYTES), "qd_sparse_ambient")
        g.linkage = "internal"
        g.global_constant = False
        g.align = 64
        g.initializer = ll.Constant(ll.ArrayType(I8, AMBIENT_BYTES), None)
    return fl.b.gep(g, [_c(0)], source_etype=I8)


def _linear(fl: Any, level: ir.SNodeLevel, idx: list[ll.Value]) -> ll.Value:
    b = fl.b
    lin: ll.Value = _c(0)
    for pos, div, ext in level.axes:
        digit = b.udiv(idx[pos], _c(div)) if div != 1 else idx[pos]
        digit = b.urem(digit, _c(ext))
        lin = b.add(b.mul(lin, _c(ext)), digit) if lin is not None else digit
    return lin


def _busy() -> ll.Constant:
    """The slot value while one thread allocates its cell (no cell is at address 1)."""
    return ll.Constant(I64, 1).inttoptr(PTR)


def _holds_cell(b: ll.IRBuilder, v: ll.Value) -> ll.Value:
    """Whether a pointer slot's value is a cell (neither null nor `_busy`)."""
    return b.icmp_unsigned(">", b.ptrtoint(v, I64), _c(1))


def _installed(fl: Any, slot: ll.Value, level: ir.SNodeLevel, base: ll.Value, site: int) -> ll.Value:
    """The cell in `slot`, allocated if the slot is null. The slot is claimed first (compare-exchange null ->
    `_busy`): the one thread that claims it allocates and publishes the cell, the others wait for it, so
    threads activating one cell together allocate once (the pool's carved count is the peak of live cells,
    as Quadrants' `_num_dynamically_allocated` is). A claimer whose pool is exhausted puts null back (a waiter
    then claims and fails in turn) and fails the kernel at `site`."""
    b = fl.b
    cur = b.load_atomic(slot, "acquire", 8, typ=PTR)
    pre = b.block
    claim, wait, retry, done = (fl.fn.append_basic_block(n) for n in ("sp.claim", "sp.wait", "sp.retry", "sp.have"))
    b.cbranch(_holds_cell(b, cur), done, claim)
    b.position_at_end(claim)
    res = b.cmpxchg(slot, ll.Constant(PTR, None), _busy(), "acq_rel", "acquire")
    make, publish, full = (fl.fn.append_basic_block(n) for n in ("sp.alloc", "sp.publish", "sp.full"))
    b.cbranch(b.extract_value(res, 1), make, wait)
    b.position_at_end(make)
    new = sparse_pool.alloc(fl, base, level)
    b.cbranch(b.icmp_unsigned("!=", new, ll.Constant(PTR, None)), publish, full)
    b.position_at_end(full)
    b.atomic_rmw("xchg", slot, ll.Constant(PTR, None), "release")
    fl.fail(ERROR_POOL, _pool_site(fl, site), _c(0), 0, _c(level.arena_bytes if fl.device_pools else 0))
    b.position_at_end(publish)
    b.atomic_rmw("xchg", slot, new, "release")  # publish (llvmlite has no atomic store through an opaque pointer)
    b.branch(done)
    b.position_at_end(wait)  # another thread claimed the slot: its cell appears when allocated
    seen = b.load_atomic(slot, "acquire", 8, typ=PTR)
    waited = b.block
    b.cbranch(_holds_cell(b, seen), done, retry)
    b.position_at_end(retry)  # null again: its claimer found no memory, this thread tries in turn
    b.cbranch(b.icmp_unsigned("==", seen, ll.Constant(PTR, None)), claim, wait)
    b.position_at_end(done)
    out = b.phi(PTR)
    out.add_incoming(cur, pre)
    out.add_incoming(new, publish)
    out.add_incoming(seen, waited)
    return out


def _pool_site(fl: Any, site: int) -> int:
    """The site an allocation failure names: the access's own, else the kernel's "sparse_pool" mark."""
    if site >= 0:
        return site
    marks = [k for k, s in enumerate(fl.kernel.sites) if s.kind == "sparse_pool" and s.loc is None]
    return marks[0] if marks else -1


def _mask_word(fl: Any, storage: ll.Value, level: ir.SNodeLevel, lin: ll.Value) -> tuple[ll.Value, ll.Value]:
    b = fl.b
    cells = level.n * level.cell
    words = _at(b, storage, cells + (-cells) % 4)
    word = b.gep(words, [b.lshr(lin, _c(5))], source_etype=I32)
    bit = b.shl(ll.Constant(I32, 1), b.trunc(b.and_(lin, _c(31)), I32))
    return word, bit


def walk(fl: Any, arr: ir.GlobalNd, idx: list[ll.Value], depth: int, activate: bool,
         missing: ll.Block | None, site: int = -1) -> ll.Value:  # fmt: skip
    """The cell of level `depth - 1` on `idx`'s path (the tree's base for depth 0). Activating allocates what
    is missing (a full pool fails at `site`); otherwise an inactive pointer or dynamic cell branches to
    `missing`."""
    b = fl.b
    base = fl.nd[id(arr)].data
    cell = base
    for level in arr.levels[:depth]:
        storage = _at(b, cell, level.storage)
        lin = _linear(fl, level, idx)
        if level.kind in ("dense", "bitmasked"):
            if level.kind == "bitmasked" and activate:
                word, bit = _mask_word(fl, storage, level, lin)
                b.atomic_rmw("or", word, bit, "monotonic")
            cell = b.gep(storage, [b.mul(lin, _c(level.cell))], source_etype=I8)
        elif level.kind == "pointer":
            slot = b.gep(storage, [lin], source_etype=I64)
            cell = _installed(fl, slot, level, base, site) if activate else _present(fl, slot, missing)
        else:  # dynamic
            chunk, within = b.udiv(lin, _c(level.chunk)), b.urem(lin, _c(level.chunk))
            slot = b.gep(_at(b, storage, 8), [chunk], source_etype=I64)
            if activate:
                b.atomic_rmw("max", storage, b.trunc(b.add(lin, _c(1)), I32), "monotonic")
                c = _installed(fl, slot, level, base, site)
            else:
                length = b.zext(b.load_atomic(storage, "monotonic", 4, typ=I32), I64)
                assert missing is not None
                inside = fl.fn.append_basic_block("sp.inside")
                b.cbranch(b.icmp_unsigned("<", lin, length), inside, missing)
                b.position_at_end(inside)
                c = _present(fl, slot, missing)
            cell = b.gep(c, [b.mul(within, _c(level.cell))], source_etype=I8)
    return cell


def _present(fl: Any, slot: ll.Value, missing: ll.Block | None) -> ll.Value:
    b = fl.b
    cur = b.load_atomic(slot, "acquire", 8, typ=PTR)
    assert missing is not None
    ok = fl.fn.append_basic_block("sp.present")
    b.cbranch(_holds_cell(b, cur), ok, missing)
    b.position_at_end(ok)
    return cur


def element_ptr(fl: Any, s: ir.ExtPtr, idx: list[ll.Value]) -> ll.Value:
    """`arr[idx][elem]` of a sparse tree's field: written (activating its path) or read (zeros if inactive)."""
    arr = s.arr
    assert isinstance(arr, ir.GlobalNd) and isinstance(arr.type, ir.NdType)
    at = arr.type
    component = 0
    for e, n in zip(s.elem, at.elem_shape):
        component = component * n + e
    inner = arr.leaf + component * at.dtype.itemsize
    b = fl.b
    if s.activate:
        return _at(b, walk(fl, arr, idx, len(arr.levels), True, None, s.site), inner)
    missing = fl.fn.append_basic_block("sp.inactive")
    done = fl.fn.append_basic_block("sp.done")
    ptr = _at(b, walk(fl, arr, idx, len(arr.levels), False, missing), inner)
    found = b.block
    b.branch(done)
    b.position_at_end(missing)
    zero = _at(b, _ambient(fl), component * at.dtype.itemsize)
    b.branch(done)
    b.position_at_end(done)
    out = b.phi(PTR)
    out.add_incoming(ptr, found)
    out.add_incoming(zero, missing)
    return out


# ---- qd.activate / deactivate / is_active / append / length ---------------------------------------------


def lower_snode_op(fl: Any, s: ir.SNodeOp) -> None:
    arr = s.arr
    assert isinstance(arr, ir.GlobalNd)
    b = fl.b
    idx = [b.sext(fl.v(i), I64) for i in s.indices]
    level = arr.levels[s.depth - 1]
    if s.op == "activate":
        walk(fl, arr, idx, s.depth, True, None, s.site)
        fl.values[id(s)] = ll.Constant(I32, 0)
        return
    if s.op == "append":
        fl.values[id(s)] = _append(fl, s, arr, idx, level)
        return
    missing = fl.fn.append_basic_block("sp.inactive")
    done = fl.fn.append_basic_block("sp.done")
    parent = walk(fl, arr, idx, s.depth - 1, False, missing)
    storage = _at(b, parent, level.storage)
    lin = _linear(fl, level, idx)
    result: ll.Value = ll.Constant(I32, 0)
    if s.op == "is_active":
        result = _is_active(fl, level, storage, lin)
    elif s.op == "length":
        result = b.load_atomic(storage, "monotonic", 4, typ=I32) if level.kind == "dynamic" else ll.Constant(
            I32, level.n)  # fmt: skip
    else:
        _deactivate(fl, arr, level, storage, lin)
    found = b.block
    b.branch(done)
    b.position_at_end(missing)
    b.branch(done)
    b.position_at_end(done)
    out = b.phi(I32)
    out.add_incoming(result, found)
    out.add_incoming(ll.Constant(I32, 0), missing)
    fl.values[id(s)] = out


def _is_active(fl: Any, level: ir.SNodeLevel, storage: ll.Value, lin: ll.Value) -> ll.Value:
    b = fl.b
    if level.kind == "pointer":
        slot = b.gep(storage, [lin], source_etype=I64)
        cur = b.load_atomic(slot, "acquire", 8, typ=PTR)
        return b.zext(_holds_cell(b, cur), I32)
    if level.kind == "bitmasked":
        word, bit = _mask_word(fl, storage, level, lin)
        w = b.load_atomic(word, "monotonic", 4, typ=I32)
        return b.zext(b.icmp_unsigned("!=", b.and_(w, bit), ll.Constant(I32, 0)), I32)
    if level.kind == "dynamic":
        length = b.zext(b.load_atomic(storage, "monotonic", 4, typ=I32), I64)
        return b.zext(b.icmp_unsigned("<", lin, length), I32)
    return ll.Constant(I32, 1)


def _deactivate(fl: Any, arr: ir.GlobalNd, level: ir.SNodeLevel, storage: ll.Value, lin: ll.Value) -> None:
    b = fl.b
    base = fl.nd[id(arr)].data
    if level.kind == "pointer":
        slot = b.gep(storage, [lin], source_etype=I64)
        _free_slot(fl, base, slot, level)
    elif level.kind == "bitmasked":
        word, bit = _mask_word(fl, storage, level, lin)
        b.atomic_rmw("and", word, b.xor(bit, ll.Constant(I32, -1)), "monotonic")
        cell = b.gep(storage, [b.mul(lin, _c(level.cell))], source_etype=I8)
        release_cell(fl, base, cell, level)
        sparse_pool.memset0(fl.m, b, cell, _c(level.cell))
    elif level.kind == "dynamic":
        _clear_dynamic(fl, base, storage, level)


def _free_slot(fl: Any, base: ll.Value, slot: ll.Value, level: ir.SNodeLevel) -> None:
    """Empty a pointer slot: the cells under its cell first, then the cell itself back to the pool."""
    b = fl.b
    old = b.atomic_rmw("xchg", slot, ll.Constant(PTR, None), "acq_rel")
    with b.if_then(_holds_cell(b, old)):
        release_cell(fl, base, old, level)
        sparse_pool.free(fl, base, level, old)


def _clear_dynamic(fl: Any, base: ll.Value, storage: ll.Value, level: ir.SNodeLevel) -> None:
    b = fl.b
    b.atomic_rmw("xchg", storage, ll.Constant(I32, 0), "monotonic")
    chunks = (level.n + level.chunk - 1) // level.chunk

    def one(k: ll.Value) -> None:
        slot = b.gep(_at(b, storage, 8), [k], source_etype=I64)
        old = b.atomic_rmw("xchg", slot, ll.Constant(PTR, None), "acq_rel")
        with b.if_then(_holds_cell(b, old)):
            sparse_pool.free(fl, base, level, old)

    _loop(fl, _c(chunks), one)


def release_cell(fl: Any, base: ll.Value, cell: ll.Value, level: ir.SNodeLevel) -> None:
    """Return the pool cells under one cell of `level` (its `children` own them)."""
    b = fl.b
    for child in level.children:
        storage = _at(b, cell, child.storage)
        if child.kind == "dynamic":
            _clear_dynamic(fl, base, storage, child)
        else:
            _loop(fl, _c(child.n), _releaser(fl, base, storage, child))


def _releaser(fl: Any, base: ll.Value, storage: ll.Value, child: ir.SNodeLevel) -> Callable[[ll.Value], None]:
    """The loop body returning the pool cells of cell `k` of `child` (a pointer's slot, or a level's cell)."""
    b = fl.b

    def one(k: ll.Value) -> None:
        if child.kind == "pointer":
            _free_slot(fl, base, b.gep(storage, [k], source_etype=I64), child)
        else:
            release_cell(fl, base, b.gep(storage, [b.mul(k, _c(child.cell))], source_etype=I8), child)

    return one


def _append(fl: Any, s: ir.SNodeOp, arr: ir.GlobalNd, idx: list[ll.Value], level: ir.SNodeLevel) -> ll.Value:
    """`qd.append(node, I, v)`: take the next index of the list (an atomic add on its length) and store `v`
    there; a full list keeps its length and stores nothing. Gives the old length."""
    b = fl.b
    base = fl.nd[id(arr)].data
    parent = walk(fl, arr, idx, s.depth - 1, True, None, s.site)
    storage = _at(b, parent, level.storage)
    old = b.atomic_rmw("add", storage, ll.Constant(I32, 1), "monotonic")
    full = b.icmp_signed(">=", old, ll.Constant(I32, level.n))
    with b.if_else(full) as (then, otherwise):
        with then:
            b.atomic_rmw("sub", storage, ll.Constant(I32, 1), "monotonic")
        with otherwise:
            lin = b.zext(old, I64)
            chunk, within = b.udiv(lin, _c(level.chunk)), b.urem(lin, _c(level.chunk))
            c = _installed(fl, b.gep(_at(b, storage, 8), [chunk], source_etype=I64), level, base, s.site)
            cell = b.gep(c, [b.mul(within, _c(level.cell))], source_etype=I8)
            for v, place in zip(s.values, s.places):
                t = v.type
                b.store(fl.to_mem(fl.v(v), t), _at(b, cell, place))
    return old
