"""Hand-edited IR and PTX (backends/dumps.py): a dump (`dump=llvm`, `dump_ir`) edited and read back with
`load_ir` (QD_LOAD_IR) or, for CUDA's PTX, `load_ptx` (QUADRANTS_LOAD_PTX); qd.init refuses either while a cache
could hand a kernel back without compiling it, as Quadrants does."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

import quadrants as qd
from quadrants.backends.cuda import compile_rendered, render_cuda
from quadrants.codegen import nvptx
from quadrants.errors import QuadrantsCompilationError
from quadrants.lang import misc, program

NO_CACHES = {"offline_cache": False, "src_ll_cache": False, "log_level": "warn"}


def _kernel():  # type: ignore[no-untyped-def]
    @qd.kernel
    def add(x: qd.i32) -> qd.i32:
        return x + 1000

    return add


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))


@pytest.mark.parametrize("init", [{"arch": qd.cpu}, {"arch": qd.cuda, "cuda_emulate": True}], ids=["cpu", "emulated"])
def test_an_edited_module_is_what_the_kernel_runs(tmp_path: Path, init: dict, caplog: pytest.LogCaptureFixture) -> None:
    qd.init(**init, **NO_CACHES, dump_ir=True, debug_dump_path=str(tmp_path))
    add = _kernel()
    assert add(1) == 1001
    (module,) = tmp_path.glob("*.ll")
    assert (tmp_path / module.name.replace(".ll", ".qd.txt")).exists()  # dump_ir: the IR and the LLVM module
    _edit(module, "1000", "2000")

    qd.init(**init, **{**NO_CACHES, "log_level": "info"}, load_ir=True, debug_dump_path=str(tmp_path))
    assert add(1) == 2001
    assert f"QD_LOAD_IR: kernel {module.stem} compiles {module}" in caplog.text

    qd.init(**init, **NO_CACHES, debug_dump_path=str(tmp_path))  # off again: the code built for it
    assert add(1) == 1001


def test_a_missing_replacement_warns_and_a_broken_one_is_a_compile_error(tmp_path: Path,
                                                                         caplog: pytest.LogCaptureFixture) -> None:  # fmt: skip
    qd.init(arch=qd.cpu, **NO_CACHES, load_ir=True, debug_dump_path=str(tmp_path))
    add = _kernel()
    assert add(1) == 1001
    assert "QD_LOAD_IR: no replacement for kernel" in caplog.text and "it runs the code built for it" in caplog.text

    qd.init(arch=qd.cpu, **NO_CACHES, dump="llvm", debug_dump_path=str(tmp_path))
    add(1)
    (module,) = tmp_path.glob("*.ll")
    _edit(module, "ret i32", "ret i64")
    qd.init(arch=qd.cpu, **NO_CACHES, load_ir=True, debug_dump_path=str(tmp_path))
    with pytest.raises(QuadrantsCompilationError, match=rf"QD_LOAD_IR: {module} does not compile"):
        add(1)


def test_qd_init_refuses_loading_while_a_cache_is_on(monkeypatch: pytest.MonkeyPatch) -> None:
    for caches in ({}, {"offline_cache": False}, {"src_ll_cache": False}):
        with pytest.raises(ValueError, match=r"QD_LOAD_IR replaces what a kernel compiles .* offline_cache=False and "
                                             r"src_ll_cache=False"):  # fmt: skip
            qd.init(arch=qd.cpu, load_ir=True, **caches)
    monkeypatch.setenv("QD_LOAD_IR", "1")
    with pytest.raises(ValueError, match="QD_LOAD_IR"):
        qd.init(arch=qd.cpu)
    qd.init(arch=qd.cpu, offline_cache=False, src_ll_cache=False)
    monkeypatch.setenv("QD_LOAD_IR", "0")
    qd.init(arch=qd.cpu)
    monkeypatch.setenv("QUADRANTS_LOAD_PTX", "1")  # only CUDA reads PTX
    assert qd.init(arch=qd.cpu, _test_mode=True).load_ptx

    # Quadrants' helper, for any of its archs: the LLVM ones read QD_LOAD_IR, CUDA alone the PTX
    monkeypatch.setenv("QD_LOAD_IR", "1")
    on = SimpleNamespace(offline_cache=True)
    with pytest.raises(ValueError, match="QD_LOAD_IR and QUADRANTS_LOAD_PTX replace"):
        misc._check_ir_load_envs_against_caching(SimpleNamespace(arch=qd.cuda, offline_cache=True), False)
    with pytest.raises(ValueError, match="QD_LOAD_IR replaces"):
        misc._check_ir_load_envs_against_caching(SimpleNamespace(arch=qd.amdgpu, offline_cache=False), True)
    for arch in (qd.vulkan, qd.metal):
        misc._check_ir_load_envs_against_caching(SimpleNamespace(arch=arch, **vars(on)), True)
    misc._check_ir_load_envs_against_caching(SimpleNamespace(arch=qd.cuda, offline_cache=False), False)


@pytest.mark.skipif(nvptx.ptxas_path() is None, reason="ptxas is not installed")
def test_edited_ptx_is_what_ptxas_assembles(tmp_path: Path) -> None:
    qd.init(arch=qd.cpu, **NO_CACHES)
    @qd.kernel
    def scale(x: qd.types.NDArray[qd.f32, 1]):
        for i in range(x.shape[0]):
            x[i] = x[i] * 3.0

    scale(np.ones(4, np.float32))
    c = next(iter(scale._launchers.values())).compiled
    config = program.get().config
    rendered = render_cuda(c.frontend, c.ir_text, c.abi.symbol, config, "sm_80")
    built = compile_rendered(rendered, config, ("sm_80",), edited=True).ptx["sm_80"]

    loading = dataclasses.replace(config, load_ptx=True, debug_dump_path=str(tmp_path))
    edited = tmp_path / f"{c.abi.symbol}.sm_80.ptx"
    edited.write_text(built + "\n// edited by hand\n")
    out = compile_rendered(rendered, loading, ("sm_80",), edited=True)
    assert out.ptx["sm_80"].endswith("// edited by hand\n") and out.images["sm_80"]  # assembled
    assert compile_rendered(rendered, loading, ("sm_80",)).ptx["sm_80"] == built  # the PTX check's copy: as built

    edited.write_text(built.replace(".entry", ".entry_typo", 1))
    with pytest.raises(QuadrantsCompilationError, match=rf"QUADRANTS_LOAD_PTX: {edited} does not compile"):
        compile_rendered(rendered, loading, ("sm_80",), edited=True)
