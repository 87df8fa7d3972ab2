"""The sparse runtime's allocator: the pools that pointer and dynamic levels take their cells from.

Consumes a pooled `ir.SNodeLevel` (its pool header's offset, its arena); produces, in the module being built,
the pool's internal functions and the calls to them (codegen/sparse.py's walk allocates and frees through here).

A pool (a 64-byte header in the tree's memory, `POOL_*` offsets) is a spin-locked free list: a freed cell is
zeroed and pushed, an allocation pops one. When the list is empty a new cell comes from

- the CPU: the pool's current chunk of `CHUNK_BYTES` (or 4 cells), anonymous `mmap` pages (untouched pages take
  no memory; runtime/sparse.py unmaps the chunks when the tree is reset, so resident memory falls);
- a device (the CUDA backend, emulated too): the tree's arena, memory reserved at the tree's end when it was
  finalized (`device_memory_GB`), carved by a compare-exchange on its header's byte count; the host zeroes
  what was carved when it resets the tree (device code cannot map pages, the host cannot unmap device memory).

Either way an allocation reads zeros. An allocation that finds no memory (a full arena, a refused `mmap`)
returns null after unlocking: the caller (codegen/sparse.py) reports it as the error `ERROR_POOL` instead of
writing anywhere. The lock and the waits in the walk spin: on a GPU that relies on independent thread
scheduling (sm_70 and newer, every architecture the backend targets), under which a spinning thread cannot
starve the warp-mate that holds the lock.
"""

from __future__ import annotations

from typing import Any

from llvmlite import ir as ll

from quadrants.codegen.llvm_types import I1, I8, I32, I64, PTR, VOID
from quadrants.ir import nodes as ir

# pool header fields (bytes): spin lock (i32), free list head, current chunk, bytes used and capacity in it,
# the chunk list, cells live, cells ever carved (Quadrants' `_num_dynamically_allocated`)
POOL_LOCK, POOL_FREE, POOL_CUR, POOL_USED, POOL_CAP, POOL_CHUNKS, POOL_LIVE, POOL_CARVED = 0, 8, 16, 24, 32, 40, 48, 56
CHUNK_HEADER = 64  # a CPU chunk: next chunk (8 bytes), its size (8 bytes), padding; then cells
CHUNK_BYTES = 1 << 20
ARENA_USED, ARENA_HEADER = 0, 64  # the arena header: bytes carved (i64); its cells follow the header
ALLOC, ALLOC_ARENA, FREE = "qd_sparse_alloc", "qd_sparse_alloc_arena", "qd_sparse_free"
MAP_FAILED = -1


def pool_bytes(level: ir.SNodeLevel) -> int:
    """Bytes of one allocation from `level`'s pool: a pointer's cell, a dynamic node's chunk of cells."""
    size = level.cell * (level.chunk if level.kind == "dynamic" else 1)
    return max((size + 15) // 16 * 16, 16)


def alloc(fl: Any, base: ll.Value, level: ir.SNodeLevel) -> ll.Value:
    """A zeroed cell of `level`'s pool in the tree at `base`, or null when no memory is left. `fl.device_pools`
    (the CUDA lowering) picks the arena."""
    b = fl.b
    pool, size = at(b, base, level.pool), _c(pool_bytes(level))
    if fl.device_pools:
        return b.call(_alloc_arena_fn(fl.m), [pool, size, at(b, base, level.arena), _c(level.arena_bytes)])
    return b.call(_alloc_fn(fl.m), [pool, size])


def free(fl: Any, base: ll.Value, level: ir.SNodeLevel, cell: ll.Value) -> None:
    """Give `cell` back to `level`'s pool (zeroed, on the free list)."""
    b = fl.b
    b.call(_free_fn(fl.m), [at(b, base, level.pool), cell, _c(pool_bytes(level))])


def _c(n: int) -> ll.Constant:
    return ll.Constant(I64, n)


def at(b: ll.IRBuilder, p: ll.Value, off: int | ll.Value) -> ll.Value:
    """`p + off` bytes."""
    return b.gep(p, [off if isinstance(off, ll.Value) else _c(off)], source_etype=I8)


def memset0(m: ll.Module, b: ll.IRBuilder, p: ll.Value, n: ll.Value) -> None:
    b.call(m.declare_intrinsic("llvm.memset", [PTR, I64]), [p, ll.Constant(I8, 0), n, ll.Constant(I1, 0)])


def _lock(b: ll.IRBuilder, fn: ll.Function, pool: ll.Value) -> None:
    spin, got = fn.append_basic_block("lock"), fn.append_basic_block("locked")
    b.branch(spin)
    b.position_at_end(spin)
    res = b.cmpxchg(pool, ll.Constant(I32, 0), ll.Constant(I32, 1), "acquire", "monotonic")
    b.cbranch(b.extract_value(res, 1), got, spin)
    b.position_at_end(got)


def _unlock(b: ll.IRBuilder, pool: ll.Value) -> None:
    b.atomic_rmw("xchg", pool, ll.Constant(I32, 0), "release")


def _bump(b: ll.IRBuilder, pool: ll.Value, field: int, by: int) -> None:
    p = at(b, pool, field)
    b.store(b.add(b.load(p, typ=I64), _c(by)), p)


def _function(m: ll.Module, name: str, args: list[ll.Type]) -> tuple[ll.Function | None, ll.IRBuilder | None]:
    """The internal function `name` to define (with its entry builder), or (None, None) once defined."""
    if name in m.globals:
        return None, None
    fn = ll.Function(m, ll.FunctionType(PTR if name != FREE else VOID, args), name)
    fn.linkage = "internal"
    return fn, ll.IRBuilder(fn.append_basic_block("entry"))


def _pop_or(b: ll.IRBuilder, fn: ll.Function, pool: ll.Value) -> tuple[ll.Value, ll.Block, ll.Block]:
    """Lock the pool and pop its free list's head. Returns (head, the block that took it, the block to fill in
    when the list was empty); the builder is left nowhere."""
    _lock(b, fn, pool)
    head = b.load(at(b, pool, POOL_FREE), typ=PTR)
    reuse, fresh = fn.append_basic_block("reuse"), fn.append_basic_block("fresh")
    b.cbranch(b.icmp_unsigned("!=", head, ll.Constant(PTR, None)), reuse, fresh)
    b.position_at_end(reuse)
    b.store(b.load(head, typ=PTR), at(b, pool, POOL_FREE))
    b.store(ll.Constant(PTR, None), head)  # the link word: the rest was zeroed when freed
    return head, reuse, fresh


def _finish(b: ll.IRBuilder, fn: ll.Function, pool: ll.Value, got: list[tuple[ll.Value, ll.Block]]) -> ll.Block:
    """The shared tail: count the cell live, unlock, return it. Returns the block that gives up (unlock, null)."""
    done, full = fn.append_basic_block("done"), fn.append_basic_block("full")
    for _, block in got:
        b.position_at_end(block)
        b.branch(done)
    b.position_at_end(done)
    out = b.phi(PTR)
    for value, block in got:
        out.add_incoming(value, block)
    _bump(b, pool, POOL_LIVE, 1)
    _unlock(b, pool)
    b.ret(out)
    b.position_at_end(full)
    _unlock(b, pool)
    b.ret(ll.Constant(PTR, None))
    return full


def _alloc_fn(m: ll.Module) -> ll.Function:
    """`ptr qd_sparse_alloc(ptr pool, i64 size)` (the CPU): the free list's head, else the current chunk's next
    `size` bytes, else those of a new chunk; null when `mmap` refuses one."""
    fn, b = _function(m, ALLOC, [PTR, I64])
    if fn is None or b is None:
        return m.globals[ALLOC]  # type: ignore[no-any-return]
    pool, size = fn.args
    head, reuse, fresh = _pop_or(b, fn, pool)
    grow, mapped, take = (fn.append_basic_block(x) for x in ("grow", "mapped", "take"))
    b.position_at_end(fresh)
    used = b.load(at(b, pool, POOL_USED), typ=I64)
    cap = b.load(at(b, pool, POOL_CAP), typ=I64)
    b.cbranch(b.icmp_unsigned(">", b.add(used, size), cap), grow, take)
    b.position_at_end(grow)
    body = b.select(b.icmp_unsigned(">", b.mul(size, _c(4)), _c(CHUNK_BYTES)), b.mul(size, _c(4)), _c(CHUNK_BYTES))
    total = b.add(body, _c(CHUNK_HEADER))
    mmap = m.globals.get("mmap") or ll.Function(m, ll.FunctionType(PTR, [PTR, I64, I32, I32, I32, I64]), "mmap")
    prot, flags = ll.Constant(I32, 3), ll.Constant(I32, 0x22)  # read|write; private|anonymous (Linux)
    chunk = b.call(mmap, [ll.Constant(PTR, None), total, prot, flags, ll.Constant(I32, -1), _c(0)])
    refused = b.icmp_signed("==", b.ptrtoint(chunk, I64), _c(MAP_FAILED))
    grow_end = b.block
    b.position_at_end(mapped)
    b.store(b.load(at(b, pool, POOL_CHUNKS), typ=PTR), chunk)
    b.store(total, at(b, chunk, 8))
    b.store(chunk, at(b, pool, POOL_CHUNKS))
    b.store(at(b, chunk, CHUNK_HEADER), at(b, pool, POOL_CUR))
    b.store(_c(0), at(b, pool, POOL_USED))
    b.store(body, at(b, pool, POOL_CAP))
    b.branch(take)
    b.position_at_end(take)
    used2 = b.load(at(b, pool, POOL_USED), typ=I64)
    cell = at(b, b.load(at(b, pool, POOL_CUR), typ=PTR), used2)
    b.store(b.add(used2, size), at(b, pool, POOL_USED))
    _bump(b, pool, POOL_CARVED, 1)
    full = _finish(b, fn, pool, [(head, reuse), (cell, b.block)])
    b.position_at_end(grow_end)
    b.cbranch(refused, full, mapped)
    return fn


def _alloc_arena_fn(m: ll.Module) -> ll.Function:
    """`ptr qd_sparse_alloc_arena(ptr pool, i64 size, ptr arena, i64 cap)` (a device): the free list's head,
    else the arena's next `size` bytes (a compare-exchange on its count: the tree's pools share it); null when
    fewer than `size` of its `cap` bytes are left."""
    fn, b = _function(m, ALLOC_ARENA, [PTR, I64, PTR, I64])
    if fn is None or b is None:
        return m.globals[ALLOC_ARENA]  # type: ignore[no-any-return]
    pool, size, arena, cap = fn.args
    head, reuse, fresh = _pop_or(b, fn, pool)
    bump, claim, take = (fn.append_basic_block(x) for x in ("bump", "claim", "take"))
    b.position_at_end(fresh)
    b.branch(bump)
    b.position_at_end(bump)
    count = at(b, arena, ARENA_USED)
    used = b.load_atomic(count, "monotonic", 8, typ=I64)
    fits = b.icmp_unsigned("<=", b.add(used, size), cap)
    b.position_at_end(claim)
    res = b.cmpxchg(count, used, b.add(used, size), "monotonic", "monotonic")
    b.cbranch(b.extract_value(res, 1), take, bump)
    b.position_at_end(take)
    cell = at(b, at(b, arena, ARENA_HEADER), used)  # zeros: the host zeroes what was carved when it resets
    _bump(b, pool, POOL_CARVED, 1)
    full = _finish(b, fn, pool, [(head, reuse), (cell, take)])
    with b.goto_block(bump):
        b.cbranch(fits, claim, full)
    return fn


def _free_fn(m: ll.Module) -> ll.Function:
    """`void qd_sparse_free(ptr pool, ptr cell, i64 size)`: zero the cell and push it on the free list."""
    fn, b = _function(m, FREE, [PTR, PTR, I64])
    if fn is None or b is None:
        return m.globals[FREE]  # type: ignore[no-any-return]
    pool, cell, size = fn.args
    memset0(m, b, cell, size)
    _lock(b, fn, pool)
    b.store(b.load(at(b, pool, POOL_FREE), typ=PTR), cell)
    b.store(cell, at(b, pool, POOL_FREE))
    _bump(b, pool, POOL_LIVE, -1)
    _unlock(b, pool)
    b.ret_void()
    return fn
