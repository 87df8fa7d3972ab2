"""Genesis' non-rigid solvers on this package: each scene of examples/genesis/solvers.py against real Quadrants 0.5.2.

Runs where GENESIS_PYTHON names a Python with Genesis beside this package (examples/genesis/README.md), skips
elsewhere. The reference summaries (`solvers_ref.json`) are what the same scenes give on real Quadrants 0.5.2
(`solvers.py --record` there); positions must agree to float32 tolerance. `QUICK` are the scenes
`make genesis-test` runs (a few minutes on two cores); `GENESIS_SOLVERS=all` runs every scene that has a reference.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
from pathlib import Path

import pytest

from tests.examples.test_genesis import ROOT, _python_or_skip

pytestmark = pytest.mark.slow  # starts Genesis in a process

SOLVERS = ROOT / "examples" / "genesis" / "solvers.py"
REFERENCE = json.loads((ROOT / "examples" / "genesis" / "solvers_ref.json").read_text())
QUICK = ("sf_smoke", "pbd_particles", "diff_push")
# Genesis' MPM-rigid coupler differentiates a `range()` loop of a func called inside a loop: real Quadrants 0.5.2
# takes it without the adstack (and gets a wrong gradient where the loop carries a value: ARCHITECTURE.md), 1.3.3
# and this package refuse it unless the adstack is on
ENV = {"diff_push": {"QD_AD_STACK_EXPERIMENTAL_ENABLED": "1"}}
# scenes that do not match 0.5.2 yet, with why: expected to fail (strict: a pass then says to remove the entry)
BLOCKED: dict[str, str] = {}


# GENESIS_SOLVERS_EMULATED=1 also runs each scene under gs.init(backend=gs.gpu) on the CUDA emulator (Genesis' CUDA
# code paths), every kernel also compiled for these GPUs and assembled by ptxas, against the same reference
BACKENDS = ["cpu"] + (["gpu-emulated"] if os.environ.get("GENESIS_SOLVERS_EMULATED") else [])
PTX_ARCHS = "sm_80,sm_90,sm_120"


# scenes whose CUDA run differs from the CPU reference, with why (strict: a pass then says to remove the entry)
DIFFERENT_ON_CUDA = {
    "tool": "the CUDA backend fuses a*b+c into FMAs, as NVPTX does for 0.5.2 on a GPU (the CPU backends do not); "
            "the tool's SDF normals are finite differences of rounding noise in its flat interior, so the block "
            "settles 2.7e-5 m higher, 1.7 % slower. With contraction off the emulated run matches the CPU "
            "reference to 1e-8 (2026-12-06)",
}


def _scenes_of_this_run() -> list[str]:
    return sorted(REFERENCE) if os.environ.get("GENESIS_SOLVERS") == "all" else [s for s in QUICK if s in REFERENCE]


def _scenes() -> list[object]:
    names = _scenes_of_this_run()

    def marks(scene: str, backend: str) -> list[object]:
        why = BLOCKED.get(scene) or (DIFFERENT_ON_CUDA.get(scene) if backend == "gpu-emulated" else None)
        return [pytest.mark.xfail(strict=True, reason=why)] if why else []

    return [pytest.param(s, b, id=s if b == "cpu" else f"{s}-{b}", marks=marks(s, b)) for s in names for b in BACKENDS]


def _leaves(x: object, at: str = "") -> dict[str, float]:
    if isinstance(x, dict):
        return {k: v for key, value in x.items() for k, v in _leaves(value, f"{at}.{key}").items()}
    if isinstance(x, list):
        return {k: v for i, value in enumerate(x) for k, v in _leaves(value, f"{at}[{i}]").items()}
    return {at: float(x)} if isinstance(x, (int, float)) else {}


@pytest.mark.parametrize(("scene", "backend"), _scenes())
def test_a_solver_scene_runs_and_matches_real_quadrants(scene: str, backend: str, tmp_path: Path) -> None:
    python = _python_or_skip()
    env = {**os.environ, "HOME": str(tmp_path), "XDG_CACHE_HOME": str(tmp_path / "cache"), "PYTHONPATH": str(ROOT),
           "QD_CACHE_DIR": str(tmp_path / "qd-cache"), **ENV.get(scene, {})}  # fmt: skip
    env.pop("QD_PTX_CHECK", None)
    if backend == "gpu-emulated":
        env["QD_PTX_CHECK"] = PTX_ARCHS
    ref = REFERENCE[scene]
    run = subprocess.run([python, str(SOLVERS), scene, "--steps", str(ref["steps"]), "--backend", backend],
                         cwd=tmp_path, env=env, capture_output=True, text=True, timeout=2400)  # fmt: skip
    assert run.returncode == 0, (run.stdout + run.stderr)[-3000:]
    line = [ln for ln in run.stdout.splitlines() if ln.startswith('{"scene"')][-1]
    result = json.loads(line)
    if backend == "gpu-emulated":  # every kernel it compiled also went through NVPTX and ptxas
        assert result["ptx_checked"] == result["compiles"] > 0, result
    _assert_matches(result, ref)


def _assert_matches(result: dict, ref: dict) -> None:
    """A run's state summary equals the reference's to float32 tolerance (or within twice its perturbed spread)."""
    ours, theirs = _leaves(result["state"]), _leaves(ref["state"])
    assert ours.keys() == theirs.keys()
    spread = _spread(ref)
    far = {k: (ours[k], v) for k, v in theirs.items()
           if not math.isclose(ours[k], v, rel_tol=1e-4, abs_tol=max(2e-5, 2 * spread.get(k, 0.0)))}  # fmt: skip
    assert not far, far


def _solver_manifest(folder: Path, scenes: list[str]) -> Path:
    """examples/genesis/qd-solvers.toml with only the warm-ups of `scenes`, written into `folder` beside the two
    files its warm-ups and modules need (a warm-up runs in its manifest's folder)."""
    import shutil

    import tomlkit

    doc = tomlkit.parse((SOLVERS.parent / "qd-solvers.toml").read_text())
    kept = tomlkit.aot()
    for w in doc["warmup"]:
        if w["run"][2] in scenes:
            kept.append(w)
    assert len(kept) == len(scenes), f"qd-solvers.toml lacks a warm-up of some of {scenes}: make genesis-record-solvers"
    doc["warmup"] = kept
    for name in ("solvers.py", "genesis_cpu.py"):
        shutil.copy(SOLVERS.parent / name, folder / name)
    (folder / "qd-solvers.toml").write_text(tomlkit.dumps(doc))
    return folder / "qd-solvers.toml"


def test_the_recorded_solver_manifest_precompiles_the_scenes_so_that_they_compile_nothing(tmp_path: Path) -> None:
    """Item 4 of Genesis on the CPU: `qd precompile` of qd-solvers.toml (qd record's output: the rigid kernels'
    signatures, and a [[warmup]] run per scene for the solvers' kernels) fills a fresh cache; each scene then
    starts, runs as many steps as its reference and matches 0.5.2 without compiling a kernel."""
    python = _python_or_skip()
    names = [s for s in _scenes_of_this_run() if s in REFERENCE]
    project = tmp_path / "project"
    project.mkdir()
    manifest = _solver_manifest(project, names)
    env = {**os.environ, "HOME": str(tmp_path), "XDG_CACHE_HOME": str(tmp_path / "cache"), "PYTHONPATH": str(ROOT)}
    env = {k: v for k, v in env.items() if not k.startswith("QD_")}
    cache = tmp_path / "qd-cache"
    pre = subprocess.run([python, "-m", "quadrants_cli.main", "precompile", "-m", str(manifest), "--cache-dir",
                          str(cache), "--json"], env=env, capture_output=True, text=True, timeout=3600)  # fmt: skip
    assert pre.returncode == 0, (pre.stdout + pre.stderr)[-4000:]
    report = json.loads(pre.stdout)
    assert [w["status"] for w in report["warmups"]] == ["compiled"] * len(names), report["warmups"]
    compiled = {}
    for scene in names:
        ref = REFERENCE[scene]
        run = subprocess.run([python, str(SOLVERS), scene, "--steps", str(ref["steps"])], cwd=tmp_path,
                             env={**env, "QD_CACHE_DIR": str(cache), **ENV.get(scene, {})}, capture_output=True,
                             text=True, timeout=1200)  # fmt: skip
        assert run.returncode == 0, (run.stdout + run.stderr)[-3000:]
        result = json.loads([ln for ln in run.stdout.splitlines() if ln.startswith('{"scene"')][-1])
        compiled[scene] = result["compiles"]
        _assert_matches(result, ref)
    assert compiled == dict.fromkeys(names, 0), compiled


def _spread(ref: dict) -> dict[str, float]:
    """How far 0.5.2's own summary moves when its bodies start a few ulps off (the reference's perturbed runs,
    `solvers.py --perturb`): a number that moves that much is not one a port can be held to more tightly."""
    base = _leaves(ref["state"])
    runs = [_leaves(p["state"]) for p in ref.get("perturbed", [])]
    return {k: max(abs(r[k] - v) for r in runs) for k, v in base.items()} if runs else {}


def test_the_spread_of_a_perturbed_reference_is_the_largest_deviation() -> None:
    ref = {"state": {"a": 1.0, "b": [2.0]}, "perturbed": [{"state": {"a": 1.5, "b": [2.0]}},
                                                          {"state": {"a": 0.8, "b": [1.9]}}]}  # fmt: skip
    spread = _spread(ref)
    assert spread[".a"] == 0.5 and math.isclose(spread[".b[0]"], 0.1)
    assert _spread({"state": {"a": 1.0}}) == {}
