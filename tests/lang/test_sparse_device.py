"""The device pool of sparse SNode trees on the CUDA backend (codegen/sparse_pool.py, runtime/sparse.py), run
through the emulator in every session: each tree reserves an arena of `device_memory_GB` at its end, kernels
carve cells from it, a full arena is an error naming the write (never a write elsewhere), a reset zeroes what
was carved and carves from the start again, and threads allocating together allocate each cell once.

Oracles: Python models of the active cells and their values, the pools' counters, and a field placed right
after the tree's arena (a write past the arena would land there). The emulator runs a task's threads one after
another unless the task is cooperative (it uses `qd.simt` barriers): then each block's threads are host threads
side by side (runtime/emulator.py), so the concurrency test synchronizes a block first to run 64 of them at once.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import quadrants as qd
from quadrants.lang import program
from quadrants.runtime import sparse as runtime
from tests.helpers import define
from tests.lang.test_sparse import COMMON

CELL = 64  # bytes of a pool cell of the trees below: a dense level of 16 f32s (or 16 i32s)


def _device(gb: float = 1.0) -> None:
    qd.init(arch=qd.cuda, cuda_emulate=True, device_memory_GB=gb)


def _arena_used(tree: Any) -> int:
    program.get().fields.memory.host_access()
    return runtime.arena_used(program.get().fields.materialize(tree.region), tree.base, tree.sparse.arena)


def _live(tree: Any, k: int = 0) -> int:
    buf = program.get().fields.materialize(tree.region)
    return runtime.counter(buf, tree.base, tree.sparse.pools[k][0], runtime.POOL_LIVE)


BLOCKS = (
    COMMON  # count(): the active elements, 16 a block
    + """
@qd.kernel
def fill(n: qd.i32):
    for i in range(n * 16):
        x[i] = i + 1.0
"""
)


def test_a_full_arena_is_an_error_naming_the_write_and_nothing_is_written_past_it() -> None:
    _device(1024 * CELL / 2**30)  # room for exactly 1024 cells
    fb = qd.FieldsBuilder()
    x = qd.field(qd.f32)
    blk = fb.pointer(qd.i, 4096)
    blk.dense(qd.i, 16).place(x)
    tree = fb.finalize()
    after = qd.field(qd.i32, shape=64)  # placed right after the tree, in its region
    assert tree.sparse.arena_bytes == 1024 * CELL and tree.sparse.size == tree.sparse.arena + 64 + 1024 * CELL
    assert after._region == tree.region and after._offset == -(-(tree.base + tree.sparse.size) // 64) * 64
    after.fill(7)
    ns = define(BLOCKS, x=x)
    ns["fill"](1024)  # the arena is full now
    assert ns["count"]() == 1024 * 16 and blk._num_dynamically_allocated == 1024 and _arena_used(tree) == 1024 * CELL
    ns["fill"](1024)  # writes to active cells allocate nothing
    with pytest.raises(qd.QuadrantsRuntimeError, match=r"(?s)Sparse SNode pool exhausted: 'x'.*x\[i\] = i \+ 1\.0"):
        ns["fill"](1100)
    values = x.to_numpy()
    assert ns["count"]() == 1024 * 16 and _live(tree) == 1024 and _arena_used(tree) == 1024 * CELL
    np.testing.assert_array_equal(values[: 1024 * 16], np.arange(1024 * 16) + 1.0)
    assert not values[1024 * 16 :].any()  # the blocks that found no memory stayed inactive
    np.testing.assert_array_equal(after.to_numpy(), 7)
    blk.deactivate_all()  # cells back to the free list: the next writes take them, the arena stays full
    ns["fill"](1024)
    assert ns["count"]() == 1024 * 16 and blk._num_dynamically_allocated == 1024
    qd.deactivate_all_snodes()  # the whole tree: the arena carves from its start again
    assert _arena_used(tree) == 0 and blk._num_dynamically_allocated == 0
    ns["fill"](1000)
    assert ns["count"]() == 1000 * 16 and _arena_used(tree) == 1000 * CELL and x[1000 * 16 - 1] == 1000 * 16


def test_append_and_activate_on_a_full_arena_name_their_call() -> None:
    _device(1024 / 2**30)  # one chunk of 256 i32s
    lst = qd.field(qd.i32)
    dyn = qd.root.dynamic(qd.i, 1024, chunk_size=256)
    dyn.place(lst)
    y = qd.field(qd.f32)
    fb = qd.FieldsBuilder()
    ptr = fb.pointer(qd.i, 128)
    ptr.place(y)
    fb.finalize()  # a second tree: its own arena, 1024 bytes, 64 cells of 16 bytes
    ns = define(
        """
@qd.kernel
def grow(n: qd.i32):
    for i in range(n):
        qd.append(dyn, [], i)

@qd.kernel
def size() -> qd.i32:
    return qd.length(dyn, [])

@qd.kernel
def wake(n: qd.i32):
    for i in range(n):
        qd.activate(ptr, [i])
""",
        dyn=dyn, ptr=ptr,
    )  # fmt: skip
    ns["grow"](256)
    assert ns["size"]() == 256 and sorted(lst.to_numpy()[:256]) == list(range(256))
    with pytest.raises(qd.QuadrantsRuntimeError, match=r"(?s)pool exhausted: 'qd.append'.*qd.append\(dyn, \[\], i\)"):
        ns["grow"](10)
    ns["wake"](64)
    with pytest.raises(qd.QuadrantsRuntimeError, match=r"(?s)pool exhausted: 'qd.activate'.*of 1024 bytes"):
        ns["wake"](65)
    assert ptr._num_dynamically_allocated == 64 and dyn._num_dynamically_allocated == 1


def test_a_reset_zeroes_the_carved_cells_and_reuses_them() -> None:
    _device()
    x = qd.field(qd.i32)
    blk = qd.root.pointer(qd.i, 64)
    blk.dense(qd.i, 16).place(x)
    x.from_numpy(np.arange(64 * 16, dtype=np.int32) % 7 + 1)  # every cell active, no element 0
    tree = x._tree
    assert _arena_used(tree) == 64 * CELL
    qd.deactivate_all_snodes()
    assert _arena_used(tree) == 0 and not x.to_numpy().any()
    x[5 * 16] = 9  # block 5 gets the arena's first cell: block 0's bytes before the reset
    expected = np.zeros(64 * 16, np.int32)
    expected[5 * 16] = 9
    np.testing.assert_array_equal(x.to_numpy(), expected)  # stale values would show in elements 81..95
    assert _arena_used(tree) == CELL and blk._num_dynamically_allocated == 1


def test_a_destroyed_tree_zeroes_its_arena() -> None:
    _device()
    fb = qd.FieldsBuilder()
    x = qd.field(qd.i32)
    fb.pointer(qd.i, 8).dense(qd.i, 16).place(x)
    tree = fb.finalize()
    x.fill(0)  # (fills active cells only: none)
    x.from_numpy(np.full(128, 3, np.int32))
    buf = program.get().fields.materialize(tree.region)
    arena = tree.base + tree.sparse.arena + 64
    assert _arena_used(tree) == 8 * CELL and (buf[arena : arena + 8 * CELL].view(np.int32) == 3).all()
    tree.destroy()
    assert _arena_used(tree) == 0 and not buf[tree.base : tree.base + tree.sparse.size].any()


def test_many_threads_allocating_together_allocate_each_cell_once() -> None:
    """8 host threads side by side (a cooperative task's block) meet at a spin gate before each round, then
    4 of them write one fresh cell and 4 another: the claim of a slot and the pool's lock are contended. Run
    fresh (cells from the arena), then twice on recycled cells (the free list, behind the lock)."""
    _device()
    x = qd.field(qd.i32)
    blk = qd.root.pointer(qd.i, 4096)
    blk.dense(qd.i, 4).place(x)
    gate = qd.field(qd.i32, shape=())
    ns = define(
        """
@qd.kernel
def hammer(rounds: qd.i32):
    qd.loop_config(block_dim=8)
    for t in range(8):
        qd.simt.block.sync()  # a cooperative task: the emulator runs the block's threads at once
        for r in range(rounds):
            qd.atomic_add(gate[None], 1)
            while qd.atomic_add(gate[None], 0) < 8 * (r + 1):  # all 8 arrived: they leave together
                pass
            c = r * 2 + t % 2
            qd.atomic_add(x[c * 4 + t // 2], 1)
""",
        x=x, gate=gate,
    )  # fmt: skip
    rounds = 32
    for launch in range(3):
        gate[None] = 0
        ns["hammer"](rounds)
        values = x.to_numpy()
        # each element written once: a cell allocated twice would have lost the writes to the other copy
        np.testing.assert_array_equal(values[: rounds * 8], 1, err_msg=f"launch {launch}")
        assert not values[rounds * 8 :].any() and _live(x._tree) == rounds * 2
        assert blk._num_dynamically_allocated == rounds * 2  # one allocation per cell, recycled ones reused
        blk.deactivate_all()
