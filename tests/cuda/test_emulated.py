"""The CUDA runtime path on the CPU emulator: what the language tests (run with --backend cuda-emulated) do not
already cover - arguments copied in and out, errors, the caches across processes, memory of another program."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import quadrants as qd
from quadrants.cache.keys import FORMAT
from quadrants.lang import program
from tests.cuda.apps import run_twice

Nd = qd.types.NDArray


@pytest.fixture(autouse=True)
def emulated() -> None:
    qd.init(arch=qd.cuda, cuda_emulate=True, log_level="warn")
    dev = program.get().device
    assert dev is not None and dev.emulated


def test_numpy_arguments_are_copied_in_and_out() -> None:
    @qd.kernel
    def k(x: Nd[qd.f64, 2], s: qd.f64):
        for i, j in x:
            x[i, j] = x[i, j] * s + i

    a = np.arange(12.0).reshape(3, 4)
    want = a * 2 + np.arange(3)[:, None]
    k(a, 2.0)
    np.testing.assert_array_equal(a, want)
    view = np.zeros((6, 4))[::2]  # not contiguous
    k(view, 1.0)
    np.testing.assert_array_equal(view, np.arange(3)[:, None] * np.ones(4))


def test_serial_stores_of_constants_to_ndarrays_are_kept() -> None:
    """A store of a constant at the top level is a task of its own, not a local to promote (a regression: the
    cloth's `pin` kernel lost its velocity stores)."""

    @qd.kernel
    def pin(x: Nd[qd.math.vec3, 1], v: Nd[qd.math.vec3, 1]):
        x[0] = qd.math.vec3(1.0, 2.0, 3.0)
        v[0] = qd.math.vec3(0.0, 0.0, 0.0)
        v[2][1] = 7.0
        n = 5
        x[1][0] = n * 2.0

    x = qd.Vector.ndarray(3, qd.f32, (3,))
    v = qd.Vector.ndarray(3, qd.f32, (3,))
    v.fill(1.0)
    pin(x, v)
    assert x.to_numpy()[0].tolist() == [1, 2, 3] and x.to_numpy()[1, 0] == 10.0
    assert v.to_numpy().tolist() == [[0, 0, 0], [1, 1, 1], [1, 7, 1]]


def test_results_and_vectors_come_back() -> None:
    @qd.kernel
    def k(x: Nd[qd.f32, 1]) -> tuple[qd.f32, qd.math.vec2]:
        lo = 1e30
        for i in range(x.shape[0]):
            qd.atomic_min(lo, x[i])
        return lo, qd.math.vec2(lo, lo * 2)

    lo, v = k(np.array([3.0, -2.5, 7.0], np.float32))
    assert lo == -2.5 and v.to_numpy().tolist() == [-2.5, -5.0]


def test_bounds_errors_in_debug_mode_name_the_ndarray() -> None:
    qd.init(arch=qd.cuda, cuda_emulate=True, debug=True, log_level="warn")

    @qd.kernel
    def k(x: Nd[qd.f32, 1], n: qd.i32):
        for i in range(n):
            x[i] = 1.0

    with pytest.raises(qd.QuadrantsIndexError, match="out of bounds for axis 0 with size 4 of 'x'"):
        k(np.zeros(4, np.float32), 9)
    k(np.zeros(4, np.float32), 4)  # the error record was cleared


def test_an_ndarray_of_another_program_is_refused() -> None:
    qd.init(arch=qd.cpu, log_level="warn")
    cpu_array = qd.ndarray(qd.f32, (4,))
    qd.init(arch=qd.cuda, cuda_emulate=True, log_level="warn")

    @qd.kernel
    def k(x: Nd[qd.f32, 1]):
        for i in range(x.shape[0]):
            x[i] = 1.0

    with pytest.raises(qd.QuadrantsRuntimeTypeError, match="allocated for another backend"):
        k(cpu_array)


@pytest.mark.slow
def test_fastcache_across_processes_through_the_cuda_backend(tmp_path: Path) -> None:
    runs = run_twice(tmp_path, "arch=qd.cuda, cuda_emulate=True")
    assert runs[0]["r"] == 2000.0 and runs[0]["stored"] and runs[0]["compiles"] == 1
    assert runs[1]["r"] == 2000.0 and runs[1]["loaded"] and runs[1]["compiles"] == 0


def test_cpu_and_cuda_entries_of_one_kernel_coexist(tmp_path: Path) -> None:
    cache = str(tmp_path / "cache")

    @qd.kernel(fastcache=True)
    def twice(x: Nd[qd.i32, 1]):
        for i in range(x.shape[0]):
            x[i] *= 2

    for arch in (dict(arch=qd.cpu), dict(arch=qd.cuda, cuda_emulate=True)):
        qd.init(**arch, offline_cache_file_path=cache, log_level="warn")  # type: ignore[arg-type]
        a = np.arange(5, dtype=np.int32)
        twice(a)
        assert a.tolist() == [0, 2, 4, 6, 8]
    targets = {p.name for p in (tmp_path / "cache" / f"v{FORMAT}" / "fast").rglob("*.qd")}
    assert len(targets) == 2  # one fastcache entry per backend


def _both(make, *args_factory):  # type: ignore[no-untyped-def]
    """Run a kernel made by `make()` on the CPU and through the emulated CUDA backend; return both results and
    the arguments after each run."""
    out = []
    for init in (dict(arch=qd.cpu), dict(arch=qd.cuda, cuda_emulate=True)):
        qd.init(**init, offline_cache=False, log_level="warn")  # type: ignore[arg-type]
        kernel = make()
        args = [f() for f in args_factory]
        r = kernel(*args)
        out.append((r, [np.array(a.to_numpy() if hasattr(a, "to_numpy") else a) for a in args]))
    return out


def _same(pairs) -> None:  # type: ignore[no-untyped-def]
    (r1, a1), (r2, a2) = pairs
    if isinstance(r1, tuple):
        assert list(r1) == list(r2)
    else:
        assert r1 == r2
    for x, y in zip(a1, a2):
        np.testing.assert_array_equal(x, y)


def test_values_flow_between_tasks_like_on_the_cpu() -> None:
    def make():  # type: ignore[no-untyped-def]
        @qd.kernel
        def k(x: Nd[qd.i32, 1], y: Nd[qd.i32, 1]) -> tuple[qd.i32, qd.i32]:
            total = 0
            for i in range(x.shape[0]):
                total += x[i]
            m = total % 7 + 1  # serial, from the first loop's result
            count = 0
            while count * m < 20:  # a serial loop
                count += 1
            y[0] = count
            if total > 10:
                y[1] = m
            else:
                y[1] = -m
            for j in range(1, m + 1):  # bounds computed on the device
                y[j + 1] = x[j] * count
            last = y[m + 1]
            return total, last

        return k

    _same(_both(make, lambda: np.arange(20, dtype=np.int32), lambda: np.zeros(12, np.int32)))


def test_reductions_into_ndarray_and_field_elements() -> None:
    def make():  # type: ignore[no-untyped-def]
        f = qd.field(qd.f64, (2,))

        @qd.kernel
        def k(x: Nd[qd.f64, 1], s: Nd[qd.f64, 1]) -> qd.f64:
            for i in range(x.shape[0]):
                s[0] += x[i]
                f[1] += 2 * x[i]
                qd.atomic_max(s[1], x[i])
            return f[1]

        return k

    pairs = _both(make, lambda: np.arange(100, dtype=np.float64), lambda: np.zeros(2))
    _same(pairs)
    assert pairs[0][0] == 2 * 4950.0
