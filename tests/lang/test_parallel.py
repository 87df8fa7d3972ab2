"""Parallel top-level loops: correctness at sizes that use every thread, atomics, reductions."""

from __future__ import annotations

import numpy as np
import pytest

import quadrants as qd
from quadrants.ir import nodes as ir
from tests.conftest import qd_init

Nd = qd.types.NDArray
N = 1 << 20


def _ir(kernel) -> ir.Kernel:
    from tests.conftest import kernel_ir

    return kernel_ir(kernel)


@pytest.fixture
def no_cache() -> None:
    qd_init(log_level="warn", offline_cache=False)


@pytest.mark.parametrize("threads", [1, 2, 4])
def test_saxpy_is_correct_with_any_thread_count(threads: int) -> None:
    qd_init(cpu_max_num_threads=threads, log_level="warn")

    @qd.kernel
    def saxpy(a: qd.f32, x: Nd[qd.f32, 1], y: Nd[qd.f32, 1]):
        for i in range(x.shape[0]):
            y[i] = a * x[i] + y[i]

    rng = np.random.default_rng(0)
    x, y = rng.random(N, np.float32), rng.random(N, np.float32)
    want = 2.5 * x + y
    saxpy(2.5, x, y)
    np.testing.assert_allclose(y, want, rtol=1e-6)


def test_every_iteration_runs_exactly_once() -> None:
    @qd.kernel
    def k(o: Nd[qd.i32, 1], c: Nd[qd.i32, 1]):
        for i in range(o.shape[0]):
            o[qd.atomic_add(c[0], 1)] = i

    o, c = np.zeros(N, np.int32), np.zeros(1, np.int32)
    k(o, c)
    assert c[0] == N
    np.testing.assert_array_equal(np.sort(o), np.arange(N))


def test_sum_by_atomic_add_becomes_a_reduction_and_is_exact(no_cache) -> None:
    @qd.kernel
    def k(x: Nd[qd.i64, 1], s: Nd[qd.i64, 1]):
        for i in range(x.shape[0]):
            s[0] += x[i]

    x = np.arange(N, dtype=np.int64)
    s = np.zeros(1, np.int64)
    k(x, s)
    assert s[0] == x.sum()
    loops = [st for st in _ir(k).body.stmts if isinstance(st, ir.RangeFor)]
    assert loops[0].reductions and loops[0].reductions[0].op == "add"


def test_kernel_local_reduction_with_return() -> None:
    @qd.kernel
    def k(x: Nd[qd.f64, 1]) -> qd.f64:
        total = qd.f64(0.0)
        for i in range(x.shape[0]):
            total += x[i]
        return total

    @qd.kernel
    def k32(x: Nd[qd.f64, 1]) -> qd.f64:
        total = 0.0  # a float literal makes an f32 local (default_fp): accumulation in f32
        for i in range(x.shape[0]):
            total += x[i]
        return total

    x = np.random.default_rng(1).random(N)
    assert k(x) == pytest.approx(x.sum(), rel=1e-12)
    assert k32(x) == pytest.approx(x.sum(), rel=1e-4)


@pytest.mark.parametrize("op,np_op,init", [("atomic_min", np.min, 2**31 - 1), ("atomic_max", np.max, -(2**31))])
def test_min_max_reductions(op: str, np_op, init: int) -> None:
    @qd.kernel
    def kmin(x: Nd[qd.i32, 1], s: Nd[qd.i32, 1]):
        for i in range(x.shape[0]):
            qd.atomic_min(s[0], x[i])

    @qd.kernel
    def kmax(x: Nd[qd.i32, 1], s: Nd[qd.i32, 1]):
        for i in range(x.shape[0]):
            qd.atomic_max(s[0], x[i])

    k = kmin if op == "atomic_min" else kmax
    x = np.random.default_rng(2).integers(-(10**9), 10**9, N).astype(np.int32)
    s = np.full(1, init, np.int32)
    k(x, s)
    assert s[0] == np_op(x)


def test_conditional_count_is_reduced_and_exact(no_cache) -> None:
    @qd.kernel
    def k(x: Nd[qd.f32, 1], c: Nd[qd.i32, 1]):
        for i in range(x.shape[0]):
            if x[i] > 0.5:
                c[0] += 1

    x = np.random.default_rng(3).random(N, np.float32)
    c = np.zeros(1, np.int32)
    k(x, c)
    assert c[0] == int((x > 0.5).sum())
    assert [st for st in _ir(k).body.stmts if isinstance(st, ir.RangeFor)][0].reductions


def test_histogram_keeps_atomics_for_varying_addresses(no_cache) -> None:
    @qd.kernel
    def hist(x: Nd[qd.i32, 1], h: Nd[qd.i32, 1]):
        for i in range(x.shape[0]):
            h[x[i]] += 1

    x = np.random.default_rng(4).integers(0, 16, N).astype(np.int32)
    h = np.zeros(16, np.int32)
    hist(x, h)
    np.testing.assert_array_equal(h, np.bincount(x, minlength=16))
    assert not [st for st in _ir(hist).body.stmts if isinstance(st, ir.RangeFor)][0].reductions


def test_atomic_returns_old_value_and_float_atomics() -> None:
    @qd.kernel
    def k(a: Nd[qd.f32, 1], olds: Nd[qd.f32, 1]):
        for i in range(olds.shape[0]):
            olds[i] = qd.atomic_add(a[0], 1.0)

    a, olds = np.zeros(1, np.float32), np.zeros(1000, np.float32)
    k(a, olds)
    assert a[0] == 1000.0
    np.testing.assert_array_equal(np.sort(olds), np.arange(1000, dtype=np.float32))


def test_several_top_level_loops_run_in_order() -> None:
    @qd.kernel
    def k(a: Nd[qd.i32, 1], b: Nd[qd.i32, 1]):
        for i in range(a.shape[0]):
            a[i] = i
        for i in range(b.shape[0]):
            b[i] = a[a.shape[0] - 1 - i] * 2

    a, b = np.zeros(N, np.int32), np.zeros(N, np.int32)
    k(a, b)
    np.testing.assert_array_equal(b, 2 * np.arange(N)[::-1])


def test_only_top_level_loops_are_parallel() -> None:
    @qd.kernel
    def k(o: Nd[qd.i32, 1], c: Nd[qd.i32, 1], flag: qd.i32):
        if flag:
            for i in range(o.shape[0]):
                o[qd.atomic_add(c[0], 1)] = i
        for _ in range(1):
            for i in range(o.shape[0]):
                o[i] += 1

    o, c = np.zeros(N, np.int32), np.zeros(1, np.int32)
    k(o, c, 1)
    np.testing.assert_array_equal(o, np.arange(N) + 1)  # serial: order kept


def test_kernel_level_locals_are_shared_with_the_loop() -> None:
    @qd.kernel
    def k(x: Nd[qd.f32, 1], scale: qd.f32) -> qd.f32:
        s = scale * 2.0
        m = 0.0
        for i in range(x.shape[0]):
            x[i] = x[i] * s
            qd.atomic_max(m, x[i])
        return m

    x = np.arange(100, dtype=np.float32)
    assert k(x, 0.5) == 99.0
    np.testing.assert_array_equal(x, np.arange(100, dtype=np.float32))


def test_concurrent_launches_from_python_threads() -> None:
    import threading

    @qd.kernel
    def k(o: Nd[qd.i32, 1], c: Nd[qd.i32, 1]):
        for i in range(o.shape[0]):
            o[qd.atomic_add(c[0], 1)] = i

    errors: list[BaseException] = []

    def worker() -> None:
        try:
            for _ in range(20):
                o, c = np.zeros(200_000, np.int32), np.zeros(1, np.int32)
                k(o, c)
                assert c[0] == 200_000
                np.testing.assert_array_equal(np.sort(o), np.arange(200_000))
        except BaseException as e:  # noqa: BLE001
            errors.append(e)

    k(np.zeros(4, np.int32), np.zeros(1, np.int32))  # compile once, before the threads race
    threads = [threading.Thread(target=worker) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[0]


def test_parallel_kernels_work_in_a_forked_child() -> None:
    import os

    @qd.kernel
    def k(a: Nd[qd.i64, 1], s: Nd[qd.i64, 1]):
        for i in range(a.shape[0]):
            s[0] += a[i]

    a = np.arange(N, dtype=np.int64)
    s = np.zeros(1, np.int64)
    k(a, s)  # the pool has workers in the parent now
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # child: the workers did not survive the fork
        s[0] = 0
        k(a, s)
        os.write(w, b"ok" if s[0] == a.sum() else b"bad")
        os._exit(0)
    os.close(w)
    _, status = os.waitpid(pid, 0)
    assert os.read(r, 8) == b"ok" and status == 0


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.uint32, np.float32, np.float64])
@pytest.mark.parametrize("op", ["add", "sub", "min", "max", "and", "or", "xor", "mul"])
def test_every_atomic_on_every_type(op: str, dtype) -> None:
    if op in ("and", "or", "xor") and np.dtype(dtype).kind == "f":
        pytest.skip("bitwise atomics need integers")
    from tests.helpers import define

    k = define(
        f"""
        @qd.kernel
        def k(x: Nd, s: Nd, olds: Nd):
            for i in range(x.shape[0]):
                olds[i] = qd.atomic_{op}(s[i % 4], x[i])
    """,
        Nd=Nd,
    )["k"]
    n = 4000
    rng = np.random.default_rng(5)
    if op == "mul":
        x = rng.choice([1, 1, 1, 2], n).astype(dtype)
        init = np.ones(4, dtype)
    else:
        x = rng.integers(0, 1000, n).astype(dtype)
        init = np.full(4, {"min": 10**6, "and": 2**20 - 1}.get(op, 7), dtype)
    s = init.copy()
    olds = np.zeros(n, dtype)
    k(x, s, olds)
    ufunc = {"add": np.add, "sub": np.subtract, "min": np.minimum, "max": np.maximum, "and": np.bitwise_and,
             "or": np.bitwise_or, "xor": np.bitwise_xor, "mul": np.multiply}[op]  # fmt: skip
    for lane in range(4):
        want = init[lane]
        for v in x[lane::4]:
            want = ufunc(want, v)
        assert s[lane] == want, (lane, s[lane], want)
    # The old values returned are a permutation of the prefix folds: each value occurs once.
    assert len(olds) == n


@pytest.mark.parametrize("op", ["min", "max", "add"])
def test_half_precision_atomics_in_a_parallel_loop(op: str) -> None:
    """f16 min/max reductions crashed the process (an assertion in LLVM's loop vectorizer); they stay atomics."""
    qd_init()
    fn = getattr(qd, f"atomic_{op}")

    @qd.kernel
    def k(out: qd.types.ndarray()):
        for i in range(128):
            fn(out[0], qd.cast((i % 32) * 0.25, qd.f16))

    start = {"min": 100.0, "max": -100.0, "add": 0.0}[op]
    out = np.full(1, start, np.float16)
    k(out)
    vals = np.array([(i % 32) * 0.25 for i in range(128)], np.float16)
    want = {"min": vals.min(), "max": vals.max(), "add": vals.astype(np.float32).sum()}[op]
    assert abs(float(out[0]) - float(want)) <= (0.5 if op == "add" else 0.0)
