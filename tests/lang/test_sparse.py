"""Sparse SNode trees (lang/sparse_layout.py, codegen/sparse.py, frontend/sparse.py) on the session's backend:
writes activate cells, inactive cells read zero, activate/deactivate/is_active/append/length/rescale_index,
struct-for over the active cells only, Python-scope access, the pool allocator (cells recycled through its free
list; memory back to the system after deactivate_all on the CPU, the tree's arena carving from its start again
on a device). Oracles: Python models of the active sets and values; the pool's own counters; the process's
resident memory. The device pool's own cases: tests/lang/test_sparse_device.py."""

from __future__ import annotations

import ctypes
import random
import re
from typing import Any

import numpy as np
import pytest

import quadrants as qd
from quadrants.lang import program
from quadrants.runtime import sparse as runtime
from tests.conftest import BACKEND, qd_init
from tests.helpers import define

DEVICE = BACKEND["name"] != "cpu"  # pools carve their tree's arena, not mmap'd chunks


def _pool(f: qd.Field, k: int = 0) -> tuple[int, int]:
    """(cells live, memory held) of pool `k` of `f`'s tree, read from the headers in field memory: held is the
    pool's chunks on the CPU, the bytes its tree's arena has carved on a device."""
    program.get().fields.memory.host_access()
    return _pool_in(program.get().fields.materialize(f._tree.region), f._tree, k)


def _pool_in(buf: np.ndarray, tree: Any, k: int = 0) -> tuple[int, int]:
    off = tree.sparse.pools[k][0]
    live = runtime.counter(buf, tree.base, off, runtime.POOL_LIVE)
    if DEVICE:
        return live, runtime.arena_used(buf, tree.base, tree.sparse.arena)
    chunk, chunks = runtime.counter(buf, tree.base, off, runtime.POOL_CHUNKS), 0
    while chunk:
        chunks += 1
        chunk = ctypes.c_void_p.from_address(chunk).value or 0
    return live, chunks


COMMON = """
@qd.kernel
def count() -> qd.i32:
    n = 0
    for I in qd.grouped(x):
        n += 1
    return n

@qd.kernel
def total() -> qd.f64:
    s = 0.0
    for I in qd.grouped(x):
        s += x[I]
    return s
"""


def test_pointer_writes_activate_reads_of_inactive_cells_are_zero() -> None:
    x = qd.field(qd.f32)
    blk = qd.root.pointer(qd.i, 8)
    blk.dense(qd.i, 4).place(x)
    ns = define(
        COMMON
        + """
@qd.kernel
def write():
    for i in range(32):
        if i % 9 == 0:
            x[i] = i + 1.0

@qd.kernel
def read(i: qd.i32) -> qd.f32:
    return x[i]

@qd.kernel
def active(i: qd.i32) -> qd.i32:
    return qd.is_active(blk, [i])
""",
        x=x, blk=blk,
    )  # fmt: skip
    assert ns["count"]() == 0 and ns["read"](5) == 0.0
    assert [ns["active"](c) for c in range(8)] == [0] * 8  # reading activated nothing
    ns["write"]()
    assert [ns["active"](c) for c in range(8)] == [1, 0, 1, 0, 1, 0, 1, 0]  # blocks of 0, 9, 18, 27
    assert ns["count"]() == 16  # 4 active blocks of 4 cells: the struct-for visits those only
    assert ns["total"]() == 1 + 10 + 19 + 28
    want = np.zeros(32, np.float32)
    want[[0, 9, 18, 27]] = [1, 10, 19, 28]
    np.testing.assert_array_equal(x.to_numpy(), want)
    assert x[9] == 10.0 and x[30] == 0.0
    x[30] = 5  # Python-scope writes activate too
    assert ns["count"]() == 20 and x[30] == 5.0 and _pool(x)[0] == 5


def test_deactivate_returns_the_cell_to_the_pool_and_zeroes_it() -> None:
    x = qd.field(qd.i32)
    blk = qd.root.pointer(qd.i, 16)
    blk.dense(qd.i, 16).place(x)
    ns = define(
        COMMON
        + """
@qd.kernel
def deact(c: qd.i32):
    qd.deactivate(blk, c)

@qd.kernel
def act(c: qd.i32):
    qd.activate(blk, [c])
""",
        x=x, blk=blk,
    )  # fmt: skip
    x[0] = 1
    x[19] = 7
    live, held = _pool(x)
    assert ns["count"]() == 32 and live == 2 and held == (1 if not DEVICE else 2 * 64)  # one chunk; 2 cells
    ns["deact"](0)
    assert ns["count"]() == 16 and _pool(x)[0] == 1 and x[0] == 0
    ns["act"](0)  # the recycled cell comes back zeroed, from the free list: no new memory
    assert ns["count"]() == 32 and ns["total"]() == 7 and _pool(x) == (2, held)
    ns["act"](5)
    ns["deact"](5)
    ns["deact"](5)  # deactivating an inactive cell does nothing
    assert _pool(x) == (2, held if not DEVICE else 3 * 64)  # cell 5 came from the chunk; the arena's 3rd cell


def test_nested_pointers_deactivating_the_outer_cell_frees_the_inner_ones() -> None:
    z = qd.field(qd.f32)
    p1 = qd.root.pointer(qd.ij, 4)
    p2 = p1.pointer(qd.ij, 2)
    p2.dense(qd.ij, 2).place(z)
    ns = define(
        """
@qd.kernel
def deact(i: qd.i32, j: qd.i32):
    qd.deactivate(p1, [i, j])

@qd.kernel
def total() -> qd.f32:
    s = 0.0
    for i, j in z:
        s += z[i, j] + 1000
    return s
""",
        z=z, p1=p1,
    )  # fmt: skip
    z[5, 7] = 1.5
    z[5, 6] = 0.5  # the same innermost block as (5, 7)
    z[15, 0] = 2.5
    assert ns["total"]() == 8000 + 4.5  # two inner blocks of 4 cells under two outer cells
    assert _pool(z, 0)[0] == 2 and _pool(z, 1)[0] == 2
    ns["deact"](1, 1)  # covers z[4..7, 4..7]: its inner cell goes back first
    assert _pool(z, 0)[0] == 1 and _pool(z, 1)[0] == 1
    assert ns["total"]() == 4000 + 2.5 and z[5, 7] == 0.0


def test_bitmasked() -> None:
    x = qd.field(qd.i32)
    bm = qd.root.bitmasked(qd.ij, (4, 4))
    bm.place(x)
    ns = define(
        COMMON
        + """
@qd.kernel
def run():
    x[1, 2] = 3
    x[3, 3] = 4
    qd.activate(bm, [0, 0])
    qd.deactivate(bm, [3, 3])

@qd.kernel
def active(i: qd.i32, j: qd.i32) -> qd.i32:
    return qd.is_active(bm, [i, j])
""",
        x=x, bm=bm,
    )  # fmt: skip
    ns["run"]()
    got = {(i, j) for i in range(4) for j in range(4) if ns["active"](i, j)}
    assert got == {(1, 2), (0, 0)}
    assert ns["count"]() == 2 and ns["total"]() == 3 and x[3, 3] == 0


def test_dynamic_append_length_and_struct_for() -> None:
    y = qd.field(qd.i32)
    dyn = qd.root.dense(qd.i, 4).dynamic(qd.j, 20, chunk_size=4)
    dyn.place(y)
    ns = define(
        """
@qd.kernel
def fill() -> qd.i32:
    last = 0
    for i in range(4):
        for j in range(i * 6):
            last = qd.append(dyn, i, j * 2)
    return last

@qd.kernel
def lengths() -> qd.i32:
    s = 0
    for i in range(4):
        s = s * 100 + qd.length(dyn, i)
    return s

@qd.kernel
def visited() -> qd.i32:
    n = 0
    for i, j in y:
        n += 1 + y[i, j] * 0
    return n

@qd.kernel
def deact(i: qd.i32):
    qd.deactivate(dyn, i)

@qd.kernel
def overfill():
    for _ in range(25):
        qd.append(dyn, 0, 1)
""",
        y=y, dyn=dyn,
    )  # fmt: skip
    assert ns["fill"]() == 17  # the old length of the last append
    assert ns["lengths"]() == 61218 and ns["visited"]() == 36
    assert y.to_numpy()[2, :12].tolist() == [2 * j for j in range(12)] and y[2, 12] == 0
    ns["deact"](2)
    assert ns["lengths"]() == 60018 and y[2, 0] == 0
    ns["overfill"]()  # a full list stops at its capacity
    assert ns["lengths"]() // 1000000 == 20


def test_struct_for_over_a_node_binds_its_cells_index_and_rescale_index() -> None:
    x = qd.field(qd.i32)
    blk = qd.root.pointer(qd.ij, (4, 2))
    blk.dense(qd.ij, (2, 8)).place(x)
    ns = define(
        """
@qd.kernel
def mark():
    for i, j in blk:
        x[i, j] = 1

@qd.kernel
def act():
    qd.activate(blk, qd.rescale_index(x, blk, [5, 9]))
""",
        x=x, blk=blk,
    )  # fmt: skip
    ns["act"]()  # x's (5, 9) is in blk's cell (2, 1)
    ns["mark"]()  # the loop binds (2, 1): the node's own index space, which qd.activate takes too
    a = x.to_numpy()
    assert a.sum() == 1 and a[2, 1] == 1


def test_offset_and_vector_fields_in_a_sparse_tree() -> None:
    v = qd.Vector.field(3, qd.f32)
    qd.root.pointer(qd.i, 4).dense(qd.i, 4).place(v, offset=-8)
    ns = define(
        """
@qd.kernel
def k():
    v[-7] = [1.0, 2.0, 3.0]

@qd.kernel
def s() -> qd.f32:
    t = 0.0
    for i in v:
        t += v[i].sum() + i
    return t
""",
        v=v,
    )  # fmt: skip
    ns["k"]()
    assert ns["s"]() == 6 + sum(range(-8, -4))  # the block of -8..-5 is active
    assert v[-7].to_numpy().tolist() == [1, 2, 3] and v.to_numpy().shape == (16, 3)


def test_fill_writes_the_active_cells_only() -> None:
    x = qd.field(qd.f32)
    qd.root.pointer(qd.i, 4).dense(qd.i, 2).place(x)
    x[3] = 1
    x.fill(2)
    assert x.to_numpy().tolist() == [0, 0, 2, 2, 0, 0, 0, 0]


@pytest.mark.parametrize("kind", ["pointer", "bitmasked"])
def test_random_activation_sequences_match_a_python_model(kind: str) -> None:
    x = qd.field(qd.i32)
    outer = getattr(qd.root, kind)(qd.ij, (5, 3))
    outer.bitmasked(qd.ij, (2, 2)).place(x) if kind == "pointer" else outer.place(x)
    leaf = x.parent()
    ns = define(
        """
@qd.kernel
def op(code: qd.i32, i: qd.i32, j: qd.i32, v: qd.i32):
    if code == 0:
        x[i, j] = v
    elif code == 1:
        qd.deactivate(leaf, [i, j])
    elif code == 2:
        qd.activate(leaf, [i, j])
    else:
        qd.deactivate(outer, [i // lr, j // lr])

@qd.kernel
def snapshot(out: qd.types.ndarray()):
    for i, j in x:
        out[i, j] = x[i, j] + 1000
""",
        x=x, leaf=leaf, outer=outer, lr=2 if kind == "pointer" else 1,
    )  # fmt: skip
    n, m = x.shape
    lr = 2 if kind == "pointer" else 1
    rng = random.Random(26)
    model: dict[tuple[int, int], int] = {}
    for step in range(150):
        code, i, j, v = rng.randrange(4), rng.randrange(n), rng.randrange(m), rng.randrange(1, 99)
        ns["op"](code, i, j, v)
        if code == 0:
            model[(i, j)] = v
        elif code == 1:
            model.pop((i, j), None)
        elif code == 2:
            model.setdefault((i, j), 0)
        else:
            for key in [k for k in model if k[0] // lr == i // lr and k[1] // lr == j // lr]:
                del model[key]
        out = np.zeros((n, m), np.int32)
        ns["snapshot"](out)
        got = {(a, b): int(out[a, b]) - 1000 for a, b in zip(*np.nonzero(out))}
        assert got == model, step
    want = np.zeros((n, m), np.int32)
    for (a, b), val in model.items():
        want[a, b] = val
    np.testing.assert_array_equal(x.to_numpy(), want)


def test_many_threads_append_to_one_dynamic_node() -> None:
    y = qd.field(qd.i32)
    dyn = qd.root.dynamic(qd.i, 1 << 16, chunk_size=64)
    dyn.place(y)
    ns = define(
        """
@qd.kernel
def push(n: qd.i32) -> qd.i32:
    biggest = 0
    for k in range(n):
        old = qd.append(dyn, [], k)
        qd.atomic_max(biggest, old)
    return biggest

@qd.kernel
def length() -> qd.i32:
    return qd.length(dyn, [])
""",
        dyn=dyn,
    )  # fmt: skip
    n = 50_000
    assert ns["push"](n) == n - 1  # every old length handed out once
    assert ns["length"]() == n
    np.testing.assert_array_equal(np.sort(y.to_numpy()[:n]), np.arange(n))
    # four Python threads launching at once (each launch beyond the first gets threads of its own)
    import threading

    qd.deactivate_all_snodes()
    threads = [threading.Thread(target=ns["push"], args=(10_000,)) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert ns["length"]() == 40_000
    np.testing.assert_array_equal(np.sort(y.to_numpy()[:40_000]), np.repeat(np.arange(10_000), 4))


def test_concurrent_first_writes_to_one_block_allocate_it_once() -> None:
    x = qd.field(qd.i32)
    qd.root.pointer(qd.i, 64).dense(qd.i, 16).place(x)
    ns = define(
        """
@qd.kernel
def hit(n: qd.i32):
    for k in range(n):
        x[(k % 64) * 16 + k // 64 % 16] += 1
""",
        x=x,
    )  # fmt: skip
    ns["hit"](64 * 16 * 20)  # every block first written by many threads at once
    assert (x.to_numpy() == 20).all()
    assert _pool(x)[0] == 64  # the losers of each compare-exchange gave their cells back


def _rss() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096


def test_memory_returns_after_deactivate_all() -> None:
    x = qd.field(qd.f32)
    qd.root.pointer(qd.i, 4096).dense(qd.i, 4096).place(x)  # 64 MiB when every block is active
    ns = define(
        """
@qd.kernel
def touch():
    for i in range(4096 * 4096):
        x[i] = 1.0
""",
        x=x,
    )  # fmt: skip
    x[0] = 0  # the tree exists (its slots: 32 KiB)
    base = _rss()
    ns["touch"]()
    grown = _rss() - base
    assert grown > 48 << 20, grown
    held = 64 if not DEVICE else 4096 * 16384  # 64 chunks of 1 MiB; 4096 cells of 16 KiB carved from the arena
    x.snode.parent(2).deactivate_all()  # the pointer node: its cells are recycled, its memory kept
    assert _pool(x) == (0, held) and x.snode.parent(2)._num_dynamically_allocated == 4096
    ns["touch"]()
    assert _pool(x) == (4096, held) and x.snode.parent(2)._num_dynamically_allocated == 4096  # none carved anew
    x.snode.parent(3).deactivate_all()  # the root: the whole tree (CPU: its chunks back to the system)
    assert _pool(x) == (0, 0)
    if not DEVICE:
        released = base + grown - _rss()
        assert released > 0.8 * grown, (grown, released)
    assert x[5] == 0.0
    before = _rss()
    ns["touch"]()  # and it can be filled again (a device: from the start of its arena, no new memory)
    assert x[4095 * 4096] == 1.0 and _pool(x) == (4096, held)
    if DEVICE:
        assert _rss() - before < 8 << 20, _rss() - before
    qd.deactivate_all_snodes()
    assert _pool(x) == (0, 0)


def test_a_new_program_frees_the_old_programs_pools() -> None:
    x = qd.field(qd.f32)
    qd.root.pointer(qd.i, 8).dense(qd.i, 1024).place(x)
    x[5000] = 1
    tree = x._tree
    buffer = program.get().fields.materialize(tree.region)  # kept alive to read the headers after the end
    assert _pool_in(buffer, tree) == (1, 1 if not DEVICE else 4096)  # a chunk; a cell carved from the arena
    qd_init()
    assert _pool_in(buffer, tree) == (0, 0)


REFUSED_MMAP = """
import resource
import quadrants as qd

qd.init(arch=qd.cpu, offline_cache=False, cpu_max_num_threads=1)
x = qd.field(qd.f32)
blk = qd.root.pointer(qd.i, 64)
blk.dense(qd.i, 1 << 16).place(x)  # cells of 256 KiB: chunks of 4 cells

@qd.kernel
def k(n: qd.i32):
    for b in range(n):
        x[b << 16] = 1.0

k(1)
with open("/proc/self/statm") as f:
    mapped = int(f.read().split()[0]) * 4096
resource.setrlimit(resource.RLIMIT_AS, (mapped + (2 << 20), resource.RLIM_INFINITY))  # room for 2 more chunks
try:
    k(64)
except qd.QuadrantsRuntimeError as e:
    print(str(e).splitlines()[0], blk._num_dynamically_allocated)
"""


@pytest.mark.slow  # starts a Python process (its address space limited)
@pytest.mark.skipif(DEVICE, reason="the CPU's pools map their chunks")
def test_a_refused_mmap_is_a_pool_error_on_the_cpu(tmp_path: Any) -> None:
    import subprocess
    import sys

    (tmp_path / "app.py").write_text(REFUSED_MMAP)
    proc = subprocess.run([sys.executable, "app.py"], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    message, carved = proc.stdout.strip().rsplit(" ", 1)
    assert "Sparse SNode pool exhausted: 'x'" in message and "the system refused a new chunk" in message
    assert 4 < int(carved) < 64 and int(carved) % 4 == 0  # the chunks it got were used, nothing past them


def test_from_numpy_as_a_trees_first_use_writes_through_its_cells() -> None:
    x = qd.field(qd.i32)
    qd.root.pointer(qd.i, 4).dense(qd.i, 4).place(x)
    x.from_numpy(np.arange(16, dtype=np.int32) + 1)  # (finalizes the tree: this once went to a dense view)
    np.testing.assert_array_equal(x.to_numpy(), np.arange(16) + 1)
    assert _pool(x)[0] == 4


def test_destroyed_tree_gives_its_memory_back() -> None:
    fb = qd.FieldsBuilder()
    x = qd.field(qd.f32)
    fb.pointer(qd.i, 8).place(x)
    tree = fb.finalize()
    x[3] = 1
    assert _pool(x)[1] == (1 if not DEVICE else 16)
    tree.destroy()
    assert _pool(x) == (0, 0)  # read before the tree refuses use
    with pytest.raises(qd.QuadrantsRuntimeError, match="destroyed"):
        x[3]


def test_layout_is_in_the_ir_text_so_in_the_offline_key() -> None:
    from tests.golden_support import GoldenCase, ir_text

    texts = []
    for kind in ("pointer", "bitmasked", "dense"):
        x = qd.field(qd.f32)
        getattr(qd.root, kind)(qd.i, 4).dense(qd.i, 4).place(x)
        ns = define(
            """
@qd.kernel
def k():
    for i in range(16):
        x[i] = x[i + 0] + 1.0
""",
            x=x,
        )  # fmt: skip
        texts.append(ir_text(GoldenCase(ns["k"], [])))
    assert "'pointer'" in texts[0] and "'bitmasked'" in texts[1] and "levels" not in texts[2]
    assert " activate" in texts[0] and len(set(texts)) == 3


def test_list_methods_of_a_dynamic_fields_row_and_allocation_count() -> None:
    y = qd.field(qd.i32)
    lst = qd.root.dense(qd.i, 3).dynamic(qd.j, 64, chunk_size=16)
    lst.place(y)
    ns = define(
        """
@qd.kernel
def grow(n: qd.i32):
    for i in range(3):
        for j in range(n * (i + 1)):
            y[i].append(j)

@qd.kernel
def lengths() -> qd.i32:
    return y[0].length() * 10000 + y[1].length() * 100 + y[2].length()

@qd.kernel
def clear(i: qd.i32):
    y[i].deactivate()
""",
        y=y,
    )  # fmt: skip
    assert lst._num_dynamically_allocated == 0
    ns["grow"](10)
    assert ns["lengths"]() == 102030 and y[2, 29] == 29
    assert lst._num_dynamically_allocated == 1 + 2 + 2  # chunks of 16 cells
    ns["clear"](2)
    ns["grow"](1)  # the cleared list takes its chunk back from the free list
    assert ns["lengths"]() == 112203 and lst._num_dynamically_allocated == 5


def test_flat_fields_snode_is_for_inspection_only() -> None:
    x = qd.field(qd.f32, shape=4)
    x[1] = 5.0
    place = x._snode  # Quadrants' attribute: place -> one dense -> root
    assert place.parent().shape == (4,) and place.parent(2).parent() is None
    ns = define(
        """
@qd.kernel
def k() -> qd.f32:
    return x[1]
""",
        x=x,
    )  # fmt: skip
    assert x[1] == 5.0 and ns["k"]() == 5.0  # (reading .snode used to move the field: an AttributeError)


def test_a_launch_checks_every_field_is_placed() -> None:
    ns = define(
        """
@qd.kernel
def k():
    pass
"""
    )
    a = qd.field(qd.i32)
    with pytest.raises(RuntimeError, match=r"These field\(s\) are not placed"):
        ns["k"]()
    qd.init(arch=qd.cpu)
    b = qd.Vector.field(3, qd.f32, needs_grad=True)
    qd.root.dense(qd.i, 2).place(b)
    with pytest.raises(RuntimeError, match=r"requrie `needs_grad=True`, however their grad field\(s\) are not placed"):
        ns["k"]()
    qd.init(arch=qd.cpu)
    c = qd.field(qd.f32)
    qd.root.dense(qd.i, 2).place(c)
    qd.root.lazy_grad()  # lazily made companions are placed beside their primals
    ns["k"]()
    assert c.grad.shape == (2,) and a is not None


def test_sparse_kernels_give_ptx_that_ptxas_accepts() -> None:
    from quadrants.codegen.nvptx import assemble, ptxas_path
    from tests.golden_support import GoldenCase, ptx

    x = qd.field(qd.f32)
    p = qd.root.pointer(qd.i, 8)
    p.dynamic(qd.j, 64, chunk_size=8).place(x)
    ns = define(
        """
@qd.kernel
def k():
    for i in range(8):
        qd.append(dyn, i, 1.0)
        x[i, 3] = x[i, 2] + 1.0
    for i, j in x:
        qd.deactivate(p, i)
""",
        x=x, p=p, dyn=p.children[0],
    )  # fmt: skip
    text = ptx(GoldenCase(ns["k"], []))
    # cells come from the tree's arena (no device heap, no host call), slots and the arena compare-exchanged
    assert "malloc" not in text and "mmap" not in text and re.search(r"atom\.\S*cas\.b64", text)
    if ptxas_path() is None:
        pytest.skip("ptxas is not installed")
    assert assemble(text, "sm_80") and assemble(text, "sm_90")


def test_append_structs_and_matrices_and_sparse_grid() -> None:
    pair = qd.types.struct(a=qd.u8, b=qd.types.vector(2, qd.f32))
    s = pair.field()
    qd.root.dense(qd.i, 3).dynamic(qd.j, 8, chunk_size=2).place(s)
    m = qd.types.matrix(2, 2, qd.i16).field()
    qd.root.dynamic(qd.i, 8).place(m)
    ns = define(
        """
@qd.kernel
def k():
    for i in range(3):
        for j in range(i + 1):
            s[i].append(pair(300 + j, qd.Vector([i, j])))  # a's u8 wraps as in Quadrants
    m.append(qd.Matrix([[1, 2], [3, 4]], dt=qd.i16))
""",
        s=s, m=m, pair=pair,
    )  # fmt: skip
    ns["k"]()
    assert s[2, 1].a == 45 and s[2, 1].b.to_numpy().tolist() == [2, 1] and s[1, 2].a == 0
    assert m[0].to_numpy().tolist() == [[1, 2], [3, 4]]
    g = qd.sparse.grid({"mass": qd.f32, "v": qd.math.vec2}, shape=(4, 5))
    g[1, 2].mass = 3.0
    assert qd.sparse.usage(g) == 1 / 20 and g[1, 2].mass == 3.0 and g[0, 0].mass == 0.0
    ns = define(
        """
@qd.kernel
def visits() -> qd.i32:
    n = 0
    for i, j in g:  # a struct field of a sparse tree: its active cells only
        n += 1 + i * 0
    return n
""",
        g=g,
    )  # fmt: skip
    assert ns["visits"]() == 1


@pytest.mark.parametrize(
    "build",
    [
        lambda x: qd.root.pointer(qd.i, 4).bitmasked(qd.j, 3).dense(qd.ij, (2, 2)).place(x),  # axes split by level
        lambda x: qd.root.pointer(qd.ij, 8).pointer(qd.ij, 8).dense(qd.ij, 2).place(x),  # a two-level parallel prefix
        lambda x: qd.root.dense(qd.i, 2).pointer(qd.j, 5).bitmasked(qd.ij, (3, 2)).place(x),
    ],
)
def test_struct_for_visits_exactly_the_written_cells(build: Any) -> None:
    x = qd.field(qd.i32)
    build(x)
    ns = define(
        """
@qd.kernel
def put(i: qd.i32, j: qd.i32):
    x[i, j] = i * 1000 + j + 1

@qd.kernel
def seen(out: qd.types.ndarray()):
    for i, j in x:
        out[i, j] = x[i, j] + (1 << 20)
""",
        x=x,
    )  # fmt: skip
    n, m = x.shape
    rng = random.Random(n * m)
    written = {(rng.randrange(n), rng.randrange(m)) for _ in range(12)}
    for i, j in written:
        ns["put"](i, j)
    out = np.zeros((n, m), np.int32)
    ns["seen"](out)
    visited = {(int(a), int(b)) for a, b in zip(*np.nonzero(out))}
    leaf = x.parent()
    # dense leaves show every cell of an active block; sparse leaves only the written ones
    assert written <= visited
    if leaf.kind != "dense":
        assert visited == written
    for i, j in visited:
        assert out[i, j] - (1 << 20) == ((i * 1000 + j + 1) if (i, j) in written else 0)


def test_a_bitmasked_level_in_the_parallel_prefix_is_checked() -> None:
    x = qd.field(qd.f32)
    qd.root.bitmasked(qd.i, 128).dense(qd.i, 128).place(x)  # 16384 cells: both levels run in parallel
    ns = define(
        """
@qd.kernel
def count() -> qd.i32:
    n = 0
    for i in x:
        n += 1
    return n
""",
        x=x,
    )  # fmt: skip
    for i in (0, 127, 256, 257):
        x[i] = 1
    assert ns["count"]() == 256  # blocks 0 and 2 of 128 cells


def test_threads_activating_one_pointer_cell_together_allocate_it_once() -> None:
    """The parallel loop's threads walk the 4096 pointer cells in the same order, so they reach a cell not yet
    allocated together: the slot is claimed before its cell is allocated, so each cell is carved once
    (Quadrants' `_num_dynamically_allocated` is the peak of live cells) and every write lands in it. With an
    optimistic allocate-then-install, the losers' cells are carved too (4097 in 4 of 5 rounds on 2 cores)."""
    x = qd.field(qd.i32)
    ptr = qd.root.pointer(qd.i, 4096)
    ptr.dense(qd.i, 16).place(x)
    ns = define(
        """
@qd.kernel
def hammer():
    for t in range(1 << 20):
        qd.atomic_add(x[(t % 4096) * 16 + (t // 4096) % 16], 1)
""",
        x=x,
    )  # fmt: skip
    for round_ in range(5):
        ptr.deactivate_all()
        ns["hammer"]()
        assert (ptr._num_dynamically_allocated, _pool(x)[0]) == (4096, 4096), round_
        np.testing.assert_array_equal(x.to_numpy(), np.full(4096 * 16, 16, np.int32))
