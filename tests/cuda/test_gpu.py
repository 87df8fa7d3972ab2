"""Kernels on a real NVIDIA GPU (skipped without one: the rest of tests/cuda runs everywhere).

Run on a GPU machine with `pytest -m gpu tests/cuda` (benchmarks/gpu_check.sh does that and the GPU benchmarks).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import quadrants as qd
from quadrants.backends.cuda import gpu_available
from quadrants.lang import program
from tests.cuda.apps import run_twice


def _gpu_reason() -> str | None:
    if not gpu_available():
        return "no CUDA driver"
    try:
        from quadrants.runtime.cuda_driver import CudaDevice

        CudaDevice()
    except Exception as e:  # noqa: BLE001 - whatever stops the device is the skip reason
        return f"the CUDA device cannot start: {e}"
    return None


REASON = _gpu_reason()
pytestmark = [pytest.mark.gpu, pytest.mark.skipif(REASON is not None, reason=REASON or "")]
Nd = qd.types.NDArray


@pytest.fixture(autouse=True)
def on_gpu(session_cache_dir: str) -> None:
    qd.init(arch=qd.cuda, log_level="warn", offline_cache_file_path=session_cache_dir)
    assert program.get().device is not None and not program.get().device.emulated


def test_saxpy_matches_numpy() -> None:
    @qd.kernel
    def saxpy(a: qd.f32, x: Nd[qd.f32, 1], y: Nd[qd.f32, 1]):
        for i in range(x.shape[0]):
            y[i] = a * x[i] + y[i]

    n = 1 << 20
    x = qd.ndarray(qd.f32, (n,))
    y = qd.ndarray(qd.f32, (n,))
    xs = np.random.default_rng(0).random(n, dtype=np.float32)
    x.from_numpy(xs)
    y.fill(1.0)
    saxpy(2.0, x, y)
    np.testing.assert_allclose(y.to_numpy(), 2 * xs + 1, rtol=1e-6)


def test_reductions_and_serial_tasks() -> None:
    @qd.kernel
    def stats(x: Nd[qd.i32, 1]) -> tuple[qd.i32, qd.i32, qd.i32]:
        s = 0
        m = -(1 << 30)
        for i in range(x.shape[0]):
            s += x[i]
            qd.atomic_max(m, x[i])
        twice = s * 2
        return s, m, twice

    x = np.random.default_rng(1).integers(-1000, 1000, 100_003).astype(np.int32)
    assert stats(x) == (int(x.sum()), int(x.max()), 2 * int(x.sum()))


def test_math_multi_dimensional_loops_and_vectors() -> None:
    @qd.kernel
    def k(a: Nd[qd.f64, 2], v: Nd[qd.math.vec3, 1]):
        for i, j in a:
            a[i, j] = qd.sin(i * 0.1) * qd.exp(j * 0.01) + qd.atan2(i, j + 1.0)
        for i in range(v.shape[0]):
            v[i] = qd.math.vec3(i, 2 * i, 3 * i).normalized() if i > 0 else qd.math.vec3(0.0, 0.0, 0.0)

    a = np.zeros((300, 200))
    v = qd.Vector.ndarray(3, qd.f32, (50,))
    k(a, v)
    i, j = np.meshgrid(np.arange(300), np.arange(200), indexing="ij")
    np.testing.assert_allclose(a, np.sin(i * 0.1) * np.exp(j * 0.01) + np.arctan2(i, j + 1.0), rtol=1e-12)
    want = np.array([[i, 2 * i, 3 * i] for i in range(50)], dtype=np.float64)
    want[1:] /= np.linalg.norm(want[1:], axis=1, keepdims=True)
    np.testing.assert_allclose(v.to_numpy(), want, rtol=1e-6, atol=1e-7)


def test_fields_and_print(capfd: pytest.CaptureFixture[str]) -> None:
    f = qd.field(qd.i32, (64,))

    @qd.kernel
    def k():
        for i in f:
            f[i] = i * i
        print("done", f[7])

    k()
    np.testing.assert_array_equal(f.to_numpy(), np.arange(64) ** 2)
    assert "done 49" in capfd.readouterr().out


def test_bounds_errors_in_debug_mode() -> None:
    qd.init(arch=qd.cuda, debug=True, log_level="warn", offline_cache=False)

    @qd.kernel
    def k(x: Nd[qd.f32, 1], n: qd.i32):
        for i in range(n):
            x[i] = 1.0

    with pytest.raises(qd.QuadrantsIndexError, match="out of bounds"):
        k(np.zeros(4, np.float32), 8)


def test_sparse_trees_on_the_device_pool() -> None:
    """Thousands of GPU threads activate cells of a pointer level (the slot claim and the pool lock under
    independent thread scheduling), a struct-for visits them, a reset zeroes the arena with a device memset,
    and a full arena is an error (tests/lang/test_sparse_device.py: the same through the emulator)."""
    qd.init(arch=qd.cuda, log_level="warn", offline_cache=False, device_memory_GB=4096 * 64 / 2**30)
    x = qd.field(qd.f32)
    blk = qd.root.pointer(qd.i, 8192)
    blk.dense(qd.i, 16).place(x)  # cells of 64 bytes: 4096 fit

    @qd.kernel
    def fill(n: qd.i32, step: qd.i32):
        for i in range(n * 16):
            qd.atomic_add(x[(i * step) % (n * 16)], 1.0)  # threads of many warps share each cell

    @qd.kernel
    def total() -> qd.f64:
        s = 0.0
        for i in x:
            s += x[i]
        return s

    fill(4096, 7)
    assert total() == 4096 * 16 and blk._num_dynamically_allocated == 4096
    np.testing.assert_array_equal(x.to_numpy()[: 4096 * 16], 1.0)
    qd.deactivate_all_snodes()
    assert total() == 0 and blk._num_dynamically_allocated == 0
    fill(100, 1)
    assert total() == 1600 and not x.to_numpy()[1600:].any()
    with pytest.raises(qd.QuadrantsRuntimeError, match="Sparse SNode pool exhausted"):
        fill(5000, 1)


def test_torch_cuda_tensors_are_passed_by_pointer() -> None:
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch without CUDA")

    @qd.kernel
    def k(x: Nd[qd.f32, 1]):
        for i in range(x.shape[0]):
            x[i] = x[i] * 2 + i

    t = torch.ones(1000, device="cuda")
    k(t)
    torch.cuda.synchronize()
    np.testing.assert_allclose(t.cpu().numpy(), 2 + np.arange(1000))


def test_random_draws_match_the_cpu() -> None:
    """The GPU runs the same counter-based generator (with mul.hi.u32): the same seed draws the same numbers."""

    def draw() -> tuple[np.ndarray, np.ndarray, int]:
        @qd.kernel
        def k(x: Nd[qd.f32, 1], y: Nd[qd.u64, 1]) -> qd.u32:
            for i in range(x.shape[0]):
                x[i] = qd.random()
                y[i] = qd.random(qd.u64)
            return qd.random(qd.u32)

        x, y = np.zeros(1 << 16, np.float32), np.zeros(1 << 16, np.uint64)
        r = k(x, y)
        return x, y, r

    gpu = draw()
    qd.init(arch=qd.cpu, log_level="warn")
    cpu = draw()
    np.testing.assert_array_equal(gpu[0], cpu[0])
    np.testing.assert_array_equal(gpu[1], cpu[1])
    assert gpu[2] == cpu[2]


@pytest.mark.slow
def test_fastcache_across_processes_on_the_gpu(tmp_path: Path) -> None:
    runs = run_twice(tmp_path, "arch=qd.cuda")
    assert runs[0]["r"] == 2000.0 and runs[0]["stored"]
    assert runs[1]["r"] == 2000.0 and runs[1]["loaded"] and runs[1]["compiles"] == 0 and not runs[1]["llvmlite"]
