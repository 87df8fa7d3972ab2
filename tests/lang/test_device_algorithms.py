"""qd.algorithms' composable device-wide ops (reduce, exclusive scan, select, reduce-by-key, radix sort) against
numpy, composed into our own kernels: counts across block and level boundaries, every supported dtype, one compiled
kernel serving several live counts, struct elements, stability, and the scratch-size helpers."""

from __future__ import annotations

import numpy as np
import pytest

import quadrants as qd
from quadrants.errors import QuadrantsCompilationError

A = qd.algorithms
Nd = qd.types.NDArray
SCALARS = [qd.i32, qd.u32, qd.f32, qd.i64, qd.u64, qd.f64]
# counts at and around a block (256) and a level (65536) boundary, and none at all
COUNTS = [0, 1, 255, 256, 257, 65536 + 3]


def _values(dt: qd.types.PrimitiveType, n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if dt.is_float:
        return (rng.standard_normal(n) * 100).astype(dt.np_dtype)
    low = -1000 if dt.is_signed else 0
    return rng.integers(low, 1000, n).astype(dt.np_dtype)


def _scratch_type(dt: qd.types.PrimitiveType) -> qd.types.PrimitiveType:
    return qd.u64 if dt.bits == 64 else qd.u32


@pytest.mark.parametrize("dt", SCALARS)
def test_reductions_and_exclusive_scans_match_numpy_at_block_and_level_boundaries(dt) -> None:  # type: ignore[no-untyped-def]
    cap = max(COUNTS)
    depth = 3  # one more level than the largest count needs: the extra level is a no-op
    arr, scanned = qd.ndarray(dt, (cap,)), qd.ndarray(dt, (cap,))
    sums, mins, maxs = (qd.ndarray(dt, (1,)) for _ in range(3))
    scratch = qd.ndarray(_scratch_type(dt), (A.reduce_scratch_slots(cap, depth),))
    host = _values(dt, cap, 1)
    arr.from_numpy(host)

    @qd.kernel
    def run(a: Nd[dt, 1], s: Nd[dt, 1], o_sum: Nd[dt, 1], o_min: Nd[dt, 1], o_max: Nd[dt, 1],
            scr: Nd[_scratch_type(dt), 1], n: qd.i32):  # fmt: skip
        qd.algorithms.reduce_add(a, o_sum, scr, n, dt, depth)
        qd.algorithms.reduce_min(a, o_min, scr, n, dt, depth)
        qd.algorithms.reduce_max(a, o_max, scr, n, dt, depth)
        qd.algorithms.exclusive_scan_add(a, s, scr, n, dt, depth)

    for n in COUNTS:
        scanned.fill(0)
        run(arr, scanned, sums, mins, maxs, scratch, n)
        h = host[:n]
        info = (np.finfo if dt.is_float else np.iinfo)(dt.np_dtype)
        want_min = h.min() if n else (np.inf if dt.is_float else info.max)
        want_max = h.max() if n else (-np.inf if dt.is_float else info.min)
        assert mins.to_numpy()[0] == want_min and maxs.to_numpy()[0] == want_max, n
        want_scan = np.concatenate([[0], np.cumsum(h, dtype=h.dtype)[:-1]]) if n else h
        if dt.is_float:  # combined block by block: not numpy's order
            np.testing.assert_allclose(sums.to_numpy()[0], h.astype(np.float64).sum(), rtol=1e-5, atol=1e-2)
            np.testing.assert_allclose(scanned.to_numpy()[:n], want_scan, rtol=1e-4, atol=0.5)
        else:
            assert sums.to_numpy()[0] == h.sum(dtype=h.dtype), n
            np.testing.assert_array_equal(scanned.to_numpy()[:n], want_scan)
        assert (scanned.to_numpy()[n:] == 0).all()  # nothing written past the live count
    assert len(run._launchers) == 1  # the live count is a run-time value: one compile served them all


def test_min_and_max_scans_start_from_the_identity_and_fields_work_as_ndarrays_do() -> None:
    n = 1000
    arr, mn, mx = qd.field(qd.i32, n), qd.field(qd.i32, n), qd.field(qd.i32, n)
    count = qd.field(qd.i32, 1)
    scratch = qd.field(qd.u32, A.exclusive_scan_scratch_slots(n))
    host = _values(qd.i32, n, 2)
    arr.from_numpy(host)
    count[0] = n

    @qd.kernel
    def run():
        qd.algorithms.exclusive_scan_min(arr, mn, scratch, count[0], qd.i32, 2)
        qd.algorithms.exclusive_scan_max(arr, mx, scratch, count[0], qd.i32, 2)

    run()
    assert mn[0] == 2**31 - 1 and mx[0] == -(2**31)
    np.testing.assert_array_equal(mn.to_numpy()[1:], np.minimum.accumulate(host)[:-1])
    np.testing.assert_array_equal(mx.to_numpy()[1:], np.maximum.accumulate(host)[:-1])


@pytest.mark.parametrize("n", [0, 7, 256, 5000])
def test_select_keeps_flagged_struct_elements_in_order(n: int) -> None:
    pair = qd.types.struct(i=qd.i32, x=qd.f32)
    cap = max(n, 1)
    arr, out = pair.field(shape=cap), pair.field(shape=cap)
    flags, num = qd.field(qd.i32, cap), qd.field(qd.i32, 1)
    scratch = qd.field(qd.u32, A.select_scratch_slots(cap))
    rng = np.random.default_rng(n)
    f = (rng.random(cap) < 0.4).astype(np.int32)
    flags.from_numpy(f)
    num[0] = -1

    @qd.kernel
    def fill():
        for i in range(cap):
            arr[i].i = i
            arr[i].x = i * 0.5

    @qd.kernel
    def run(count: qd.i32):
        qd.algorithms.select(arr, flags, out, num, scratch, count, 2)

    fill()
    run(n)
    kept = np.flatnonzero(f[:n])
    assert num[0] == len(kept)
    np.testing.assert_array_equal(out.i.to_numpy()[: len(kept)], kept)
    np.testing.assert_array_equal(out.x.to_numpy()[: len(kept)], kept * 0.5)


@pytest.mark.parametrize("vdt", [qd.i32, qd.f32])
def test_reduce_by_key_sums_runs_that_span_blocks(vdt) -> None:  # type: ignore[no-untyped-def]
    # runs of 1, 300 (crossing a block), 600 (three blocks), singletons and a repeated key apart from its first run
    keys = np.concatenate([[5], np.full(300, 2), np.full(600, 9), np.arange(10, 20), np.full(40, 2)]).astype(np.int32)
    n = len(keys)
    values = _values(vdt, n, 3)
    k_in, k_out = qd.ndarray(qd.i32, (n,)), qd.ndarray(qd.i32, (n,))
    v_in, v_out = qd.ndarray(vdt, (n,)), qd.ndarray(vdt, (n,))
    runs, count = qd.ndarray(qd.i32, (1,)), qd.ndarray(qd.i32, (1,))
    scratch = qd.ndarray(qd.u32, (A.reduce_by_key_scratch_slots(n),))
    k_in.from_numpy(keys)
    v_in.from_numpy(values)
    count.fill(n)
    v_out.fill(vdt(77))  # stale values must not leak into the sums

    @qd.kernel
    def run(ki: Nd[qd.i32, 1], vi: Nd[vdt, 1], ko: Nd[qd.i32, 1], vo: Nd[vdt, 1], nr: Nd[qd.i32, 1],
            scr: Nd[qd.u32, 1], c: Nd[qd.i32, 1]):  # fmt: skip
        qd.algorithms.reduce_by_key_add(ki, vi, ko, vo, nr, scr, c[0], vdt, 2)

    run(k_in, v_in, k_out, v_out, runs, scratch, count)
    starts = np.flatnonzero(np.concatenate([[True], keys[1:] != keys[:-1]]))
    r = runs.to_numpy()[0]
    assert r == len(starts) == 14
    np.testing.assert_array_equal(k_out.to_numpy()[:r], keys[starts])
    want = np.add.reduceat(values.astype(np.float64), starts)
    np.testing.assert_allclose(v_out.to_numpy()[:r], want, rtol=1e-5)


@pytest.mark.parametrize("kdt", SCALARS)
def test_sort_is_stable_and_orders_negative_zero_infinities_and_nan_as_numpy(kdt) -> None:  # type: ignore[no-untyped-def]
    n = 3000
    keys = _values(kdt, n, 4)
    keys[:1000] = keys[0]  # a long run of one key: stability shows in the values
    if kdt.is_float:
        keys[1000:1004] = [np.inf, -np.inf, -0.0, np.nan]
    k, tk, v, tv = (qd.ndarray(t, (n,)) for t in (kdt, kdt, qd.i32, qd.i32))
    scratch = qd.ndarray(qd.u32, (A.sort_scratch_slots(n, 2),))
    count = qd.ndarray(qd.i32, ())
    k.from_numpy(keys)
    v.from_numpy(np.arange(n, dtype=np.int32))
    count.fill(n)

    @qd.kernel
    def run(k: Nd[kdt, 1], tk: Nd[kdt, 1], v: Nd[qd.i32, 1], tv: Nd[qd.i32, 1], s: Nd[qd.u32, 1], c: Nd[qd.i32, 0]):
        qd.algorithms.sort(k, tk, v, tv, s, c, kdt, True, kdt.bits, 2)

    run(k, tk, v, tv, scratch, count)
    order = np.argsort(keys, kind="stable")
    np.testing.assert_array_equal(k.to_numpy(), keys[order])
    np.testing.assert_array_equal(v.to_numpy(), order)


@pytest.mark.parametrize("end_bit", [8, 16])
def test_sort_of_keys_alone_over_low_bits_ends_in_keys(end_bit: int) -> None:
    """end_bit 8 is one pass (an odd count, which Quadrants refuses): the result is copied back into keys."""
    n = 700
    keys = np.random.default_rng(5).integers(0, 2**end_bit, n).astype(np.uint32)
    k, tk = qd.field(qd.u32, n), qd.field(qd.u32, n)
    scratch = qd.field(qd.u32, A.sort_scratch_slots(n))
    count = qd.ndarray(qd.i32, ())
    k.from_numpy(keys)
    count.fill(n)

    @qd.kernel
    def run(c: Nd[qd.i32, 0]):
        qd.algorithms.sort(k, tk, k, tk, scratch, c, qd.u32, False, end_bit, 2)

    run(count)
    np.testing.assert_array_equal(k.to_numpy(), np.sort(keys))


def test_ops_compose_with_other_phases_of_one_kernel() -> None:
    """Histogram-free counting sort of small integers as a user would compose it: flag, select, then reduce."""
    n = 2000
    arr, flags, out = qd.ndarray(qd.i32, (n,)), qd.ndarray(qd.i32, (n,)), qd.ndarray(qd.i32, (n,))
    num, total = qd.ndarray(qd.i32, (1,)), qd.ndarray(qd.i32, (1,))
    scratch = qd.ndarray(qd.u32, (A.select_scratch_slots(n),))
    host = _values(qd.i32, n, 6)
    arr.from_numpy(host)

    @qd.kernel
    def run(a: Nd[qd.i32, 1], f: Nd[qd.i32, 1], o: Nd[qd.i32, 1], k: Nd[qd.i32, 1], t: Nd[qd.i32, 1],
            s: Nd[qd.u32, 1]):  # fmt: skip
        for i in range(n):
            f[i] = 1 if a[i] > 0 else 0
        qd.algorithms.select(a, f, o, k, s, n, 2)
        qd.algorithms.reduce_add(o, t, s, k[0], qd.i32, 2)

    run(arr, flags, out, num, total, scratch)
    pos = host[host > 0]
    assert num.to_numpy()[0] == len(pos) and total.to_numpy()[0] == pos.sum()


def test_scratch_helpers_cover_smaller_counts_and_refuse_deep_or_negative_input() -> None:
    for helper in (A.reduce_scratch_slots, A.exclusive_scan_scratch_slots, A.sort_scratch_slots):
        assert helper(0) >= 1 and helper(0, 4) >= 1
        sizes = [helper(n, 3) for n in (1, 255, 256, 257, 70000, 256**3)]
        assert sizes == sorted(sizes)  # a capacity's scratch serves every smaller live count
        for bad in (0, 5, 2.0, True):
            with pytest.raises(ValueError, match="log256_max_n"):
                helper(10, bad)
    assert A.reduce_scratch_slots(65536 * 3, 3) == 768 + 3 + 1
    assert A.select_scratch_slots(1) == A.reduce_by_key_scratch_slots(1) == 4  # one slot per level, 4 levels
    with pytest.raises(ValueError, match=">= 0"):
        A.select_scratch_slots(-1)


def test_unsupported_dtypes_and_depths_are_refused_at_compile_time() -> None:
    arr, out = qd.field(qd.f16, 4), qd.field(qd.f16, 1)
    scratch = qd.field(qd.u32, 4)

    @qd.kernel
    def half():
        qd.algorithms.reduce_add(arr, out, scratch, 4, qd.f16, 1)

    with pytest.raises(QuadrantsCompilationError, match="NotImplementedError: .*f16 is not supported"):
        half()
    k, tk = qd.field(qd.u32, 4), qd.field(qd.u32, 4)
    count = qd.ndarray(qd.i32, ())

    @qd.kernel
    def bad_bits(c: Nd[qd.i32, 0]):
        qd.algorithms.sort(k, tk, k, tk, scratch, c, qd.u32, False, 12, 1)

    with pytest.raises(QuadrantsCompilationError, match="ValueError: .*end_bit must be a positive multiple of 8"):
        bad_bits(count)


def test_prefix_sum_executor_is_inclusive_in_place_and_deprecated() -> None:
    with pytest.warns(DeprecationWarning, match="exclusive_scan_add"):
        ex = A.PrefixSumExecutor(1000)
    a = qd.field(qd.i32, 777)
    host = _values(qd.i32, 777, 7)
    a.from_numpy(host)
    ex.run(a)
    np.testing.assert_array_equal(a.to_numpy(), np.cumsum(host))
    with pytest.raises(TypeError, match="i32"):
        ex.run(qd.field(qd.f32, 4))
