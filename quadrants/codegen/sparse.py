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

The pool (a 64-byte header in the tree's memory, `POOL_*` offsets) is a spin-locked free list over chunks of
`CHUNK_BYTES` (anonymous `mmap` pages on the host, the device heap on a GPU); a cell comes back zeroed (cells
are zeroed when freed), so a newly active cell reads 0. Deactivating a pointer cell first returns the pool cells
under it. The chunks go back to the system when the host deactivates the whole tree (runtime/sparse.py). `fl` is
the FnLowering (codegen/lower.py imports this module).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from llvmlite import ir as ll

from quadrants.codegen.llvm_types import I1, I8, I32, I64, PTR, VOID
from quadrants.ir import nodes as ir

# pool header fields (bytes): spin lock (i32), free list head, current chunk, bytes used and capacity in it,
# the chunk list, cells live, cells ever carved from chunks (Quadrants' `_num_dynamically_allocated`)
POOL_LOCK, POOL_FREE, POOL_CUR, POOL_USED, POOL_CAP, POOL_CHUNKS, POOL_LIVE, POOL_CARVED = 0, 8, 16, 24, 32, 40, 48, 56
CHUNK_HEADER = 64  # a chunk: next chunk (8 bytes), its size (8 bytes), padding; then cells
CHUNK_BYTES = 1 << 20
AMBIENT_BYTES = 4096  # zeros that reads of inactive cells see (an element is at most this big)
ALLOC, FREE = "qd_sparse_alloc", "qd_sparse_free"


def pool_bytes(level: ir.SNodeLevel) -> int:
    """Bytes of one allocation from `level`'s pool: a pointer's cell, a dynamic node's chunk of cells."""
    size = level.cell * (level.chunk if level.kind == "dynamic" else 1)
    return max((size + 15) // 16 * 16, 16)


def _c(n: int) -> ll.Constant:
    return ll.Constant(I64, n)


def _at(b: ll.IRBuilder, p: ll.Value, off: int | ll.Value) -> ll.Value:
    return b.gep(p, [off if isinstance(off, ll.Value) else _c(off)], source_etype=I8)


def _memset(fl: Any, p: ll.Value, n: ll.Value) -> None:
    fn = fl.m.declare_intrinsic("llvm.memset", [PTR, I64])
    fl.b.call(fn, [p, ll.Constant(I8, 0), n, ll.Constant(I1, 0)])


def _libc(m: ll.Module, name: str, ret: ll.Type, args: list[ll.Type]) -> ll.Function:
    if name in m.globals:
        return m.globals[name]  # type: ignore[no-any-return]
    return ll.Function(m, ll.FunctionType(ret, args), name)


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


# ---- the pool: internal functions of each module that uses one ----------------------------------------------


def _lock(b: ll.IRBuilder, fn: ll.Function, pool: ll.Value) -> None:
    spin, got = fn.append_basic_block("lock"), fn.append_basic_block("locked")
    b.branch(spin)
    b.position_at_end(spin)
    res = b.cmpxchg(pool, ll.Constant(I32, 0), ll.Constant(I32, 1), "acquire", "monotonic")
    b.cbranch(b.extract_value(res, 1), got, spin)
    b.position_at_end(got)


def _unlock(b: ll.IRBuilder, pool: ll.Value) -> None:
    b.atomic_rmw("xchg", pool, ll.Constant(I32, 0), "release")


def alloc_fn(m: ll.Module) -> ll.Function:
    """`ptr qd_sparse_alloc(ptr pool, i64 size)`: a zeroed cell (the free list's head, else the current chunk's
    next `size` bytes, else a new chunk)."""
    if ALLOC in m.globals:
        return m.globals[ALLOC]  # type: ignore[no-any-return]
    fn = ll.Function(m, ll.FunctionType(PTR, [PTR, I64]), ALLOC)
    fn.linkage = "internal"
    pool, size = fn.args
    b = ll.IRBuilder(fn.append_basic_block("entry"))
    _lock(b, fn, pool)
    head = b.load(_at(b, pool, POOL_FREE), typ=PTR)
    reuse, fresh, grow, take, done = (fn.append_basic_block(x) for x in ("reuse", "fresh", "grow", "take", "done"))
    b.cbranch(b.icmp_unsigned("!=", head, ll.Constant(PTR, None)), reuse, fresh)
    b.position_at_end(reuse)
    b.store(b.load(head, typ=PTR), _at(b, pool, POOL_FREE))
    b.store(ll.Constant(PTR, None), head)  # the link word: the rest was zeroed when freed
    b.branch(done)
    b.position_at_end(fresh)
    used = b.load(_at(b, pool, POOL_USED), typ=I64)
    cap = b.load(_at(b, pool, POOL_CAP), typ=I64)
    b.cbranch(b.icmp_unsigned(">", b.add(used, size), cap), grow, take)
    b.position_at_end(grow)
    body = b.select(b.icmp_unsigned(">", b.mul(size, _c(4)), _c(CHUNK_BYTES)), b.mul(size, _c(4)), _c(CHUNK_BYTES))
    total = b.add(body, _c(CHUNK_HEADER))
    chunk = _new_chunk(m, b, total)
    b.store(b.load(_at(b, pool, POOL_CHUNKS), typ=PTR), chunk)
    b.store(total, _at(b, chunk, 8))
    b.store(chunk, _at(b, pool, POOL_CHUNKS))
    b.store(_at(b, chunk, CHUNK_HEADER), _at(b, pool, POOL_CUR))
    b.store(_c(0), _at(b, pool, POOL_USED))
    b.store(body, _at(b, pool, POOL_CAP))
    b.branch(take)
    b.position_at_end(take)
    used2 = b.load(_at(b, pool, POOL_USED), typ=I64)
    cell = _at(b, b.load(_at(b, pool, POOL_CUR), typ=PTR), used2)
    b.store(b.add(used2, size), _at(b, pool, POOL_USED))
    carved = _at(b, pool, POOL_CARVED)
    b.store(b.add(b.load(carved, typ=I64), _c(1)), carved)
    b.branch(done)
    b.position_at_end(done)
    out = b.phi(PTR)
    out.add_incoming(head, reuse)
    out.add_incoming(cell, take)
    live = _at(b, pool, POOL_LIVE)
    b.store(b.add(b.load(live, typ=I64), _c(1)), live)
    _unlock(b, pool)
    b.ret(out)
    return fn


def _new_chunk(m: ll.Module, b: ll.IRBuilder, total: ll.Value) -> ll.Value:
    """`total` zeroed bytes: anonymous pages from `mmap` on the host (untouched pages take no memory, `munmap`
    gives them back: runtime/sparse.py), the device heap's `malloc` on a GPU."""
    if "nvptx" in str(m.triple):
        chunk = b.call(_libc(m, "malloc", PTR, [I64]), [total])
        _memset_b(m, b, chunk, total)
        return chunk
    mmap = _libc(m, "mmap", PTR, [PTR, I64, I32, I32, I32, I64])
    prot, flags = ll.Constant(I32, 3), ll.Constant(I32, 0x22)  # read|write; private|anonymous (Linux)
    return b.call(mmap, [ll.Constant(PTR, None), total, prot, flags, ll.Constant(I32, -1), _c(0)])


def _memset_b(m: ll.Module, b: ll.IRBuilder, p: ll.Value, n: ll.Value) -> None:
    b.call(m.declare_intrinsic("llvm.memset", [PTR, I64]), [p, ll.Constant(I8, 0), n, ll.Constant(I1, 0)])


def free_fn(m: ll.Module) -> ll.Function:
    """`void qd_sparse_free(ptr pool, ptr cell, i64 size)`: zero the cell and push it on the free list."""
    if FREE in m.globals:
        return m.globals[FREE]  # type: ignore[no-any-return]
    fn = ll.Function(m, ll.FunctionType(VOID, [PTR, PTR, I64]), FREE)
    fn.linkage = "internal"
    pool, cell, size = fn.args
    b = ll.IRBuilder(fn.append_basic_block("entry"))
    _memset_b(m, b, cell, size)
    _lock(b, fn, pool)
    b.store(b.load(_at(b, pool, POOL_FREE), typ=PTR), cell)
    b.store(cell, _at(b, pool, POOL_FREE))
    live = _at(b, pool, POOL_LIVE)
    b.store(b.sub(b.load(live, typ=I64), _c(1)), live)
    _unlock(b, pool)
    b.ret_void()
    return fn


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


def _installed(fl: Any, slot: ll.Value, level: ir.SNodeLevel, base: ll.Value) -> ll.Value:
    """The cell in `slot`, allocated if the slot is null. The slot is claimed first (compare-exchange null ->
    `_busy`): the one thread that claims it allocates and publishes the cell, the others wait for it, so
    threads activating one cell together allocate once (the pool's carved count is the peak of live cells,
    as Quadrants' `_num_dynamically_allocated` is)."""
    b = fl.b
    cur = b.load_atomic(slot, "acquire", 8, typ=PTR)
    pre = b.block
    claim, wait, done = (fl.fn.append_basic_block(n) for n in ("sp.claim", "sp.wait", "sp.have"))
    b.cbranch(_holds_cell(b, cur), done, claim)
    b.position_at_end(claim)
    res = b.cmpxchg(slot, ll.Constant(PTR, None), _busy(), "acq_rel", "acquire")
    make = fl.fn.append_basic_block("sp.alloc")
    b.cbranch(b.extract_value(res, 1), make, wait)
    b.position_at_end(make)
    new = b.call(alloc_fn(fl.m), [_at(b, base, level.pool), _c(pool_bytes(level))])
    b.atomic_rmw("xchg", slot, new, "release")  # publish (llvmlite has no atomic store through an opaque pointer)
    made = b.block
    b.branch(done)
    b.position_at_end(wait)  # another thread claimed the slot: its cell appears when allocated
    seen = b.load_atomic(slot, "acquire", 8, typ=PTR)
    waited = b.block
    b.cbranch(_holds_cell(b, seen), done, wait)
    b.position_at_end(done)
    out = b.phi(PTR)
    out.add_incoming(cur, pre)
    out.add_incoming(new, made)
    out.add_incoming(seen, waited)
    return out


def _mask_word(fl: Any, storage: ll.Value, level: ir.SNodeLevel, lin: ll.Value) -> tuple[ll.Value, ll.Value]:
    b = fl.b
    cells = level.n * level.cell
    words = _at(b, storage, cells + (-cells) % 4)
    word = b.gep(words, [b.lshr(lin, _c(5))], source_etype=I32)
    bit = b.shl(ll.Constant(I32, 1), b.trunc(b.and_(lin, _c(31)), I32))
    return word, bit


def walk(fl: Any, arr: ir.GlobalNd, idx: list[ll.Value], depth: int, activate: bool,
         missing: ll.Block | None) -> ll.Value:  # fmt: skip
    """The cell of level `depth - 1` on `idx`'s path (the tree's base for depth 0). Activating allocates what
    is missing; otherwise an inactive pointer or dynamic cell branches to `missing`."""
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
            cell = _installed(fl, slot, level, base) if activate else _present(fl, slot, missing)
        else:  # dynamic
            chunk, within = b.udiv(lin, _c(level.chunk)), b.urem(lin, _c(level.chunk))
            slot = b.gep(_at(b, storage, 8), [chunk], source_etype=I64)
            if activate:
                b.atomic_rmw("max", storage, b.trunc(b.add(lin, _c(1)), I32), "monotonic")
                c = _installed(fl, slot, level, base)
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
        return _at(b, walk(fl, arr, idx, len(arr.levels), True, None), inner)
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
        walk(fl, arr, idx, s.depth, True, None)
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
        _memset(fl, cell, _c(level.cell))
    elif level.kind == "dynamic":
        _clear_dynamic(fl, base, storage, level)


def _free_slot(fl: Any, base: ll.Value, slot: ll.Value, level: ir.SNodeLevel) -> None:
    """Empty a pointer slot: the cells under its cell first, then the cell itself back to the pool."""
    b = fl.b
    old = b.atomic_rmw("xchg", slot, ll.Constant(PTR, None), "acq_rel")
    with b.if_then(_holds_cell(b, old)):
        release_cell(fl, base, old, level)
        b.call(free_fn(fl.m), [_at(b, base, level.pool), old, _c(pool_bytes(level))])


def _clear_dynamic(fl: Any, base: ll.Value, storage: ll.Value, level: ir.SNodeLevel) -> None:
    b = fl.b
    b.atomic_rmw("xchg", storage, ll.Constant(I32, 0), "monotonic")
    chunks = (level.n + level.chunk - 1) // level.chunk

    def one(k: ll.Value) -> None:
        slot = b.gep(_at(b, storage, 8), [k], source_etype=I64)
        old = b.atomic_rmw("xchg", slot, ll.Constant(PTR, None), "acq_rel")
        with b.if_then(_holds_cell(b, old)):
            b.call(free_fn(fl.m), [_at(b, base, level.pool), old, _c(pool_bytes(level))])

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
    parent = walk(fl, arr, idx, s.depth - 1, True, None)
    storage = _at(b, parent, level.storage)
    old = b.atomic_rmw("add", storage, ll.Constant(I32, 1), "monotonic")
    full = b.icmp_signed(">=", old, ll.Constant(I32, level.n))
    with b.if_else(full) as (then, otherwise):
        with then:
            b.atomic_rmw("sub", storage, ll.Constant(I32, 1), "monotonic")
        with otherwise:
            lin = b.zext(old, I64)
            chunk, within = b.udiv(lin, _c(level.chunk)), b.urem(lin, _c(level.chunk))
            c = _installed(fl, b.gep(_at(b, storage, 8), [chunk], source_etype=I64), level, base)
            cell = b.gep(c, [b.mul(within, _c(level.cell))], source_etype=I8)
            for v, place in zip(s.values, s.places):
                t = v.type
                b.store(fl.to_mem(fl.v(v), t), _at(b, cell, place))
    return old
