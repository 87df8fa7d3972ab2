"""`qd.random(dtype)` and `qd.init(random_seed=)`: distributions, the stream (pinned against a reference
Philox-4x32-10), reproducibility for a seed whatever the thread count or backend, launches that differ.

The statistical bounds are five to six standard deviations wide: with the fixed streams of a seed they pass or
fail the same way every run (no flakiness), and a generator with a real defect (a stuck bit, a bias, a
repeated stream) misses them by far.
"""

from __future__ import annotations

import numpy as np
import pytest

import quadrants as qd
from quadrants.errors import QuadrantsTypeError
from tests.conftest import backend_kwargs, kernel_ir, qd_init

Nd = qd.types.NDArray
N = 1 << 20

# ---- a reference of the generator (Random123's Philox-4x32-10) and of the launch key ---------------------

M32, M64 = (1 << 32) - 1, (1 << 64) - 1


def philox(counter: list[int], key: tuple[int, int]) -> list[int]:
    c, (k0, k1) = list(counter), key
    for r in range(10):
        if r:
            k0, k1 = (k0 + 0x9E3779B9) & M32, (k1 + 0xBB67AE85) & M32
        p0, p1 = 0xD2511F53 * c[0], 0xCD9E8D57 * c[2]
        c = [(p1 >> 32) ^ c[1] ^ k0, p1 & M32, (p0 >> 32) ^ c[3] ^ k1, p0 & M32]
    return c


def mix(z: int) -> int:
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    return z ^ (z >> 31)


def reference_f32(seed: int, launch: int, stream: int, index: int, counter: int) -> float:
    key = mix((mix(seed & M64) + launch * 0x9E3779B97F4A7C15) & M64)
    w = philox([counter, stream, index & M32, (index >> 32) & M32], (key & M32, key >> 32))
    return (w[0] >> 8) * 2.0**-24


def test_draws_follow_the_documented_stream() -> None:
    """Stream 0 for serial code, k for the k-th parallel loop indexed by its iteration; a counter per iteration;
    the key from the seed and the launch number: the values are pinned (this is the generator's golden)."""
    # the reference is Philox-4x32-10: Random123's known-answer vectors (kat_vectors, philox4x32 10 rounds)
    assert philox([0, 0, 0, 0], (0, 0)) == [0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8]
    assert philox([M32] * 4, (M32, M32)) == [0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD]
    pi = [0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344]
    assert philox(pi, (0xA4093822, 0x299F31D0)) == [0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1]
    qd_init(random_seed=123, log_level="warn")

    @qd.kernel
    def k(x: Nd[qd.f32, 2]) -> tuple[qd.f32, qd.f32]:
        first = qd.random()
        for i in range(x.shape[0]):  # stream 1
            x[i, 0] = qd.random()
            x[i, 1] = qd.random()
        for i in range(2, x.shape[0]):  # stream 2, indices from 2
            x[i, 2] = qd.random()
        return first, qd.random()  # the serial stream's draws 0 and 1

    x = np.zeros((5, 3), np.float32)
    for launch in range(2):
        first, second = k(x)
        assert first == reference_f32(123, launch, 0, 0, 0)
        assert second == reference_f32(123, launch, 0, 0, 1)
        for i in range(5):
            assert x[i, 0] == reference_f32(123, launch, 1, i, 0)
            assert x[i, 1] == reference_f32(123, launch, 1, i, 1)
        for i in range(2, 5):
            assert x[i, 2] == reference_f32(123, launch, 2, i, 0)


# ---- distributions ------------------------------------------------------------------------------------


def _fill(dtype, n: int = N) -> np.ndarray:  # type: ignore[no-untyped-def]
    @qd.kernel
    def fill(x: Nd[dtype, 1]):  # noqa: B023
        for i in range(x.shape[0]):
            x[i] = qd.random(dtype)  # noqa: B023

    x = np.zeros(n, dtype.np_dtype)
    fill(x)
    return x


def _check_uniform01(u: np.ndarray) -> None:
    """Mean 1/2, variance 1/12, and a flat histogram (chi-square over 64 bins)."""
    n = len(u)
    assert abs(u.mean() - 0.5) < 6 * np.sqrt(1 / 12 / n)
    assert abs(u.var() - 1 / 12) < 6 * np.sqrt((1 / 80 - 1 / 144) / n)
    counts = np.bincount(np.minimum((u * 64).astype(np.int64), 63), minlength=64)
    chi2 = ((counts - n / 64) ** 2 / (n / 64)).sum()
    assert chi2 < 63 + 6 * np.sqrt(2 * 63)


@pytest.mark.parametrize("dtype, bits", [(qd.f32, 24), (qd.f64, 53), (qd.f16, 11)])
def test_floats_are_uniform_in_the_unit_interval(dtype, bits: int) -> None:  # type: ignore[no-untyped-def]
    x = _fill(dtype).astype(np.float64)
    assert x.min() >= 0.0 and x.max() < 1.0
    _check_uniform01(x)
    steps = x * 2.0**bits
    assert np.array_equal(steps, np.floor(steps))  # multiples of 2**-bits
    assert np.any(np.modf(x * 2.0 ** (bits - 1))[0] > 0)  # and every bit is used (the last one too)


@pytest.mark.parametrize("dtype", [qd.i32, qd.u32, qd.i64, qd.u64])
def test_integers_cover_their_whole_range(dtype) -> None:  # type: ignore[no-untyped-def]
    x = _fill(dtype)
    bits = dtype.bits
    lo, hi = dtype.min_max()
    u = (x.astype(np.float64) - lo) / 2.0**bits  # to [0, 1)
    _check_uniform01(u)
    span = float(hi) - float(lo)
    assert x.min() < lo + span / 1000 and x.max() > hi - span / 1000
    low = (x.view(np.uint32 if bits == 32 else np.uint64) & 0xFF).astype(np.int64)  # the low bits are uniform too
    counts = np.bincount(low, minlength=256)
    assert ((counts - len(x) / 256) ** 2 / (len(x) / 256)).sum() < 255 + 6 * np.sqrt(2 * 255)


def test_two_draws_of_an_iteration_are_independent() -> None:
    @qd.kernel
    def pairs(x: Nd[qd.f32, 2]):
        for i in range(x.shape[0]):
            x[i, 0] = qd.random()
            x[i, 1] = qd.random()

    x = np.zeros((N, 2), np.float32)
    pairs(x)
    assert abs(np.corrcoef(x[:, 0], x[:, 1])[0, 1]) < 6 / np.sqrt(N)
    assert abs((x[:, 0] * x[:, 1]).mean() - 0.25) < 6 * np.sqrt((1 / 9 - 1 / 16) / N)
    # neighbouring iterations too (stream positions differ only in the index)
    assert abs(np.corrcoef(x[:-1, 0], x[1:, 0])[0, 1]) < 6 / np.sqrt(N)


def test_default_types_are_the_programs() -> None:
    qd_init(offline_cache=False, log_level="warn", default_fp=qd.f64, default_ip=qd.i64)

    @qd.kernel
    def k(x: Nd[qd.f64, 1], y: Nd[qd.i64, 1]):
        x[0] = qd.random()
        x[1] = qd.random(float)
        y[0] = qd.random(int)
        y[1] = qd.random(dtype=qd.i32)

    k(np.zeros(2), np.zeros(2, np.int64))
    from quadrants.ir import nodes as ir

    draws = [s.type for s in ir.walk(kernel_ir(k).body) if isinstance(s, ir.Random)]
    assert draws == [qd.f64, qd.f64, qd.i64, qd.i32]


# ---- reproducibility ----------------------------------------------------------------------------------


def _program(x: np.ndarray, y: np.ndarray) -> tuple[float, int]:
    """Parallel draws (also in nested serial loops and an ndrange loop), serial draws, two launches."""

    @qd.kernel
    def k(x: Nd[qd.f32, 1], y: Nd[qd.f64, 2]) -> tuple[qd.f64, qd.u32]:
        s = qd.random(qd.f64)
        for i in range(x.shape[0]):
            acc = 0.0
            for j in range(i % 3):
                acc += qd.random()
            x[i] = acc + qd.random()
        for i, j in qd.ndrange(y.shape[0], y.shape[1]):
            y[i, j] = qd.random(qd.f64)
        return s, qd.random(qd.u32)

    first = k(x, y)
    second = k(x, y)
    assert first != second
    return second


def _run(n: int, seed: int = 0, **init) -> tuple[np.ndarray, np.ndarray, tuple[float, int]]:  # type: ignore[no-untyped-def]
    qd.init(**{**backend_kwargs(), "log_level": "warn", "random_seed": seed, **init})
    x, y = np.zeros(n, np.float32), np.zeros((n // 64, 64))
    r = _program(x, y)
    return x, y, r


def _same(a, b) -> bool:  # type: ignore[no-untyped-def]
    return all(np.array_equal(p, q) for p, q in zip(a[:2], b[:2])) and a[2] == b[2]


def test_a_seed_gives_the_same_numbers_and_another_seed_others() -> None:
    a, b, c = _run(1 << 14, seed=5), _run(1 << 14, seed=5), _run(1 << 14, seed=6)
    assert _same(a, b)
    assert np.mean(a[0] == c[0]) < 1e-3
    assert not np.array_equal(a[1], c[1]) and a[2] != c[2]


def test_the_default_seed_is_zero() -> None:
    assert _same(_run(1 << 10), _run(1 << 10, seed=0))
    assert not _same(_run(1 << 10), _run(1 << 10, seed=1))


@pytest.mark.parametrize("threads", [2, 3, 8])
def test_parallel_draws_do_not_depend_on_the_thread_count(threads: int) -> None:
    if backend_kwargs()["arch"] is not qd.cpu:
        pytest.skip("CPU threads")
    one = _run(N, seed=11, cpu_max_num_threads=1)
    assert _same(one, _run(N, seed=11, cpu_max_num_threads=threads))


def test_the_cpu_and_the_cuda_backend_draw_the_same_numbers() -> None:
    cpu = _run(1 << 12, seed=3, arch=qd.cpu)
    cuda = _run(1 << 12, seed=3, arch=qd.cuda, cuda_emulate=True)
    assert _same(cpu, cuda)


def test_successive_launches_and_other_kernels_draw_other_numbers() -> None:
    @qd.kernel
    def a(x: Nd[qd.f32, 1]):
        for i in range(x.shape[0]):
            x[i] = qd.random()

    @qd.kernel
    def b(x: Nd[qd.f32, 1]):
        for i in range(x.shape[0]):
            x[i] = qd.random()

    outs = []
    for k in (a, a, b, a):
        x = np.zeros(4096, np.float32)
        k(x)
        outs.append(x)
    for i in range(len(outs)):
        for j in range(i):
            assert np.mean(outs[i] == outs[j]) < 0.01  # (equal f32 draws happen, rarely)
    # qd.init starts the launch count again: the same program draws the same numbers
    qd_init(log_level="warn")
    x = np.zeros(4096, np.float32)
    b(x)
    assert np.array_equal(x, outs[0])


def test_serial_draws_continue_one_stream_through_the_launch() -> None:
    @qd.kernel
    def k(x: Nd[qd.f32, 1]):
        for j in range(x.shape[0] // 2):  # parallel: stream 1
            x[j] = qd.random()
        for j in range(x.shape[0] // 2, x.shape[0]):  # parallel: stream 2
            x[j] = qd.random()
        x[0] = qd.random()  # serial: stream 0, draws 0, 1, 2
        if x[0] >= 0.0:
            x[1] = qd.random()
        x[2] = qd.random()

    x = np.zeros(64, np.float32)
    k(x)
    assert len(set(x.tolist())) == 64


def test_a_draw_outside_kernels_raises_as_in_quadrants() -> None:
    with pytest.raises(IndexError, match="only be used inside a kernel"):
        qd.random()


@pytest.mark.parametrize("dtype", ["qd.u8", "qd.i16", "qd.u1", "qd.math.vec3"])
def test_types_quadrants_cannot_draw_are_compile_errors(dtype: str) -> None:
    t = eval(dtype)

    @qd.kernel
    def k() -> qd.i32:
        return qd.cast(qd.random(t), qd.i32)  # noqa: B023

    with pytest.raises(QuadrantsTypeError, match="qd.random\\(\\) cannot draw") as e:
        k()
    assert "test_random.py" in str(e.value)


def test_random_seed_is_checked_and_read_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    from quadrants._config import load_config

    assert load_config({})[0].random_seed == 0
    assert load_config({"random_seed": "7"})[0].random_seed == 7
    assert load_config({}, {"QD_RANDOM_SEED": "-3"})[0].random_seed == -3
    for bad in (2**31, -(2**31) - 1, 1.5):
        with pytest.raises(ValueError, match="random_seed"):
            load_config({"random_seed": bad})
    want = _run(256, seed=5)
    monkeypatch.setenv("QD_RANDOM_SEED", "5")
    qd.init(**backend_kwargs(), log_level="warn")
    x, y = np.zeros(256, np.float32), np.zeros((4, 64))
    assert _same(want, (x, y, _program(x, y)))


@pytest.mark.parametrize("dtype", [None, qd.f32, qd.f64])
def test_randn_is_standard_normal(dtype) -> None:  # type: ignore[no-untyped-def]
    @qd.kernel
    def fill(x: Nd[qd.f64, 1]):
        for i in range(x.shape[0]):
            x[i] = qd.randn() if qd.static(dtype is None) else qd.randn(dtype)  # noqa: B023

    x = np.zeros(N)
    fill(x)
    assert np.all(np.isfinite(x))
    for k, (want, var) in enumerate([(0.0, 1.0), (1.0, 2.0), (0.0, 15.0), (3.0, 96.0)], start=1):
        assert abs((x**k).mean() - want) < 6 * np.sqrt(var / N)  # the k-th moment and its variance
    with pytest.raises(AssertionError, match="only be used inside a kernel"):
        qd.randn()


@pytest.mark.parametrize("dt", ["qd.i32", "qd.math.vec3"])
def test_randn_draws_floats_only(dt: str) -> None:
    t = eval(dt)

    @qd.kernel
    def k() -> qd.f32:
        return qd.randn(t)  # noqa: B023

    with pytest.raises(QuadrantsTypeError, match="draws f32 or f64"):
        k()


def test_random_in_a_real_function_is_a_located_error() -> None:
    @qd.real_func
    def jitter(x: qd.f32) -> qd.f32:
        return x + qd.random()

    @qd.kernel
    def k(a: qd.types.NDArray[qd.f32, 1]):
        for i in range(a.shape[0]):
            a[i] = jitter(0.0)

    with pytest.raises(qd.QuadrantsCompilationError, match="real_func is not supported yet") as e:
        k(np.zeros(4, np.float32))
    assert "qd.random()" in str(e.value)
