"""`qd precompile` never reports a false success: it writes the cache it was given or exits 1 naming why (a
read-only folder, a file in the way, a name too long, a full disk), `--check` looks only there, the native
runtime is never garbage-collected and is rebuilt when missing, and `qd cache gc`/`clear` refuse read-only caches."""

from __future__ import annotations

import os
import shutil
import subprocess
import uuid
from pathlib import Path

import pytest

from quadrants.cache.keys import FORMAT
from tests.cache.conftest import make_read_only
from tests.cli.test_precompile import SIGNATURES, Proj, check_results
from tests.cli.test_precompile import proj as proj  # noqa: F401 - the fixture

pytestmark = pytest.mark.slow


def _precompile_into(proj: Proj, cache: Path, tmp: Path, *args: str) -> tuple[int, dict]:
    return proj.precompile("--cache-dir", str(cache), *args, env={"TMPDIR": str(tmp)})


@pytest.fixture
def tmp(tmp_path: Path) -> Path:
    t = tmp_path / "tmp"
    t.mkdir()
    return t


def test_a_read_only_cache_folder_fails_and_nothing_goes_elsewhere(proj: Proj, tmp_path: Path, tmp: Path) -> None:
    cache = tmp_path / "ro-cache"
    cache.mkdir()
    undo = make_read_only(cache)
    if undo is None:
        pytest.skip("cannot make a read-only folder on this machine")
    try:
        rc, report = _precompile_into(proj, cache, tmp)
        assert rc == 1 and "cannot write the cache folder" in report["error"] and str(cache) in report["error"]
        rc, check = _precompile_into(proj, cache, tmp, "--check")
        assert rc == 1 and check["missing"] == SIGNATURES
    finally:
        subprocess.run(undo)
    assert not list(tmp.rglob("*.qd")), "entries were redirected to the temp folder"


@pytest.mark.parametrize("how", ["a file in the way", "a name too long"])
def test_an_impossible_cache_path_fails(proj: Proj, tmp_path: Path, tmp: Path, how: str) -> None:
    if how == "a file in the way":
        (tmp_path / "blocker").write_text("x")
        cache, words = tmp_path / "blocker" / "cache", "Not a directory"
    else:
        cache, words = tmp_path / ("c" * 300), "File name too long"
    rc, report = _precompile_into(proj, cache, tmp)
    assert rc == 1 and words in report["error"]
    human = proj.qd("precompile", "--cache-dir", str(cache), env={"TMPDIR": str(tmp)})
    assert human.returncode == 1 and words in human.stderr and "Traceback" not in human.stderr
    assert not list(tmp.rglob("*.qd"))


@pytest.mark.parametrize("size", ["48k", "160k"])  # too small for the kernels; room for all but the bundle
def test_a_full_disk_fails_naming_the_cause(proj: Proj, tmp_path: Path, tmp: Path, size: str) -> None:
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("mounting a small tmpfs as a full disk needs root")
    disk = tmp_path / f"disk-{uuid.uuid4().hex[:6]}"
    disk.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(disk)]).returncode != 0:
        pytest.skip("cannot mount a tmpfs here")
    try:
        rc, report = _precompile_into(proj, disk / "cache", tmp, "-j", "1")
        failed = [i for i in report.get("items", []) if i["status"] == "failed"]
        causes = " ".join([report.get("error", ""), *report.get("errors", []), *(i["detail"] for i in failed)])
        assert rc == 1 and "No space left on device" in causes, report
        rc, check = _precompile_into(proj, disk / "cache", tmp, "--check")
        assert bool(failed) == (size == "48k")
        if failed:  # --check passes only when every signature would hit from this folder
            assert rc == 1 and check["missing"] >= len(failed)
        else:
            assert report["errors"] and "bundle" in report["errors"][0] and rc == 0
    finally:
        subprocess.run(["umount", "-l", str(disk)])
    assert not list(tmp.rglob("*.qd"))


def _runtime_entries(proj: Proj) -> list[Path]:
    return list((proj.root / "build" / "cache" / f"v{FORMAT}" / "runtime").rglob("*.qd"))


def test_gc_keeps_the_runtime_and_a_missing_runtime_is_rebuilt(proj: Proj) -> None:
    assert proj.precompile()[0] == 0
    runtime = _runtime_entries(proj)
    assert runtime
    gc = proj.qd("cache", "gc", "--max-size", "1", "--cache-dir", "build/cache")
    assert gc.returncode == 0 and _runtime_entries(proj) == runtime
    rc, report = proj.precompile()  # everything else is compiled again
    assert rc == 0 and report["compiled"] == SIGNATURES
    for p in runtime:
        p.unlink()
    rc, check = proj.precompile("--check")
    assert rc == 1 and any("native runtime library is not cached" in e for e in check["errors"])
    rc, again = proj.precompile()
    assert rc == 0 and again["cached"] == SIGNATURES and _runtime_entries(proj)
    out = proj.main()
    check_results(out)
    assert out["stats"]["compiles"] == 0 and not out["llvmlite"]


@pytest.mark.parametrize("command", [("gc", "--max-size", "1"), ("clear", "-y")])
def test_gc_and_clear_on_a_read_only_cache_say_so(proj: Proj, command: tuple[str, ...]) -> None:
    assert proj.precompile()[0] == 0
    cache = proj.root / "build" / "cache"
    before = sorted(cache.rglob("*.qd"))
    undo = make_read_only(cache)
    if undo is None:
        pytest.skip("cannot make a read-only folder on this machine")
    try:
        proc = proj.qd("cache", *command, "--cache-dir", str(cache))
    finally:
        subprocess.run(undo)
    assert proc.returncode == 1 and "refuses changes" in proc.stderr and "Traceback" not in proc.stderr
    assert sorted(cache.rglob("*.qd")) == before


def test_gc_with_an_impossible_size_is_a_usage_error(proj: Proj) -> None:
    for size in ("1e999", "-5M", "nan"):
        proc = proj.qd("cache", "gc", "--max-size", size, "--cache-dir", "build/cache")
        assert proc.returncode == 2 and "not a size" in proc.stderr and "Traceback" not in proc.stderr


# ---- a killed precompile leaves nothing running ------------------------------------------------------------

SLOW_FACTORY = '''
import multiprocessing
import time

import numpy as np


def arrays():
    if multiprocessing.current_process().name != "MainProcess":
        time.sleep(60)  # in a worker: still busy when the parent is killed
    return np.zeros(4, np.float32)
'''

SLOW_KERNELS = '''
import quadrants as qd


@qd.kernel(fastcache=True)
def inc(x: qd.types.NDArray[qd.f32, 1], k: qd.template()):
    for i in range(x.shape[0]):
        x[i] += k
'''

SLOW_MANIFEST = """
modules = ["slow.kernels"]
cache_dir = "cache"

[[kernel]]
name = "slow.kernels:inc"
signatures = [{ x = { factory = "slow.factories:arrays" }, k = 1 }, { x = { factory = "slow.factories:arrays" }, k = 2 }]
"""


def _children(pid: int) -> list[int]:
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    if int(f.read().rsplit(")", 1)[1].split()[1]) == pid:
                        out.append(int(entry))
            except (OSError, ValueError, IndexError):
                pass
    return out


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.skipif(not os.path.isdir("/proc"), reason="finds the workers through /proc")
def test_killing_precompile_kills_its_workers(tmp_path: Path) -> None:
    import signal
    import sys
    import time

    root = tmp_path / "slowproj"
    (root / "slow").mkdir(parents=True)
    (root / "slow" / "__init__.py").write_text("")
    (root / "slow" / "kernels.py").write_text(SLOW_KERNELS)
    (root / "slow" / "factories.py").write_text(SLOW_FACTORY)
    (root / "qd.toml").write_text(SLOW_MANIFEST)
    env = {k: v for k, v in os.environ.items() if not k.startswith("QD_")}
    proc = subprocess.Popen([sys.executable, "-m", "quadrants_cli.main", "precompile", "-j", "2"], cwd=root, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    workers: list[int] = []
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and len(workers) < 2:
        time.sleep(0.2)
        workers = [p for p in _children(proc.pid) if "spawn" in open(f"/proc/{p}/cmdline").read()]
    assert len(workers) >= 2, "the workers did not start"
    time.sleep(3)  # they import the project and sit in the slow factory
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and any(_alive(p) for p in workers):
        time.sleep(0.2)
    left = [p for p in workers if _alive(p)]
    for p in left:
        os.kill(p, signal.SIGKILL)
    assert left == []
