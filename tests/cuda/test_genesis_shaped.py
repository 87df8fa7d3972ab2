"""Genesis-shaped kernels on the CUDA backend without a GPU: run on the emulator, compiled to PTX and assembled by
ptxas for the fleet's architectures (sm_80, sm_90, sm_120).

What Genesis' CUDA path reaches: dataclass arguments past the 4 KiB of launch parameter space (passed through a
device buffer), `qd.loop_config(block_dim=)`, `qd.simt` shared memory, barriers and warp shuffles (its tiled
Cholesky and line-search kernels), and `while qd.graph_do_while(flag):` (its solver loop).
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

import quadrants as qd
from quadrants.codegen import nvptx
from quadrants.codegen.nvptx_isa import ptx_isa
from quadrants.errors import QuadrantsCompilationError
from quadrants.lang import program
from quadrants.runtime import abi
from tests.cuda.apps import FLEET, gpu_images

Nd = qd.types.NDArray
needs_ptxas = pytest.mark.skipif(nvptx.ptxas_path() is None, reason="ptxas is not installed")


@pytest.fixture(autouse=True)
def emulated() -> None:
    qd.init(arch=qd.cuda, cuda_emulate=True, offline_cache=False, log_level="warn")


def _module(tmp_path: Path, name: str, text: str):  # type: ignore[no-untyped-def]
    """A generated module imported from a file (kernels need their source text)."""
    path = tmp_path / f"{name}.py"
    path.write_text(text)
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def _big_dataclass(tmp_path: Path, members: int):  # type: ignore[no-untyped-def]
    body = " + ".join(f"p.a{k}[i, 1]" for k in range(members))
    return _module(
        tmp_path,
        f"big{members}",
        f"""
import dataclasses
import quadrants as qd

Big = dataclasses.make_dataclass("Big", [(f"a{{k}}", qd.types.NDArray[qd.f32, 2]) for k in range({members})],
                                 frozen=True)


@qd.kernel
def total(p: Big, scale: qd.f32, out: qd.types.NDArray[qd.f32, 1]):
    for i in range(out.shape[0]):
        out[i] = scale * ({body})
""",
    )


@needs_ptxas
@pytest.mark.parametrize("members", [100, 180])
def test_a_dataclass_argument_past_the_parameter_space_goes_through_a_device_buffer(tmp_path: Path,
                                                                                      members: int) -> None:  # fmt: skip
    """100 2-d ndarrays take 100 * 24 + 4 bytes of parameters, under 4 KiB: plain parameters (past 256 of them,
    which packed before); 180 take 4340: one pointer to a device buffer of 8-byte slots. Both give the sum."""
    mod = _big_dataclass(tmp_path, members)
    arrays = {}
    for k in range(members):
        a = qd.ndarray(qd.f32, (3, 2))
        a.from_numpy(np.full((3, 2), k, np.float32))
        arrays[f"a{k}"] = a
    out = qd.ndarray(qd.f32, 3)
    mod.total(mod.Big(**arrays), 2.0, out)
    np.testing.assert_array_equal(out.to_numpy(), np.full(3, 2.0 * sum(range(members)), np.float32))
    sizes = [8] + [8, 8, 8] * members + [4]  # out's pointer and extent are 16 more: packed iff over 4096
    packed = abi.cuda_param_bytes([*sizes, 8, 8]) > abi.CUDA_PARAM_BYTES
    assert packed == (members == 180)
    images = gpu_images(mod.total)
    assert set(images.cubins) == set(FLEET)  # ptxas accepted every architecture
    entry = images.ptx["sm_80"].split(".entry", 1)[1].split(")", 1)[0]
    assert entry.count(".param") == (3 if packed else 2 + 3 * members + 1 + 2)


def test_cuda_param_bytes_follows_the_ptx_param_layout() -> None:
    assert abi.cuda_param_bytes([]) == 16  # ctx, temps
    assert abi.cuda_param_bytes([4, 8]) == 32  # the i64 after an f32 is aligned to 8
    assert abi.cuda_param_bytes([1, 1, 4]) == 24
    assert not abi.cuda_packs_args([8] * 510) and abi.cuda_packs_args([8] * 511)


@needs_ptxas
def test_block_shared_memory_barrier_and_shuffle_as_genesis_tiles_use_them() -> None:
    """A block of 32 threads (loop_config(block_dim=32)) stages its rows in shared memory, synchronizes, reads
    another thread's element, then takes a neighbour's value with a warp shuffle: each thread's result depends
    on others', so it is right only if the block's threads really share memory and meet at the barrier."""

    @qd.kernel
    def k(a: Nd[qd.f32, 1], out: Nd[qd.f32, 1], lane: Nd[qd.i32, 1]):
        qd.loop_config(block_dim=32)
        for i in range(a.shape[0]):
            tid = i % 32
            tile = qd.simt.block.SharedArray((2, 32), qd.f32)
            tile[0, tid] = a[i]
            tile[1, tid] = 2.0 * a[i]
            qd.simt.block.sync()
            v = tile[0, 31 - tid] + tile[1, tid]
            down = qd.simt.warp.shfl_down_f32(qd.u32(0xFFFFFFFF), v, 1)
            up = qd.simt.warp.shfl_up_i32(qd.u32(0xFFFFFFFF), tid, 2)
            qd.simt.warp.sync(qd.u32(0xFFFFFFFF))
            out[i] = v + 1000.0 * down
            lane[i] = up * 100 + qd.simt.block.thread_idx()

    n = 96
    a = np.arange(n, dtype=np.float32)
    out, lane = np.zeros(n, np.float32), np.zeros(n, np.int32)
    k(a, out, lane)
    t = np.arange(n) % 32
    base = np.arange(n) - t
    v = a[base + 31 - t] + 2.0 * a
    down = np.where(t < 31, np.roll(v, -1), v)  # the last lane keeps its own value
    np.testing.assert_array_equal(out, v + 1000.0 * down)
    np.testing.assert_array_equal(lane, np.where(t >= 2, t - 2, t) * 100 + t)
    plan_task = next(iter(k._launchers.values())).plan.tasks[0]
    assert plan_task.cooperative and plan_task.block == 32 and plan_task.shared == 256
    images = gpu_images(k)
    assert set(images.cubins) == set(FLEET)
    ptx = images.ptx["sm_80"]
    assert ".shared .align 16 .b8" in ptx and "bar.sync 0" in ptx and "bar.warp.sync" in ptx
    assert "shfl.sync.down.b32" in ptx and "shfl.sync.up.b32" in ptx


def test_a_thread_that_leaves_early_does_not_hold_the_barrier_back() -> None:
    """Threads past the data return before the barrier the others wait at (an exited GPU thread does not count
    at `bar.sync`): the emulated block must not wait for them."""

    @qd.kernel
    def k(a: Nd[qd.i32, 1], m: qd.i32):
        qd.loop_config(block_dim=8)
        for i in range(8):
            if i < m:
                s = qd.simt.block.SharedArray((8,), qd.i32)
                s[i] = i + 1
                qd.simt.block.sync()
                a[i] = s[(i + 1) % m]

    a = np.zeros(8, np.int32)
    k(a, 5)
    np.testing.assert_array_equal(a, [2, 3, 4, 5, 1, 0, 0, 0])


def test_qd_simt_is_refused_on_the_cpu_with_its_location() -> None:
    qd.init(arch=qd.cpu, offline_cache=False, log_level="warn")

    @qd.kernel
    def k(a: Nd[qd.f32, 1]):
        for i in range(a.shape[0]):
            qd.simt.block.sync()
            a[i] = 1.0

    with pytest.raises(QuadrantsCompilationError, match=r"needs the CUDA backend") as e:
        k(np.zeros(4, np.float32))
    assert "qd.simt.block.sync()" in str(e.value)


def test_shared_arrays_outside_a_parallel_loop_or_too_large_are_refused() -> None:
    @qd.kernel
    def outside(a: Nd[qd.f32, 1]):
        s = qd.simt.block.SharedArray((4,), qd.f32)
        a[0] = s[0]

    with pytest.raises(QuadrantsCompilationError, match="only valid inside a kernel's parallel for loop"):
        outside(np.zeros(4, np.float32))

    @qd.kernel
    def huge(a: Nd[qd.f32, 1]):
        for i in range(a.shape[0]):
            s = qd.simt.block.SharedArray((128, 128), qd.f32)
            a[i] = s[0, 0]

    with pytest.raises(QuadrantsCompilationError, match="65536 bytes: more than the 49152 bytes"):
        huge(np.zeros(4, np.float32))


def test_graph_do_while_repeats_the_body_while_the_flag_is_set() -> None:
    """Genesis' solver loop: the body's parallel loops run, then again while the counter (which the body
    decrements) is non-zero - a do-while, so a flag that starts at 0 still runs the body once."""

    @qd.kernel(gpu_graph=True)
    def solve(x: Nd[qd.f32, 1], counter: Nd[qd.i32, 0]):
        while qd.graph_do_while(counter):
            for i in range(x.shape[0]):
                x[i] = x[i] * 2.0
            for _ in range(1):
                counter[()] = counter[()] - 1

    x = qd.ndarray(qd.f32, 4)
    x.from_numpy(np.ones(4, np.float32))
    counter = qd.ndarray(qd.i32, ())
    counter.from_numpy(np.array(3, np.int32))
    solve(x, counter)
    np.testing.assert_array_equal(x.to_numpy(), np.full(4, 8.0, np.float32))
    assert int(counter.to_numpy()) == 0
    counter.from_numpy(np.array(2, np.int32))
    solve(x, counter)  # the second call (the fast path) repeats too
    np.testing.assert_array_equal(x.to_numpy(), np.full(4, 32.0, np.float32))
    launcher = next(iter(solve._launchers.values()))
    assert "graph do_while 'counter' (arg 1)" in launcher.compiled.ir_text


def test_graph_do_while_must_be_in_a_graph_kernel() -> None:
    @qd.kernel
    def no_graph(x: Nd[qd.f32, 1], counter: Nd[qd.i32, 0]):
        while qd.graph_do_while(counter):
            for i in range(x.shape[0]):
                x[i] += 1.0

    with pytest.raises(qd.QuadrantsSyntaxError, match=r"requires @qd.kernel\(graph=True\)"):
        no_graph(np.zeros(2, np.float32), np.ones((), np.int32))  # (it would never stop: nothing clears the flag)


def test_the_fleet_architectures_get_the_ptx_isa_that_has_them() -> None:
    """sm_120 needs PTX ISA 8.7 (LLVM aborts the whole process when asked for PTX 8.0 there); an architecture
    past the table is refused with a Python error before LLVM sees it."""
    assert [ptx_isa(a) for a in FLEET] == [80, 80, 87]
    with pytest.raises(nvptx.NvptxError, match="newer than the GPU architectures"):
        nvptx.target_machine("sm_130")


def test_struct_fields_and_block_dim_run_as_on_the_cpu() -> None:
    """Genesis' fields mode: a `qd.types.struct` field indexed by a loop configured with `block_dim`; the plan
    launches blocks of that size, and the values are the CPU backend's."""
    link = qd.types.struct(pos=qd.math.vec3, mass=qd.f32)

    def run() -> tuple[np.ndarray, np.ndarray]:
        links = link.field(shape=(6,))

        @qd.kernel
        def step(g: qd.f32):
            qd.loop_config(block_dim=64)
            for i in links:
                links[i].mass = 1.0 + i
                links[i].pos = qd.math.vec3(i, 2 * i, 0.0) + links[i].mass * g * qd.math.vec3(0.0, 0.0, 1.0)

        step(-9.8)
        if program.get().device is not None:
            assert next(iter(step._launchers.values())).plan.tasks[0].block == 64
        return links.pos.to_numpy(), links.mass.to_numpy()

    cuda_pos, cuda_mass = run()
    qd.init(arch=qd.cpu, offline_cache=False, log_level="warn")
    cpu_pos, cpu_mass = run()
    np.testing.assert_array_equal(cuda_pos, cpu_pos)
    np.testing.assert_array_equal(cuda_mass, cpu_mass)


def test_a_loop_under_a_compile_time_condition_stays_parallel() -> None:
    """Genesis' `if decompose:` (a template flag) around a func whose tiled loop shares memory: the condition
    folds (as Quadrants' simplifier folds it before offloading), so the loop is still the kernel's parallel loop."""

    @qd.kernel
    def k(a: Nd[qd.i32, 1], t: qd.template()):
        if t:
            qd.loop_config(block_dim=8)
            for i in range(8):
                s = qd.simt.block.SharedArray((8,), qd.i32)
                s[i] = i
                qd.simt.block.sync()
                a[i] = s[7 - i]

    a = np.zeros(8, np.int32)
    k(a, True)
    np.testing.assert_array_equal(a, np.arange(8)[::-1])
    k(a, False)  # the other specialization compiles to nothing
    np.testing.assert_array_equal(a, np.arange(8)[::-1])


def test_a_break_under_a_compile_time_condition_keeps_the_loop_serial() -> None:
    """Quadrants 1.3.3 compiles a `break` in a loop under `if template_flag:` (the loop is serial there): it
    still compiles once the condition folds, and stops where it breaks ([1, 1, 0, 0] on 1.3.3)."""
    qd.init(arch=qd.cpu, offline_cache=False, log_level="warn")

    @qd.kernel
    def k(a: Nd[qd.i32, 1], t: qd.template()):
        if t:
            for i in range(4):
                if i == 2:
                    break
                a[i] = 1

    a = np.zeros(4, np.int32)
    k(a, True)
    np.testing.assert_array_equal(a, [1, 1, 0, 0])
    assert not next(iter(k._launchers.values())).compiled.frontend.kernel.body.stmts[-1].parallel


def test_qd_graph_do_while_is_the_same_loop() -> None:
    @qd.kernel(graph=True)
    def count(x: Nd[qd.i32, 1], c: Nd[qd.i32, 0]):
        while qd.graph.do_while(c):
            for i in range(x.shape[0]):
                x[i] += 1
            for _ in range(1):
                c[()] = c[()] - 1

    x, c = np.zeros(3, np.int32), np.array(4, np.int32)
    count(x, c)
    np.testing.assert_array_equal(x, [4, 4, 4])
