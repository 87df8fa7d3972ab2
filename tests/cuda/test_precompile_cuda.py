"""`qd precompile --target cuda:sm_80,sm_90` on a machine without a GPU, and how a GPU process picks the code."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import quadrants as qd
from quadrants import _config
from quadrants.cache.keys import FORMAT
from quadrants.codegen import nvptx
from quadrants.driver import Driver
from quadrants.runtime.cuda_driver import pick_image
from quadrants.runtime.device import Device, LoadedCuda

pytestmark = pytest.mark.slow  # every test runs `qd precompile` in a subprocess

KERNELS = '''
import quadrants as qd

@qd.kernel(fastcache=True)
def saxpy(a: qd.f32, x: qd.types.NDArray[qd.f32, 1], y: qd.types.NDArray[qd.f32, 1]):
    for i in range(x.shape[0]):
        y[i] = a * qd.sin(x[i]) + y[i]

@qd.kernel(fastcache=True)
def total(x: qd.types.NDArray[qd.f32, 1]) -> qd.f32:
    s = 0.0
    for i in range(x.shape[0]):
        s += x[i]
    return s
'''


@pytest.fixture
def project(tmp_path: Path) -> tuple[Path, str]:
    name = f"cudaproj_{uuid.uuid4().hex[:8]}"
    (tmp_path / f"{name}.py").write_text(KERNELS)
    (tmp_path / "qd.toml").write_text(
        f'modules = ["{name}"]\ncache_dir = "cache"\ntargets = ["cuda:sm_80,sm_90"]\n\n'
        f'[[kernel]]\nname = "{name}:saxpy"\n\n[[kernel]]\nname = "{name}:total"\n'
    )
    return tmp_path, name


def qd_cli(cwd: Path, *args: str) -> tuple[int, dict]:
    proc = subprocess.run([sys.executable, "-m", "quadrants_cli.main", *args, "--json"], cwd=cwd, capture_output=True,
                          text=True, timeout=600)  # fmt: skip
    return proc.returncode, json.loads(proc.stdout) if proc.stdout.strip() else {"stderr": proc.stderr}


@pytest.mark.skipif(nvptx.libdevice_path() is None, reason="libdevice is not installed")
def test_precompile_for_gpus_without_a_gpu(project: tuple[Path, str]) -> None:
    root, name = project
    rc, report = qd_cli(root, "precompile")
    assert rc == 0, report
    assert report["targets"] == ["cuda:sm_80", "cuda:sm_90"] and report["compiled"] == 4 and report["bundles"] == {}
    assert qd_cli(root, "precompile", "--check")[0] == 0
    listed = json.loads((root / "cache" / f"v{FORMAT}" / "targets.json").read_text())
    assert listed["cuda"] == ["sm_80", "sm_90"]
    rc, ls = qd_cli(root, "cache", "ls", "--cache-dir", str(root / "cache"))
    targets = sorted(r["target"] for r in ls["entries"] if r["kind"] == "fastcache")
    assert targets == ["cuda:sm_80", "cuda:sm_80", "cuda:sm_90", "cuda:sm_90"]


class StubGpu(Device):
    """A GPU of some compute capability that records which image it was given."""

    emulated = False

    def __init__(self, capability: tuple[int, int]) -> None:
        self.capability = capability
        self.arch = f"sm_{capability[0]}{capability[1]}"
        self.loaded: list[bytes] = []

    def load(self, image: dict[str, bytes], plan: object) -> LoadedCuda:
        self.loaded.append(pick_image(image, self.capability))
        return LoadedCuda(plan, ())


@pytest.mark.skipif(nvptx.libdevice_path() is None or nvptx.ptxas_path() is None, reason="needs libdevice and ptxas")
@pytest.mark.parametrize("capability, want", [((9, 0), "cubin"), ((8, 6), "cubin"), ((10, 0), "ptx"), ((7, 5), None)])
def test_a_gpu_takes_its_cubin_a_compatible_one_or_the_ptx(project: tuple[Path, str], capability, want) -> None:  # type: ignore[no-untyped-def]
    root, name = project
    assert qd_cli(root, "precompile")[0] == 0
    sys.path.insert(0, str(root))
    try:
        module = __import__(name)
    finally:
        sys.path.remove(str(root))
    qd.init(arch=qd.cpu, offline_cache_file_path=str(root / "cache"), log_level="error")
    gpu = StubGpu(capability)
    base = qd.lang.program.get().config
    config = dataclasses.replace(base, arch=_config.cuda, cuda_arch=gpu.arch)
    driver = Driver(config, device=gpu)
    kernel = module.saxpy
    req = NoCompile(kernel.request(kernel.specialize((1.0, np.zeros(2, np.float32), np.zeros(2, np.float32)), {},
                                                    config), config))  # fmt: skip

    if want is None:  # sm_75: older than every precompiled architecture: it must compile
        with pytest.raises(AssertionError, match="compiled instead"):
            driver.obtain(req)
        return
    outcome = driver.obtain(req)
    assert outcome.loaded and outcome.validated
    (image,) = gpu.loaded
    if want == "cubin":
        assert image.startswith(b"\x7fELF")  # a cubin is an ELF image
    else:
        assert b".target sm_90" in image and image.endswith(b"\0")


@dataclasses.dataclass
class NoCompile:
    """A kernel call's request whose frontend fails the test: the driver must load precompiled code."""

    req: Any

    @property
    def fn(self) -> Any:
        return self.req.fn

    @property
    def fastcache(self) -> bool:
        return bool(self.req.fastcache)

    def signature_text(self) -> Any:
        return self.req.signature_text()

    def build_ir(self) -> Any:
        raise AssertionError("compiled instead of loading precompiled code")
