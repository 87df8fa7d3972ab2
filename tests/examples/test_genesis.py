"""Genesis smoke test: unmodified Genesis drops a box on a plane with this package as its `quadrants`.

Runs where a Python with Genesis installed beside this package is named by GENESIS_PYTHON (see
examples/genesis/README.md: /work/venv-gs-ours/bin/python), or where this interpreter imports `genesis`;
skips otherwise, saying so. The expected position is what real Quadrants 0.5.2 gives for the same scene."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.slow  # starts Genesis in a process

SCENES = Path(__file__).resolve().parents[2] / "examples" / "genesis" / "scenes.py"
ROOT = Path(__file__).resolve().parents[2]


def _genesis_python() -> str | None:
    named = os.environ.get("GENESIS_PYTHON")
    if named:
        return named
    return sys.executable if importlib.util.find_spec("genesis") is not None else None


def _python_or_skip() -> str:
    python = _genesis_python()
    if python is None:
        pytest.skip("Genesis is not installed: set GENESIS_PYTHON to a Python with genesis-world 0.4.5 and this "
                    "package (examples/genesis/README.md)")  # fmt: skip
    return python


def test_a_box_falls_and_rests_as_on_real_quadrants(tmp_path: Path) -> None:
    python = _python_or_skip()
    # a cache of its own (the worker's QD_CACHE_DIR holds what other Genesis tests compiled: no compile then)
    env = {**os.environ, "HOME": str(tmp_path), "XDG_CACHE_HOME": str(tmp_path / "cache"),
           "QD_CACHE_DIR": str(tmp_path / "qd-cache"), "PYTHONPATH": str(ROOT)}  # fmt: skip
    # the CPU run only: the suite's PTX check of every Genesis kernel would double its time (the CUDA build of
    # the manifest's kernels is `qd precompile --target cuda:...`, examples/genesis/README.md)
    env.pop("QD_PTX_CHECK", None)
    run = subprocess.run([python, str(SCENES), "box", "--steps", "100"], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=900)  # fmt: skip
    assert run.returncode == 0, run.stderr[-3000:]
    out = json.loads(run.stdout.strip().splitlines()[-1])
    x, y, z = out["box"]["pos"]
    assert z == pytest.approx(0.09989222139120102, abs=1e-6)  # real Quadrants 0.5.2: 0.09989222139120102
    assert abs(x) < 1e-6 and abs(y) < 1e-6
    assert out["quadrants"]["compiles"] > 0


def test_the_recorded_manifest_precompiles_genesis_so_that_a_scene_compiles_nothing(tmp_path: Path) -> None:
    """`qd precompile examples/genesis/qd.toml` (qd record's output, committed) fills a fresh cache; the Franka
    scene then starts with every fastcache kernel a hit, the others from the offline cache, and none of
    quadrants' compiler modules loaded (llvmlite itself is there: Genesis imports numba)."""
    python = _python_or_skip()
    env = {k: v for k, v in os.environ.items() if not k.startswith("QD_")}
    env.update(HOME=str(tmp_path), XDG_CACHE_HOME=str(tmp_path / "cache"), PYTHONPATH=str(ROOT))
    cache = tmp_path / "qd-cache"
    pre = subprocess.run([python, "-m", "quadrants_cli.main", "precompile", "-m", str(SCENES.parent / "qd.toml"),
                          "--cache-dir", str(cache), "--json"], cwd=tmp_path, env=env, capture_output=True, text=True,
                         timeout=1800)  # fmt: skip
    assert pre.returncode == 0, pre.stdout[-3000:] + pre.stderr[-3000:]
    report = json.loads(pre.stdout)
    assert report["failed"] == 0 and report["compiled"] + report["cached"] == report["signatures"] > 30
    run = subprocess.run([python, str(SCENES), "franka", "--steps", "150"], cwd=tmp_path,
                         env={**env, "QD_CACHE_DIR": str(cache)}, capture_output=True, text=True, timeout=900)  # fmt: skip
    assert run.returncode == 0, run.stderr[-3000:]
    q = json.loads(run.stdout.strip().splitlines()[-1])["quadrants"]
    assert q["compiles"] == 0 and q["codegen_loaded"] == [], q
    assert q["cache"]["fastcache_hits"] >= 28 and q["cache"]["fastcache_misses"] == 0 and q["cache"]["offline_hits"] >= 1
    # run.py, the Docker image's command, reports on the same start what `make docker-check` judges
    # (tools/docker_check.py): the same physics as scenes.py, no compile, every kernel a hit, no compiler module
    image_run = subprocess.run([python, str(SCENES.parent / "run.py"), "--steps", "150", "--json"], cwd=tmp_path,
                               env={**env, "QD_CACHE_DIR": str(cache)}, capture_output=True, text=True, timeout=900)  # fmt: skip
    assert image_run.returncode == 0, image_run.stderr[-3000:]
    r = json.loads(image_run.stdout.strip().splitlines()[-1])
    assert r["compiles"] == 0 and r["compiler_loaded"] == [] and r["llvmlite_imported"] is True, r
    assert r["fastcache_hits"] + r["offline_hits"] == q["cache"]["fastcache_hits"] + q["cache"]["offline_hits"]
    assert r["ready_ms"] > 0 and image_run.stderr == ""
    qpos = json.loads(run.stdout.strip().splitlines()[-1])["franka"]["qpos"]
    assert r["franka_qpos"] == [round(v, 6) for v in qpos]


def test_the_cuda_manifest_precompiles_genesis_for_a_gpu_on_a_machine_without_one(tmp_path: Path) -> None:
    """`qd precompile -m examples/genesis/qd-cuda.toml --target cuda:sm_90` (the manifest recorded under gs.gpu on
    the emulator) builds every signature's cubin (ptxas) and PTX here, without a GPU; `--check` then finds every
    signature cached for sm_90, and none for another architecture (its keys are its own)."""
    python = _python_or_skip()
    env = {k: v for k, v in os.environ.items() if not k.startswith("QD_")}
    env.update(HOME=str(tmp_path), XDG_CACHE_HOME=str(tmp_path / "cache"), PYTHONPATH=str(ROOT))
    qd = [python, "-m", "quadrants_cli.main", "precompile", "-m", str(SCENES.parent / "qd-cuda.toml"), "--cache-dir",
          str(tmp_path / "qd-cache"), "--json"]  # fmt: skip

    def precompile(*args: str) -> tuple[int, dict]:
        run = subprocess.run([*qd, *args], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=1800)
        assert run.stdout.startswith("{"), run.stdout[-3000:] + run.stderr[-3000:]
        return run.returncode, json.loads(run.stdout)

    rc, report = precompile("--target", "cuda:sm_90")
    assert rc == 0 and report["failed"] == 0, [i["detail"] for i in report["items"] if i["status"] == "failed"][:3]
    assert report["compiled"] + report["cached"] == report["signatures"] > 100
    rc, check = precompile("--check", "--target", "cuda:sm_90")
    assert rc == 0 and check["cached"] == check["signatures"] == report["signatures"]
    rc, other = precompile("--check", "--target", "cuda:sm_80")
    assert rc == 1 and other["missing"] == other["signatures"] == report["signatures"]


EMULATED_STEPS = {"box": 60, "franka": 20}  # the box lands on the plane (contacts, the constraint solver) by step 45


# Each case runs the scene twice (CPU, emulated GPU: minutes on 2 cores); GENESIS_EMULATED=all adds Franka in the
# fields mode to the three `make genesis-test` runs.
EMULATED_CASES = [("box", "1"), ("box", "0"), ("franka", "1")] + (
    [("franka", "0")] if os.environ.get("GENESIS_EMULATED") == "all" else [])  # fmt: skip


@pytest.mark.parametrize(("scene", "ndarray_mode"), [
    pytest.param(s, m, id=f"{s}-{'ndarray' if m == '1' else 'fields'}") for s, m in EMULATED_CASES])  # fmt: skip
def test_genesis_on_the_emulated_cuda_backend_gives_the_cpu_results(tmp_path: Path, scene: str,
                                                                     ndarray_mode: str) -> None:  # fmt: skip
    """`gs.init(backend=gs.gpu)` on quadrants' CUDA emulator (examples/genesis/genesis_emulated_gpu.py) runs
    Genesis' CUDA code paths - the tiled solver kernels with `qd.simt` shared memory and barriers, the
    `qd.graph_do_while` solver loop, arguments through the device buffer - and must give the CPU backend's
    state (float32 tolerance), in both Genesis modes (GS_ENABLE_NDARRAY=1: ndarrays and fastcache; 0: fields)."""
    python = _python_or_skip()
    env = {k: v for k, v in os.environ.items() if not k.startswith("QD_")}
    env.update(HOME=str(tmp_path), XDG_CACHE_HOME=str(tmp_path / "cache"), PYTHONPATH=str(ROOT),
               GS_ENABLE_NDARRAY=ndarray_mode)  # fmt: skip
    # the emulated run also compiles every kernel through NVPTX for the fleet's GPUs and assembles it with ptxas
    ptx = {"gpu-emulated": {"QD_PTX_CHECK": "sm_80,sm_90,sm_120"}, "cpu": {}}
    runs = {
        backend: subprocess.Popen([python, str(SCENES), scene, "--steps", str(EMULATED_STEPS[scene]), "--backend",
                                   backend], cwd=tmp_path, env={**env, **ptx[backend]}, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True)  # fmt: skip
        for backend in ("cpu", "gpu-emulated")
    }
    states = {}
    for backend, proc in runs.items():
        out, err = proc.communicate(timeout=1500)
        assert proc.returncode == 0, err[-3000:]
        states[backend] = json.loads(out.strip().splitlines()[-1])
    q = states["gpu-emulated"]["quadrants"]
    assert q["ptx_checked"] == q["compiles"] > 0, q
    for name, cpu in states["cpu"].items():
        if name in ("times", "quadrants"):
            continue
        gpu = states["gpu-emulated"][name]
        for what in cpu:
            np.testing.assert_allclose(gpu[what], cpu[what], rtol=1e-4, atol=1e-5, err_msg=f"{scene} {name}.{what}")
