"""The NVPTX code generator without a GPU: task splitting, libdevice math, PTX validated by ptxas.

(Every kernel the rest of the suite compiles is also compiled to PTX and assembled: tests/conftest.py.)
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import quadrants as qd
from quadrants.backends.cuda import compile_cuda
from quadrants.codegen import nvptx
from quadrants.lang import program

needs_ptxas = pytest.mark.skipif(nvptx.ptxas_path() is None, reason="ptxas is not installed")
needs_libdevice = pytest.mark.skipif(nvptx.libdevice_path() is None, reason="libdevice is not installed")

Nd = qd.types.NDArray


@pytest.fixture(autouse=True)
def no_cache() -> None:
    qd.init(arch=qd.cpu, offline_cache=False, log_level="warn")


def compiled(kernel, *args):  # type: ignore[no-untyped-def]
    """Call the kernel on the CPU (to specialize and compile it), then compile it for the GPU."""
    kernel(*args)
    launcher = next(iter(kernel._launchers.values()))
    c = launcher.compiled
    return compile_cuda(c.frontend, c.ir_text, c.abi.symbol, program.get().config, ("sm_80", "sm_90"),
                        cubin=nvptx.ptxas_path() is not None)


def test_a_parallel_loop_is_one_grid_stride_task() -> None:
    @qd.kernel
    def saxpy(a: qd.f32, x: Nd[qd.f32, 1], y: Nd[qd.f32, 1]):
        for i in range(x.shape[0]):
            y[i] = a * x[i] + y[i]

    out = compiled(saxpy, 2.0, np.ones(4, np.float32), np.ones(4, np.float32))
    (task,) = out.plan.tasks
    assert task.parallel and task.count is None and out.plan.temps == 0
    ptx = out.ptx["sm_80"]
    assert ".version 8.0" in ptx and ".target sm_80" in ptx and f".entry {task.name}(" in ptx
    assert "%nctaid.x" in ptx  # the grid-stride step
    assert ".target sm_90" in out.ptx["sm_90"]


def test_serial_code_and_shared_locals_become_tasks_and_temps() -> None:
    @qd.kernel
    def k(x: Nd[qd.i32, 1]) -> qd.i32:
        c = 0
        for i in range(x.shape[0]):
            qd.atomic_max(c, x[i])
        m = c * 2
        for j in range(4):
            x[j] += m
        return m + 1

    out = compiled(k, np.arange(8, dtype=np.int32))
    kinds = [t.parallel for t in out.plan.tasks]
    assert kinds == [False, True, False, True, False]
    assert out.plan.tasks[3].count == 4  # a constant range sizes its grid exactly
    assert out.plan.temps == 2  # `c` (shared by tasks) and `m` (computed in one, used in two)


@pytest.mark.parametrize("dtype", [qd.f32, qd.f64, qd.i32, qd.u64])
def test_reductions_combine_a_warp_before_one_atomic(dtype) -> None:  # type: ignore[no-untyped-def]
    @qd.kernel
    def k(x: Nd[dtype, 1]) -> dtype:  # noqa: B023
        s = qd.cast(0, dtype)  # noqa: B023
        for i in range(x.shape[0]):
            s += x[i]
        return s

    out = compiled(k, np.ones(8, dtype.np_dtype))
    ptx = out.ptx["sm_80"]
    assert ptx.count("shfl.sync.down") >= 5  # five shuffle steps (twice as many shuffles for 64 bits)


def test_constants_and_arguments_are_recomputed_not_launched() -> None:
    @qd.kernel
    def k(x: Nd[qd.f32, 2], s: qd.f32):
        n = x.shape[0] * 2
        for i, j in x:
            x[i, j] = s * n

    out = compiled(k, np.zeros((3, 3), np.float32), 1.0)
    assert len(out.plan.tasks) == 1 and out.plan.temps == 0


@needs_libdevice
def test_math_goes_through_libdevice() -> None:
    @qd.kernel
    def k(x: Nd[qd.f32, 1], y: Nd[qd.f64, 1]):
        for i in range(x.shape[0]):
            x[i] = qd.sin(x[i]) + qd.exp(x[i]) + qd.log(x[i] + 2.0) + x[i] ** 2.5 + qd.tan(x[i]) + qd.round(x[i])
            y[i] = qd.atan2(y[i], 2.0) + qd.tanh(y[i]) + qd.acos(y[i] * 0.1) + qd.sqrt(y[i] + 1.0)

    out = compiled(k, np.ones(4, np.float32), np.ones(4))
    ptx = out.ptx["sm_80"]
    assert "__nv_" not in ptx  # inlined from libdevice
    assert not re.search(r"call.*(sinf|expf|logf|powf)", ptx)


def test_what_nvptx_cannot_lower_is_refused_not_aborted() -> None:
    text = (
        'target triple = "nvptx64-nvidia-cuda"\n'
        "declare float @llvm.sin.f32(float)\n"
        "define ptx_kernel void @k(ptr %p) {\n  %v = load float, ptr %p\n  %s = call float @llvm.sin.f32(float %v)\n"
        "  store float %s, ptr %p\n  ret void\n}\n"
    )
    with pytest.raises(nvptx.NvptxError, match="llvm.sin"):
        nvptx.emit_ptx(text, "sm_80", 1, ("k",))


@needs_ptxas
def test_atomics_on_every_type_assemble() -> None:
    types = [qd.i8, qd.i16, qd.i32, qd.i64, qd.u8, qd.u32, qd.u64, qd.f16, qd.f32, qd.f64]
    for t in types:

        @qd.kernel
        def k(x: Nd[t, 1], v: Nd[t, 1]):  # noqa: B023 - t is fixed when the kernel is compiled, just below
            for i in range(v.shape[0]):
                qd.atomic_add(x[0], v[i])
                qd.atomic_max(x[1], v[i])
                qd.atomic_min(x[2], v[i])

        dt = t.np_dtype
        out = compiled(k, np.zeros(3, dt), np.ones(4, dt))
        assert set(out.cubins) == {"sm_80", "sm_90"} and all(len(c) > 0 for c in out.cubins.values())


@needs_ptxas
def test_ptxas_errors_are_reported_with_its_message() -> None:
    with pytest.raises(nvptx.NvptxError, match="ptxas -arch=sm_80 rejected"):
        nvptx.assemble(".version 8.0\n.target sm_80\n.address_size 64\nthis is not ptx\n", "sm_80")


@needs_ptxas
def test_print_uses_vprintf() -> None:
    @qd.kernel
    def k(x: qd.i32, y: qd.f32):
        print("x =", x, "y =", y)

    out = compiled(k, 1, 2.5)
    ptx = out.ptx["sm_80"]
    assert "vprintf" in ptx and out.cubins


def test_clock_counter_reads_the_sm_clock() -> None:
    @qd.kernel
    def k(t: Nd[qd.i64, 1]):
        for i in range(t.shape[0]):
            t[i] = qd.clock_counter()

    out = compiled(k, np.zeros(4, np.int64))
    assert "%clock64" in out.ptx["sm_80"]


def test_architectures_parse() -> None:
    assert [nvptx.parse_arch(a) for a in ("sm_80", "90", "8.6", "compute_75")] == [80, 90, 86, 75]
    with pytest.raises(ValueError, match="not a GPU architecture"):
        nvptx.parse_arch("ampere")


def test_loop_config_serializes_a_loop_and_sets_the_block_size() -> None:
    @qd.kernel
    def k(a: Nd[qd.i32, 1]):
        qd.loop_config(block_dim=32, name="fill")
        for i in range(a.shape[0]):
            a[i] = i
        qd.loop_config(serialize=True)
        for i in range(1, a.shape[0]):
            a[i] += a[i - 1]
        for i in range(a.shape[0]):  # the setting applies to one loop only
            a[i] += 1

    out = compiled(k, np.zeros(8, np.int32))
    assert [(t.parallel, t.block) for t in out.plan.tasks] == [(True, 32), (False, 128), (True, 128)]


@needs_ptxas
def test_a_recursive_real_func_is_a_device_function_that_assembles() -> None:
    @qd.real_func
    def fib(n: qd.i32) -> qd.i32:
        if n < 2:
            return n
        return fib(n - 1) + fib(n - 2)

    @qd.real_func
    def norm_and_sum(v: qd.math.vec3, a: Nd[qd.f32, 1]) -> tuple[qd.f32, qd.f32]:
        s = 0.0
        for i in range(a.shape[0]):
            if a[i] < 0:
                return v.norm(), s  # a return inside a loop
            s += a[i]
        return v.norm(), s

    @qd.kernel
    def k(out: Nd[qd.i32, 1], a: Nd[qd.f32, 1]) -> qd.f32:
        for i in range(out.shape[0]):
            out[i] = fib(i)
        n, s = norm_and_sum(qd.math.vec3(1.0, 2.0, 2.0), a)
        return n + s

    out = compiled(k, np.zeros(8, np.int32), np.ones(4, np.float32))
    ptx = out.ptx["sm_80"]
    assert re.search(r"\.func .*_f0\(", ptx)  # a device function, called (it calls itself: never inlined)
    assert re.search(r"call\.uni[^;]*_f0,", ptx) or re.search(r"call[^;]*_f0", ptx)
    assert set(out.cubins) == {"sm_80", "sm_90"} and all(len(c) > 0 for c in out.cubins.values())


def test_random_draws_assemble_with_32_bit_multiplies_and_add_no_task() -> None:
    @qd.kernel
    def k(x: Nd[qd.f32, 1], y: Nd[qd.u64, 1], z: Nd[qd.f64, 1]):
        for i in range(x.shape[0]):
            x[i] = qd.random()
            y[i] = qd.random(qd.u64)
            z[i] = qd.random(qd.f64) + qd.random(qd.f16)

    out = compiled(k, np.zeros(4, np.float32), np.zeros(4, np.uint64), np.zeros(4))
    assert len(out.plan.tasks) == 1 and out.plan.temps == 0  # the key is recomputed; counters are per thread
    assert set(out.cubins) == {"sm_80", "sm_90"} and all(len(c) > 0 for c in out.cubins.values())
    ptx = out.ptx["sm_80"]
    # Philox rounds: mul.hi.u32 + mul.lo (a 64-bit multiply would be several instructions): 4 draws x 10 rounds x
    # 2, less what LLVM folds (the first round's multiplies of constant counters, the index's shared by the draws)
    assert ptx.count("mul.hi.u32") >= 60
    assert ptx.count("mul.lo.s64") <= 8  # the launch key's mixing only


@pytest.mark.parametrize("layout", ["cu13", "cuda_nvcc"])
def test_ptxas_and_libdevice_are_found_in_nvidias_pip_wheels(tmp_path, monkeypatch, layout) -> None:
    """With no toolkit (no ptxas on PATH, no CUDA_HOME), the wheels an image installs to build cubins are found:
    CUDA 13's `nvidia/cu13/{bin/ptxas,nvvm/libdevice}` and CUDA 12's `nvidia/cuda_nvcc/...`."""
    home = tmp_path / "site" / "nvidia" / layout
    (home / "bin").mkdir(parents=True)
    (home / "nvvm" / "libdevice").mkdir(parents=True)
    ptxas = home / "bin" / "ptxas"
    ptxas.write_text("#!/bin/sh\n")
    ptxas.chmod(0o755)
    (home / "nvvm" / "libdevice" / "libdevice.10.bc").write_bytes(b"BC")
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    for var in ("CUDA_HOME", "CUDA_PATH", "QD_LIBDEVICE"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setattr("quadrants._config.cuda_toolkit_homes", lambda environ=None: [])
    monkeypatch.setattr(nvptx, "cuda_toolkit_homes", lambda environ=None: [])
    monkeypatch.setattr(nvptx.glob, "glob", _only_under(tmp_path, nvptx.glob.glob))
    monkeypatch.setattr("sys.path", [str(tmp_path / "site")])
    assert nvptx.ptxas_path() == str(ptxas)
    assert nvptx.libdevice_path() == str(home / "nvvm" / "libdevice" / "libdevice.10.bc")
    ptxas.chmod(0o644)  # not executable: not a ptxas
    assert nvptx.ptxas_path() is None


def _only_under(root, glob_fn):
    """glob that sees nothing outside `root` (this machine's own /usr/local/cuda-* must not answer)."""
    return lambda pattern: [p for p in glob_fn(pattern) if p.startswith(str(root))]
