"""The cloth example: its kernels against the numpy reference, `make run`'s demo, and the Dockerfile's two
stages emulated (no Docker engine here): precompile for x86-64-v3, then run elsewhere, read-only, as another
user, with no linker on PATH."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest

from quadrants.backends.host import host_runs
from tests.cache.conftest import make_read_only

pytestmark = pytest.mark.slow  # an example, run end to end

CLOTH = Path(__file__).resolve().parents[2] / "examples" / "cloth"


@pytest.mark.parametrize("init", ["arch=qd.cpu", "arch=qd.cuda, cuda_emulate=True"], ids=["cpu", "cuda-emulated"])
def test_kernels_match_the_numpy_reference(init: str) -> None:
    code = f"""
import sys, json
import numpy as np
sys.path.insert(0, {str(CLOTH)!r})
import quadrants as qd
qd.init({init}, offline_cache=False, log_level="warn")
from cloth.model import Cloth
from cloth import reference
c = Cloth(16)
x, v, rest = c.x.to_numpy(), c.v.to_numpy(), c.rest.to_numpy()
errs = []
for frame in range(30):
    c.step()
    for _ in range(c.substeps):
        reference.step(x, v, rest, c.params, np.asarray(c.sphere_center, np.float32), c.sphere_radius, c.pinned)
    errs.append(float(np.abs(c.x.to_numpy() - x).max()))
k, p = c.energy()
print(json.dumps({{"errs": errs, "lowest": float(x[..., 1].min()), "k": k, "top": float(x[..., 1].max())}}))
"""
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert max(out["errs"]) < 1e-4, out["errs"]
    assert out["lowest"] < 0.9  # it fell
    assert np.isfinite(out["k"])


def test_make_run_demo(tmp_path: Path) -> None:
    example = tmp_path / "cloth"
    shutil.copytree(CLOTH, example, ignore=shutil.ignore_patterns(".qd-cache", "__pycache__"))
    proc = subprocess.run([sys.executable, str(example / "demo.py")], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = {ln.split("  ")[0].strip(): ln.split() for ln in proc.stdout.splitlines() if "  " in ln}
    assert lines["kernels compiled"][-2:] == ["19", "0"], proc.stdout
    assert lines["llvmlite imported"][-2:] == ["True", "False"], proc.stdout
    assert "same result: True" in proc.stdout


def _dockerfile_stages() -> tuple[list[str], dict[str, str]]:
    """The `RUN qd ...` commands of the build stage, and the ENV of the runtime stage."""
    text = (CLOTH / "Dockerfile").read_text()
    build, runtime = text.split("FROM python:3.11-slim AS runtime")
    commands = [ln[len("RUN ") :] for ln in build.splitlines() if ln.startswith("RUN qd ")]
    env: dict[str, str] = {}
    for ln in runtime.splitlines():
        if ln.startswith("ENV "):
            for item in shlex.split(ln[4:]):
                k, _, v = item.partition("=")
                env[k] = v
    return commands, env


@pytest.mark.skipif(not host_runs("x86-64-v3"), reason="this CPU cannot run x86-64-v3 code")
def test_the_dockerfile_stages(tmp_path: Path, request: pytest.FixtureRequest) -> None:
    commands, runtime_env = _dockerfile_stages()
    assert any("--check" in c for c in commands) and any("--target x86-64-v3" in c for c in commands)
    build_app = tmp_path / "build" / "app"
    shutil.copytree(CLOTH, build_app, ignore=shutil.ignore_patterns(".qd-cache", "__pycache__"))
    bin_dir = Path(sys.executable).parent
    base_env = {k: v for k, v in os.environ.items() if not k.startswith("QD_")}
    base_env.pop("PYTHONDONTWRITEBYTECODE", None)
    for cmd in commands:
        argv = shlex.split(cmd)
        proc = subprocess.run([sys.executable, "-m", "quadrants_cli.main", *argv[1:]], cwd=build_app, env=base_env,
                              capture_output=True, text=True, timeout=600)  # fmt: skip
        assert proc.returncode == 0, (cmd, proc.stdout, proc.stderr)

    runtime_root = Path(tempfile.mkdtemp(prefix="qd-runtime-"))  # outside pytest's private folder: another user
    request.addfinalizer(lambda: shutil.rmtree(runtime_root, ignore_errors=True))
    runtime_app = runtime_root / "srv" / "app"  # another path than the build's
    shutil.copytree(build_app, runtime_app)
    for p in [runtime_root, *runtime_root.rglob("*")]:
        p.chmod(0o755 if p.is_dir() else 0o644)
    empty_path = runtime_root / "no-tools"
    empty_path.mkdir(mode=0o755)
    env = {**base_env, **runtime_env, "PATH": str(empty_path), "HOME": str(empty_path),
           "QD_CACHE_DIR": str(runtime_app / ".qd-cache"), "TMPDIR": str(empty_path)}  # fmt: skip
    assert runtime_env["QD_CACHE_DIR"] == "/app/.qd-cache"
    undo = make_read_only(runtime_app / ".qd-cache")
    prefix: list[str] = []
    if os.geteuid() == 0 and shutil.which("setpriv"):
        prefix = [shutil.which("setpriv") or "setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
        probe = subprocess.run([*prefix, str(bin_dir / "python"), "-c", "import quadrants"], env=env, cwd=runtime_app,
                               capture_output=True)  # fmt: skip
        if probe.returncode != 0:
            prefix = []  # this checkout is not readable by other users: run as ourselves (still read-only)
    try:
        proc = subprocess.run([*prefix, str(bin_dir / "python"), "run.py", "--json"], cwd=runtime_app, env=env,
                              capture_output=True, text=True, timeout=300)  # fmt: skip
    finally:
        if undo:
            subprocess.run(undo)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["compiles"] == 0 and out["fastcache_hits"] == 19 and not out["llvmlite_imported"], out
    assert proc.stderr == ""


def test_the_fleet_workflow_covers_every_shard_then_bundles() -> None:
    """ci/github-actions-fleet.yml: one precompile job per shard K/N of the same N, a bundle job after them that
    precompiles without --shard and exports, and the artifact job importing what was exported."""
    yaml = pytest.importorskip("yaml")
    jobs = yaml.safe_load((CLOTH / "ci" / "github-actions-fleet.yml").read_text())["jobs"]
    shards = jobs["precompile"]["strategy"]["matrix"]["shard"]
    (run,) = [s["run"] for s in jobs["precompile"]["steps"] if "--shard" in s.get("run", "")]
    n = int(run.split("matrix.shard }}/")[1].split()[0])
    assert shards == list(range(1, n + 1))
    bundle_runs = [s.get("run", "") for s in jobs["bundle"]["steps"]]
    assert jobs["bundle"]["needs"] == "precompile" and any(r.startswith("qd precompile --json") for r in bundle_runs)
    assert any("qd cache export" in r and "-o qd-cache.tar" in r for r in bundle_runs)
    imports = [s.get("run", "") for s in jobs["test-from-artifact"]["steps"]]
    assert any(r.startswith("qd cache import qd-cache.tar") for r in imports)
