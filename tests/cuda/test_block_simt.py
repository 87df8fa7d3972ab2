"""`qd.simt.block`'s reductions, scans and radix ranking (lang/simt/block_scans.py) on the CUDA emulator against
numpy per block, compiled for the fleet through ptxas; barriers and fences in a kernel's serial code."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

import quadrants as qd
from quadrants.lang.simt import block
from tests.cuda.apps import gpu_images

Nd = qd.types.NDArray
DTYPES = {qd.i32: np.int32, qd.f32: np.float32, qd.f64: np.float64, qd.u32: np.uint32}


@pytest.fixture(autouse=True)
def emulated() -> None:
    qd.init(arch=qd.cuda, cuda_emulate=True, offline_cache=False, log_level="warn")


@pytest.mark.parametrize("dt", list(DTYPES))
@pytest.mark.parametrize("block_dim", [32, 128])
def test_block_reductions_and_scans(dt: Any, block_dim: int) -> None:
    n = 3 * block_dim

    @qd.kernel
    def k(x: Nd[dt, 1], red: Nd[dt, 2], alls: Nd[dt, 2], inc: Nd[dt, 2], exc: Nd[dt, 2]):
        qd.loop_config(block_dim=block_dim)
        for i in range(x.shape[0]):
            v = x[i]
            red[i, 0] = block.reduce_add(v, block_dim, dt)
            red[i, 1] = block.reduce_min(v, block_dim, dt)
            red[i, 2] = block.reduce_max(v, block_dim, dt)
            alls[i, 0] = block.reduce_all_add(v, block_dim, dt)
            alls[i, 1] = block.reduce_all_min(v, block_dim, dt)
            alls[i, 2] = block.reduce_all_max(v, block_dim, dt)
            inc[i, 0] = block.inclusive_add(v, block_dim, dt)
            inc[i, 1] = block.inclusive_min(v, block_dim, dt)
            inc[i, 2] = block.inclusive_max(v, block_dim, dt)
            exc[i, 0] = block.exclusive_add(v, block_dim, dt)
            exc[i, 1] = block.exclusive_min(v, block_dim, dt)
            exc[i, 2] = block.exclusive_max(v, block_dim, dt)

    npt = DTYPES[dt]
    x = np.random.default_rng(7).permutation(n).astype(npt) + npt(1)
    outs = [np.zeros((n, 3), npt) for _ in range(4)]
    k(x, *outs)
    red, alls, inc, exc = outs
    blocks = x.reshape(-1, block_dim)
    folds = (np.add, np.minimum, np.maximum)
    for c, fold in enumerate(folds):
        want = fold.reduce(blocks, axis=1)
        np.testing.assert_array_equal(red[::block_dim, c], want)  # thread 0 of each block
        np.testing.assert_array_equal(alls[:, c], np.repeat(want, block_dim))
        scan = fold.accumulate(blocks, axis=1)
        np.testing.assert_array_equal(inc[:, c], scan.reshape(-1))
        ident = {0: 0, 1: np.inf if npt in (np.float32, np.float64) else np.iinfo(npt).max,
                 2: -np.inf if npt in (np.float32, np.float64) else np.iinfo(npt).min}[c]  # fmt: skip
        first = np.full((blocks.shape[0], 1), ident, npt)
        np.testing.assert_array_equal(exc[:, c], np.concatenate([first, scan[:, :-1]], axis=1).reshape(-1))
    ptx = gpu_images(k).ptx["sm_80"]
    assert "shfl.sync" in ptx and ("bar.sync" in ptx) == (block_dim > 32)  # one warp: no shared memory, no barrier


@qd.func
def _affine(a, b):
    """Composition of affine maps packed as (m << 16) | c: associative, not commutative."""
    m = ((a >> 16) * (b >> 16)) & 0xFFFF
    c = ((a >> 16) * (b & 0xFFFF) + (a & 0xFFFF)) & 0xFFFF
    return (m << 16) | c


def test_generic_block_scans_take_a_func_and_keep_the_order_of_threads() -> None:
    block_dim = 64

    @qd.kernel
    def k(x: Nd[qd.i32, 1], inc: Nd[qd.i32, 1], exc: Nd[qd.i32, 1], red: Nd[qd.i32, 1]):
        qd.loop_config(block_dim=block_dim)
        for i in range(x.shape[0]):
            inc[i] = block.inclusive_scan(x[i], block_dim, _affine, qd.i32)
            exc[i] = block.exclusive_scan(x[i], block_dim, _affine, 1 << 16, qd.i32)
            red[i] = block.reduce_all(x[i], block_dim, _affine, qd.i32)

    def affine(a: int, b: int) -> int:  # on the i32 bits, as the kernel computes it
        a, b = a & 0xFFFFFFFF, b & 0xFFFFFFFF
        r = ((((a >> 16) * (b >> 16)) & 0xFFFF) << 16) | (((a >> 16) * (b & 0xFFFF) + (a & 0xFFFF)) & 0xFFFF)
        return r - (1 << 32) if r >= 1 << 31 else r

    n = 2 * block_dim
    x = np.array([(((k % 5) + 2) << 16) | ((k * 7 + 3) & 0xFF) for k in range(n)], np.int32)
    inc, exc, red = (np.zeros(n, np.int32) for _ in range(3))
    k(x, inc, exc, red)
    for b in range(2):
        acc = 1 << 16  # the identity map
        for t in range(block_dim):
            i = b * block_dim + t
            assert exc[i] == acc, (b, t)
            acc = affine(acc, int(x[i]))
            assert inc[i] == acc, (b, t)
        assert (red[b * block_dim : (b + 1) * block_dim] == acc).all()


@pytest.mark.parametrize("bit_start, num_bits", [(0, 8), (4, 5), (16, 3)])
def test_radix_rank_is_the_stable_order_by_digit(bit_start: int, num_bits: int) -> None:
    block_dim = 256

    @qd.kernel
    def k(keys: Nd[qd.u32, 1], ranks: Nd[qd.i32, 1], bins: Nd[qd.i32, 1], excl: Nd[qd.i32, 1]):
        qd.loop_config(block_dim=block_dim)
        for i in range(keys.shape[0]):
            b = qd.simt.block.SharedArray((block_dim,), qd.i32)
            e = qd.simt.block.SharedArray((block_dim,), qd.i32)
            ranks[i] = block.radix_rank_match_atomic_or(keys[i], block_dim, 8, bit_start, num_bits, b, e)
            t = qd.simt.block.thread_idx()
            bins[i] = b[t]
            excl[i] = e[t]

    rng = np.random.default_rng(bit_start)
    keys = np.concatenate([rng.integers(0, 1 << 24, 256), np.repeat(rng.integers(0, 1 << 24, 16), 16)]).astype(np.uint32)
    ranks, bins, excl = (np.zeros(512, np.int32) for _ in range(3))
    k(keys, ranks, bins, excl)
    for b in range(2):
        kb = keys[b * 256 : (b + 1) * 256]
        digit = (kb >> np.uint32(bit_start)) & np.uint32((1 << num_bits) - 1)
        order = np.argsort(digit, kind="stable")
        want = np.empty(256, np.int32)
        want[order] = np.arange(256)
        np.testing.assert_array_equal(ranks[b * 256 : (b + 1) * 256], want)
        counts = np.bincount(digit, minlength=256)
        np.testing.assert_array_equal(bins[b * 256 : (b + 1) * 256], counts)
        np.testing.assert_array_equal(excl[b * 256 : (b + 1) * 256], np.concatenate([[0], np.cumsum(counts)[:-1]]))
    assert "match.any.sync.b32" in gpu_images(k).ptx["sm_80"]


def test_a_block_scan_in_a_loop_never_reads_a_later_iterations_values() -> None:
    """Each thread runs the body several times (a grid-stride loop over 4x the grid): the scan's shared memory is
    reused and must not be overwritten while another thread still reads it."""
    block_dim = 64

    @qd.kernel
    def k(x: Nd[qd.i32, 1], out: Nd[qd.i32, 1]):
        qd.loop_config(block_dim=block_dim)
        for i in range(x.shape[0]):
            out[i] = block.inclusive_add(x[i], block_dim, qd.i32) + block.reduce_all_max(x[i], block_dim, qd.i32)

    n = 16 * block_dim  # more than the emulator's grid of 3 blocks: each thread loops
    x = np.random.default_rng(3).integers(0, 100, n).astype(np.int32)
    out = np.zeros(n, np.int32)
    k(x, out)
    blocks = x.reshape(-1, block_dim)
    np.testing.assert_array_equal(out, (np.cumsum(blocks, axis=1) + blocks.max(axis=1)[:, None]).reshape(-1))


def test_block_dims_that_are_not_whole_warps_are_refused() -> None:
    @qd.kernel
    def k(x: Nd[qd.i32, 1]):
        qd.loop_config(block_dim=48)
        for i in range(x.shape[0]):
            x[i] = block.reduce_add(x[i], 48, qd.i32)

    with pytest.raises(qd.QuadrantsError, match="block_dim must be a compile-time multiple of the subgroup size"):
        k(np.zeros(48, np.int32))


def test_barriers_and_fences_in_the_kernels_serial_code_are_nothing_and_old_names_warn(monkeypatch: Any) -> None:
    from quadrants.frontend import simt_calls

    monkeypatch.setattr(simt_calls, "_WARNED", set())

    @qd.kernel
    def k(a: Nd[qd.u32, 1]):
        qd.loop_config(block_dim=32)
        for i in range(32):
            a[i] = i
            qd.simt.block.mem_sync()
        qd.simt.warp.sync(qd.u32(0xFFFFFFFF))  # one thread here: nothing to wait for
        qd.simt.block.sync()
        qd.simt.grid.memfence()
        for i in range(16):
            a[i] = a[i + 16]

    a = np.zeros(32, np.uint32)
    with warnings.catch_warnings(record=True) as records:
        warnings.simplefilter("always")
        k(a)
    np.testing.assert_array_equal(a, np.arange(32) % 16 + 16)
    found = sorted(str(r.message) for r in records if issubclass(r.category, DeprecationWarning))
    assert len(found) == 2 and "qd.simt.block.mem_fence()" in found[0] and "qd.simt.grid.mem_fence()" in found[1]


@pytest.mark.parametrize("dt", [qd.f32, qd.f64])
def test_block_min_max_over_eight_warps(dt: Any) -> None:
    """Thread 0 folds 8 warps' results in a loop of 7 turns: with llvm.maxnum, LLVM 22's vectorizer took that loop
    as a reduction and skipped its last 3 turns (codegen/math.py float_min_max)."""
    block_dim = 256

    @qd.kernel
    def k(x: Nd[dt, 1], out: Nd[dt, 2]):
        qd.loop_config(block_dim=block_dim)
        for i in range(x.shape[0]):
            out[i, 0] = block.reduce_min(x[i], block_dim, dt)
            out[i, 1] = block.reduce_max(x[i], block_dim, dt)
            out[i, 2] = block.reduce_all_max(x[i], block_dim, dt)

    npt = DTYPES[dt]
    x = np.random.default_rng(0).permutation(2 * block_dim).astype(npt) + npt(1)
    out = np.zeros((2 * block_dim, 3), npt)
    k(x, out)
    blocks = x.reshape(-1, block_dim)
    np.testing.assert_array_equal(out[::block_dim, 0], blocks.min(axis=1))
    np.testing.assert_array_equal(out[::block_dim, 1], blocks.max(axis=1))
    np.testing.assert_array_equal(out[:, 2], np.repeat(blocks.max(axis=1), block_dim))
