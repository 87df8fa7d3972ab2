"""`qd.simt.subgroup`, `qd.simt.warp`, `qd.simt.block` / `grid` folds and fences on the CUDA backend: run on the
emulator against numpy oracles (per warp of 32 lanes, per tile of 2**k lanes), and compiled for the fleet's GPU
architectures through ptxas. The CPU backend refuses them with the kernel's location."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import quadrants as qd
from quadrants.codegen import nvptx
from quadrants.lang.simt import subgroup as sg
from tests.cuda.apps import FLEET, gpu_images, run_twice

Nd = qd.types.NDArray
N = 96  # three warps (blocks of 32 threads on the emulator: qd.loop_config(block_dim=32))
LANE = np.arange(N) % 32
DTYPES = {qd.i32: np.int32, qd.u32: np.uint32, qd.f32: np.float32, qd.i64: np.int64, qd.u64: np.uint64,
          qd.f64: np.float64}  # fmt: skip


@pytest.fixture(autouse=True)
def emulated() -> None:
    qd.init(arch=qd.cuda, cuda_emulate=True, offline_cache=False, log_level="warn")


def _values(dt: Any, seed: int = 0) -> np.ndarray:
    """Values whose 64-bit forms use both halves (and negative ones for the signed types)."""
    rng = np.random.default_rng(seed)
    npt = DTYPES[dt]
    if np.issubdtype(npt, np.floating):
        return (rng.standard_normal(N) * 100).astype(npt)
    info = np.iinfo(npt)
    high = min(info.max, 2**40) if info.bits == 64 else info.max // 4
    low = 0 if info.min == 0 else -high
    return rng.integers(low, high, N, dtype=npt)


def _per_tile(x: np.ndarray, k: int) -> np.ndarray:
    return x.reshape(-1, 1 << k)


def _same(got: np.ndarray, want: np.ndarray, **kw: Any) -> None:
    """Equal (integers) or equal to float rounding (the tree's order of additions is not numpy's)."""
    if np.issubdtype(got.dtype, np.floating):
        np.testing.assert_allclose(got, want, rtol=1e-5, **kw)
    else:
        np.testing.assert_array_equal(got, want, **kw)


def _ptx(kernel: Any) -> str:
    images = gpu_images(kernel)
    if nvptx.ptxas_path() is not None:
        assert set(images.cubins) == set(FLEET)  # ptxas accepted every architecture
    return images.ptx["sm_80"]  # type: ignore[no-any-return]


# ---- data movement -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("dt", list(DTYPES))
def test_shuffles_move_every_dtype_between_lanes(dt: Any) -> None:
    @qd.kernel
    def k(x: Nd[dt, 1], idx: Nd[dt, 1], up: Nd[dt, 1], down: Nd[dt, 1], xor: Nd[dt, 1], first: Nd[dt, 1]):
        qd.loop_config(block_dim=32)
        for i in range(x.shape[0]):
            lane = sg.invocation_id()
            v = x[i]
            idx[i] = sg.shuffle(v, qd.u32((lane // 4) * 4 + 3 - lane % 4))  # reversed in each group of 4
            up[i] = sg.shuffle_up(v, qd.u32(3))
            down[i] = sg.shuffle_down(v, qd.u32(5))
            xor[i] = sg.shuffle_xor(v, qd.u32(6))
            first[i] = sg.broadcast_first(v) + sg.broadcast(v, qd.u32(31)) * 0

    x = _values(dt)
    outs = [np.zeros_like(x) for _ in range(5)]
    k(x, *outs)
    base = np.arange(N) - LANE
    np.testing.assert_array_equal(outs[0], x[base + (LANE // 4) * 4 + 3 - LANE % 4])
    np.testing.assert_array_equal(outs[1], np.where(LANE >= 3, x[np.arange(N) - 3], x))  # the first lanes keep theirs
    np.testing.assert_array_equal(outs[2], np.where(LANE + 5 < 32, x[np.minimum(np.arange(N) + 5, N - 1)], x))
    np.testing.assert_array_equal(outs[3], x[base + (LANE ^ 6)])
    np.testing.assert_array_equal(outs[4], x[base])
    ptx = _ptx(k)
    assert "shfl.sync.idx.b32" in ptx and "shfl.sync.up.b32" in ptx and "shfl.sync.bfly.b32" in ptx
    if DTYPES[dt]().itemsize == 8:  # a 64-bit value moves as two 32-bit halves
        assert ptx.count("shfl.sync.idx.b32") >= 4


def test_lane_ids_elect_and_group_size() -> None:
    @qd.kernel
    def k(lane: Nd[qd.i32, 1], elect: Nd[qd.i32, 1], size: Nd[qd.i32, 1]):
        qd.loop_config(block_dim=32)
        for i in range(lane.shape[0]):
            lane[i] = sg.invocation_id()
            elect[i] = sg.elect()
            size[i] = qd.static(sg.group_size()) * 100 + qd.static(sg.log2_group_size())

    lane, elect, size = (np.zeros(N, np.int32) for _ in range(3))
    k(lane, elect, size)
    np.testing.assert_array_equal(lane, LANE)
    np.testing.assert_array_equal(elect, LANE == 0)
    np.testing.assert_array_equal(size, 3205)
    assert sg.group_size() == 32 and sg.log2_group_size() == 5
    assert "%laneid" in _ptx(k)


# ---- votes and lane masks --------------------------------------------------------------------------------------


def test_ballots_votes_and_lane_masks() -> None:
    @qd.kernel
    def k(p: Nd[qd.i32, 1], v: Nd[qd.i32, 1], ballot: Nd[qd.u64, 1], first5: Nd[qd.u32, 1], votes: Nd[qd.i32, 2],
          masks: Nd[qd.u32, 2]):  # fmt: skip
        qd.loop_config(block_dim=32)
        for i in range(p.shape[0]):
            lane = sg.invocation_id()
            ballot[i] = sg.ballot(p[i])
            first5[i] = sg.ballot_first_n(p[i], 5)
            votes[i, 0] = sg.all_true(p[i])
            votes[i, 1] = sg.any_true(p[i])
            votes[i, 2] = sg.all_equal(v[i])
            votes[i, 3] = sg.all_true_tiled(p[i], 2)
            votes[i, 4] = sg.any_true_tiled(p[i], 3)
            votes[i, 5] = sg.all_equal_tiled(v[i], 2)
            masks[i, 0] = sg.lanemask_lt(lane)
            masks[i, 1] = sg.lanemask_le(lane)
            masks[i, 2] = sg.lanemask_eq(lane)
            masks[i, 3] = sg.lanemask_gt(lane)
            masks[i, 4] = sg.lanemask_ge(lane)

    rng = np.random.default_rng(1)
    p = (rng.random(N) < 0.6).astype(np.int32) * rng.integers(1, 9, N).astype(np.int32)  # truthy, not only 1
    p[32:64] = 7  # the second warp all true
    p[64:96:4] = 0  # the third: every 4th lane false
    v = np.repeat(rng.integers(0, 3, N // 4), 4).astype(np.int32)  # tiles of 4 mostly equal
    v[32:64] = 5
    v[70] += 1
    ballot, first5 = np.zeros(N, np.uint64), np.zeros(N, np.uint32)
    votes, masks = np.zeros((N, 6), np.int32), np.zeros((N, 5), np.uint32)
    k(p, v, ballot, first5, votes, masks)
    bits = np.array([sum(int(b) << j for j, b in enumerate(w != 0)) for w in _per_tile(p, 5)], np.uint64)
    np.testing.assert_array_equal(ballot, np.repeat(bits, 32))
    np.testing.assert_array_equal(first5, np.repeat(bits & np.uint64(31), 32).astype(np.uint32))
    for col, (x, k_, fold) in enumerate([(p != 0, 5, np.all), (p != 0, 5, np.any), (v, 5, None), (p != 0, 2, np.all),
                                         (p != 0, 3, np.any), (v, 2, None)]):  # fmt: skip
        tiles = _per_tile(x, k_)
        got = fold(tiles, axis=1) if fold is not None else np.all(tiles == tiles[:, :1], axis=1)
        np.testing.assert_array_equal(votes[:, col], np.repeat(got, 1 << k_), err_msg=f"vote column {col}")
    lane = LANE.astype(np.uint64)
    lt = (np.uint64(1) << lane) - np.uint64(1)
    want = [lt, lt | (np.uint64(1) << lane), np.uint64(1) << lane, ~(lt | (np.uint64(1) << lane)), ~lt]
    for col, w in enumerate(want):
        np.testing.assert_array_equal(masks[:, col], (w & np.uint64(0xFFFFFFFF)).astype(np.uint32))
    ptx = _ptx(k)
    assert "vote.sync.ballot.b32" in ptx and "vote.sync.all.pred" in ptx and "vote.sync.any.pred" in ptx


# ---- reductions, scans, segments ------------------------------------------------------------------------------

_FOLD = {"add": np.add, "mul": np.multiply, "min": np.minimum, "max": np.maximum, "and": np.bitwise_and,
         "or": np.bitwise_or, "xor": np.bitwise_xor}  # fmt: skip
_IDENTITY = {"add": 0, "mul": 1, "or": 0, "xor": 0}


def _identity(op: str, npt: Any) -> Any:
    if op in _IDENTITY:
        return npt(_IDENTITY[op])
    if op == "and":
        return npt(~npt(0)) if np.issubdtype(npt, np.integer) else None
    if np.issubdtype(npt, np.floating):
        return npt(np.inf if op == "min" else -np.inf)
    info = np.iinfo(npt)
    return npt(info.max if op == "min" else info.min)


@pytest.mark.parametrize("dt", [qd.i32, qd.u32, qd.f32, qd.i64, qd.f64])
@pytest.mark.parametrize("log2_size", [0, 2, 5])
def test_reductions_leave_each_tile_its_result(dt: Any, log2_size: int) -> None:
    @qd.kernel
    def k(x: Nd[dt, 1], r: Nd[dt, 2], a: Nd[dt, 2], full: Nd[dt, 2], n: qd.template()):
        qd.loop_config(block_dim=32)
        for i in range(x.shape[0]):
            v = x[i]
            r[i, 0] = sg.reduce_add_tiled(v, n)
            r[i, 1] = sg.reduce_min_tiled(v, n)
            r[i, 2] = sg.reduce_max_tiled(v, n)
            a[i, 0] = sg.reduce_all_add_tiled(v, n)
            a[i, 1] = sg.reduce_all_min_tiled(v, n)
            a[i, 2] = sg.reduce_all_max_tiled(v, n)
            full[i, 0] = sg.reduce_all_add(v)
            full[i, 1] = sg.reduce_add(v)

    npt = DTYPES[dt]
    x = _values(dt, 2) % npt(1000) if np.issubdtype(npt, np.integer) else _values(dt, 2)
    r, a = np.zeros((N, 3), npt), np.zeros((N, 3), npt)
    full = np.zeros((N, 2), npt)
    k(x, r, a, full, log2_size)
    tiles = _per_tile(x, log2_size)
    firsts = np.arange(0, N, 1 << log2_size)
    for col, fold in enumerate((np.sum, np.min, np.max)):
        want = fold(tiles, axis=1).astype(npt)
        _same(r[firsts, col], want)  # reduce_*: each tile's first lane
        _same(a[:, col], np.repeat(want, 1 << log2_size))  # reduce_all_*: every lane
    whole = _per_tile(x, 5).sum(axis=1).astype(npt)
    _same(full[:, 0], np.repeat(whole, 32))
    _same(full[::32, 1], whole)


@pytest.mark.parametrize("dt", [qd.i32, qd.u32, qd.i64, qd.u64, qd.f32])
@pytest.mark.parametrize("log2_size", [2, 5])
def test_inclusive_and_exclusive_scans_of_every_operation(dt: Any, log2_size: int) -> None:
    ops = ("add", "mul", "min", "max") + (("and", "or", "xor") if dt is not qd.f32 else ())
    inclusive = {op: getattr(sg, f"inclusive_{op}_tiled") for op in ops}
    exclusive = {op: getattr(sg, f"exclusive_{op}_tiled") for op in ops}

    @qd.kernel
    def k(x: Nd[dt, 1], inc: Nd[dt, 2], exc: Nd[dt, 2], n: qd.template()):
        qd.loop_config(block_dim=32)
        for i in range(x.shape[0]):
            for c in qd.static(range(len(ops))):
                inc[i, c] = qd.static(inclusive[ops[c]])(x[i], n)
                exc[i, c] = qd.static(exclusive[ops[c]])(x[i], n)

    npt = DTYPES[dt]
    rng = np.random.default_rng(3)
    x = (rng.integers(1, 4, N) if np.issubdtype(npt, np.integer) else rng.random(N) + 0.5).astype(npt)
    x[::7] = npt(9) if np.issubdtype(npt, np.integer) else npt(0.25)
    inc, exc = np.zeros((N, len(ops)), npt), np.zeros((N, len(ops)), npt)
    k(x, inc, exc, log2_size)
    tiles = _per_tile(x, log2_size)
    for c, op in enumerate(ops):
        want = _FOLD[op].accumulate(tiles, axis=1, dtype=npt)
        shifted = np.concatenate([np.full((tiles.shape[0], 1), _identity(op, npt), npt), want[:, :-1]], axis=1)
        _same(inc[:, c], want.reshape(-1), err_msg=op)
        _same(exc[:, c], shifted.reshape(-1), err_msg=op)


@pytest.mark.parametrize("log2_size", [3, 5])
def test_segmented_reductions_restart_at_each_head(log2_size: int) -> None:
    @qd.kernel
    def k(x: Nd[qd.i32, 1], head: Nd[qd.i32, 1], out: Nd[qd.i32, 2], full: Nd[qd.i32, 1], n: qd.template()):
        qd.loop_config(block_dim=32)
        for i in range(x.shape[0]):
            out[i, 0] = sg.segmented_reduce_add_tiled(x[i], head[i], n)
            out[i, 1] = sg.segmented_reduce_min_tiled(x[i], head[i], n)
            out[i, 2] = sg.segmented_reduce_max_tiled(x[i], head[i], n)
            full[i] = sg.segmented_reduce_add(x[i], head[i])

    rng = np.random.default_rng(4)
    x = rng.integers(-50, 50, N).astype(np.int32)
    head = (rng.random(N) < 0.2).astype(np.int32) * 3  # truthy heads
    head[40:72] = 0  # a segment across a warp's tiles
    out, full = np.zeros((N, 3), np.int32), np.zeros(N, np.int32)
    k(x, head, out, full, log2_size)

    def oracle(size: int, fold: Any) -> np.ndarray:
        want = np.zeros(N, np.int64)
        for i in range(N):
            start = i - i % size  # a tile's first lane always starts a segment
            for j in range(i, start - 1, -1):
                if head[j] or j == start:
                    start = j
                    break
            want[i] = fold(x[start : i + 1])
        return want

    for col, fold in enumerate((np.sum, np.min, np.max)):
        np.testing.assert_array_equal(out[:, col], oracle(1 << log2_size, fold))
    np.testing.assert_array_equal(full, oracle(32, np.sum))


@pytest.mark.parametrize("key_dt, value_dt", [(qd.f32, qd.i32), (qd.i64, qd.u32), (qd.u32, qd.f64)])
@pytest.mark.parametrize("log2_size", [3, 5])
def test_bitonic_sort_orders_each_tile_by_key_then_value(key_dt: Any, value_dt: Any, log2_size: int) -> None:
    @qd.kernel
    def k(key: Nd[key_dt, 1], value: Nd[value_dt, 1], n: qd.template()):
        qd.loop_config(block_dim=32)
        for i in range(key.shape[0]):
            kk, vv = sg.bitonic_sort_kv_tiled(key[i], value[i], n)
            key[i] = kk
            value[i] = vv

    rng = np.random.default_rng(5)
    key = rng.integers(0, 6, N).astype(DTYPES[key_dt])  # many equal keys: the values break ties
    value = rng.permutation(N).astype(DTYPES[value_dt])
    want_k, want_v = key.copy(), value.copy()
    size = 1 << log2_size
    for t in range(0, N, size):
        order = np.lexsort((value[t : t + size], key[t : t + size]))
        want_k[t : t + size], want_v[t : t + size] = key[t : t + size][order], value[t : t + size][order]
    k(key, value, log2_size)
    np.testing.assert_array_equal(key, want_k)
    np.testing.assert_array_equal(value, want_v)
    _ptx(k)


def test_full_subgroup_sort_with_sentinels() -> None:
    """The documented pattern: fewer items than lanes, the rest padded with a key above every real one."""

    @qd.kernel
    def k(keys: Nd[qd.f32, 1], idx: Nd[qd.i32, 1], n: qd.i32):
        qd.loop_config(block_dim=32)
        for t in range(32):
            key, i = qd.f32(1.0e30), -1
            if t < n:
                key, i = keys[t], idx[t]
            key, i = sg.bitonic_sort_kv(key, i)
            if t < n:
                keys[t] = key
                idx[t] = i

    keys = np.array([3.5, -1.0, 2.0, 2.0, 0.5, 9.0, -4.0], np.float32)
    idx = np.arange(7, dtype=np.int32)[::-1].copy()
    order = np.lexsort((idx, keys))
    want_k, want_i = keys[order], idx[order]
    k(keys, idx, 7)
    np.testing.assert_array_equal(keys, want_k)
    np.testing.assert_array_equal(idx, want_i)


# ---- qd.simt.warp, block folds, fences --------------------------------------------------------------------------


def test_warp_votes_matches_and_masks() -> None:
    full = qd.u32(0xFFFFFFFF)

    @qd.kernel
    def k(p: Nd[qd.i32, 1], v: Nd[qd.i32, 1], out: Nd[qd.i32, 2]):
        qd.loop_config(block_dim=32)
        for i in range(p.shape[0]):
            out[i, 0] = qd.simt.warp.all_nonzero(full, p[i])
            out[i, 1] = qd.simt.warp.any_nonzero(full, p[i])
            out[i, 2] = qd.simt.warp.unique(full, p[i])
            out[i, 3] = qd.simt.warp.ballot(p[i])
            out[i, 4] = qd.simt.warp.match_any(full, v[i])
            out[i, 5] = qd.simt.warp.match_all(full, v[i])
            out[i, 6] = qd.simt.warp.active_mask()

    p = np.zeros(N, np.int32)
    p[32:64] = 1
    p[70] = 1
    v = (np.arange(N) % 3).astype(np.int32)
    v[32:64] = 4
    out = np.zeros((N, 7), np.int32)
    k(p, v, out)
    warps = _per_tile(p != 0, 5)
    np.testing.assert_array_equal(out[:, 0], np.repeat(warps.all(axis=1), 32))
    np.testing.assert_array_equal(out[:, 1], np.repeat(warps.any(axis=1), 32))
    np.testing.assert_array_equal(out[:, 2], np.repeat(warps.all(axis=1) | ~warps.any(axis=1), 32))
    np.testing.assert_array_equal(out[:, 3].view(np.uint32), np.repeat([0, 0xFFFFFFFF, 1 << 6], 32))
    same = np.array([sum(1 << j for j in range(32) if v[i - i % 32 + j] == v[i]) for i in range(N)], np.uint32)
    np.testing.assert_array_equal(out[:, 4].view(np.uint32), same)
    np.testing.assert_array_equal(out[:, 5].view(np.uint32), np.where(same == 0xFFFFFFFF, same, 0))
    np.testing.assert_array_equal(out[:, 6].view(np.uint32), 0xFFFFFFFF)
    ptx = _ptx(k)
    assert "match.any.sync.b32" in ptx and "match.all.sync.b32" in ptx and "activemask.b32" in ptx
    assert "vote.sync.uni.pred" in ptx


def test_block_folds_global_thread_ids_and_fences() -> None:
    @qd.kernel
    def k(p: Nd[qd.i32, 1], out: Nd[qd.i32, 2]):
        qd.loop_config(block_dim=64)
        for i in range(p.shape[0]):
            out[i, 0] = qd.simt.block.sync_all_nonzero(p[i])
            out[i, 1] = qd.simt.block.sync_any_nonzero(p[i])
            out[i, 2] = qd.simt.block.sync_count_nonzero(p[i])
            qd.simt.block.mem_fence()
            qd.simt.grid.mem_fence()
            sg.mem_fence()
            sg.sync()
            out[i, 3] = qd.simt.block.global_thread_idx()

    n = 192
    p = np.zeros(n, np.int32)
    p[0:64] = 2
    p[64:128:5] = 1
    out = np.zeros((n, 4), np.int32)
    k(p, out)
    blocks = p.reshape(-1, 64) != 0
    np.testing.assert_array_equal(out[:, 0], np.repeat(blocks.all(axis=1), 64))
    np.testing.assert_array_equal(out[:, 1], np.repeat(blocks.any(axis=1), 64))
    np.testing.assert_array_equal(out[:, 2], np.repeat(blocks.sum(axis=1), 64))
    np.testing.assert_array_equal(out[:, 3], np.arange(n))  # one loop turn per thread: the loop index
    ptx = _ptx(k)
    assert "bar.red.and.pred" in ptx and "bar.red.or.pred" in ptx and "bar.red.popc.u32" in ptx
    assert "membar.cta" in ptx and "membar.gl" in ptx


# ---- deprecated names, misuse -----------------------------------------------------------------------------------


def test_deprecated_names_warn_once_and_do_the_new_operation(monkeypatch: pytest.MonkeyPatch) -> None:
    from quadrants.frontend import simt_calls

    monkeypatch.setattr(simt_calls, "_WARNED", set())

    @qd.kernel
    def k(p: Nd[qd.i32, 1], out: Nd[qd.u64, 1]):
        qd.loop_config(block_dim=32)
        for i in range(p.shape[0]):
            sg.barrier()
            sg.memory_barrier()
            out[i] = sg.ballot_full_subgroup(p[i])

    p = (np.arange(32) % 2).astype(np.int32)
    out = np.zeros(32, np.uint64)
    with warnings.catch_warnings(record=True) as records:
        warnings.simplefilter("always")
        k(p, out)
        k(p, np.zeros(32, np.uint64))  # (cached: no second compile, no second warning)
    found = [str(r.message) for r in records if issubclass(r.category, DeprecationWarning)]
    assert len(found) == 3 and any("qd.simt.subgroup.sync()" in m for m in found)
    np.testing.assert_array_equal(out, 0xAAAAAAAA)
    # Python scope: once per process, forwarding to the module's current function
    monkeypatch.setattr(sg, "_barrier_deprecation_warned", False)
    calls: list[str] = []
    monkeypatch.setattr(sg, "sync", lambda: calls.append("sync"))
    with warnings.catch_warnings(record=True) as records:
        warnings.simplefilter("always")
        sg.barrier()
        sg.barrier()
    assert calls == ["sync", "sync"] and len(records) == 1


def test_misuse_is_refused_with_the_location() -> None:
    @qd.kernel
    def vec(x: Nd[qd.f32, 1]):
        for i in range(x.shape[0]):
            x[i] = sg.shuffle(qd.Vector([x[i], 1.0]), qd.u32(0))[0]

    with pytest.raises(qd.QuadrantsTypeError, match="moves scalars, not a vector"):
        vec(np.zeros(4, np.float32))

    @qd.kernel
    def narrow(x: Nd[qd.i8, 1]):
        for i in range(x.shape[0]):
            x[i] = sg.shuffle(x[i], qd.u32(0))

    with pytest.raises(qd.QuadrantsTypeError, match="not i8"):
        narrow(np.zeros(4, np.int8))

    @qd.kernel
    def big_tile(x: Nd[qd.i32, 1]):
        for i in range(x.shape[0]):
            x[i] = sg.reduce_add_tiled(x[i], 6)

    with pytest.raises(qd.QuadrantsError, match="log2_size must be"):
        big_tile(np.zeros(4, np.int32))

    @qd.kernel
    def outside(x: Nd[qd.i32, 1]):
        x[0] = sg.invocation_id()

    with pytest.raises(qd.QuadrantsError, match="only valid inside a kernel's parallel for loop"):
        outside(np.zeros(4, np.int32))
    with pytest.raises(qd.QuadrantsSyntaxError, match="can only be used inside a kernel"):
        sg.shuffle(1, 0)


def test_the_cpu_backend_refuses_subgroup_operations_with_the_location() -> None:
    qd.init(arch=qd.cpu, offline_cache=False, log_level="warn")
    assert sg.group_size() == 0

    @qd.kernel
    def k(x: Nd[qd.i32, 1]):
        for i in range(x.shape[0]):
            x[i] = sg.reduce_all_add(x[i])

    with pytest.raises(qd.QuadrantsError) as e:
        k(np.zeros(4, np.int32))
    assert "subgroup" in str(e.value) and "test_subgroup.py" in str(e.value)


SUBGROUP_APP = """
import json, sys
import numpy as np
import quadrants as qd
from quadrants.lang.simt import subgroup as sg
qd.init({init})

@qd.kernel(fastcache=True)
def k(key: qd.types.NDArray[qd.i32, 1], value: qd.types.NDArray[qd.f32, 1], total: qd.types.NDArray[qd.f32, 1]):
    qd.loop_config(block_dim=32)
    for i in range(key.shape[0]):
        kk, vv = sg.bitonic_sort_kv(key[i], value[i])
        key[i] = kk
        value[i] = vv
        total[i] = sg.reduce_all_add(vv)

key = (np.arange(64, dtype=np.int32) * 37) % 64
value = np.arange(64, dtype=np.float32)
total = np.zeros(64, np.float32)
k(key, value, total)
o = k._primal.src_ll_cache_observations
print(json.dumps({{"key": key.tolist(), "value": value.tolist(), "total": total.tolist(), "loaded": o.cache_loaded,
                  "stored": o.cache_stored, "compiles": qd.stats()["compiles"]}}))
"""


@pytest.mark.slow
def test_a_subgroup_kernel_loads_from_fastcache_in_a_new_process(tmp_path: Path) -> None:
    runs = run_twice(tmp_path, "arch=qd.cuda, cuda_emulate=True", SUBGROUP_APP)
    key = (np.arange(64) * 37) % 64
    for w in range(2):
        order = np.argsort(key[32 * w : 32 * w + 32], kind="stable") + 32 * w
        assert runs[0]["key"][32 * w : 32 * w + 32] == key[order].tolist()
        assert runs[0]["total"][32 * w] == float(order.sum())
    assert runs[0]["stored"] and runs[0]["compiles"] == 1
    assert runs[1]["loaded"] and runs[1]["compiles"] == 0
    assert {k: runs[1][k] for k in ("key", "value", "total")} == {k: runs[0][k] for k in ("key", "value", "total")}
