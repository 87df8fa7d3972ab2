"""The fault suite: random damage to cache entries (results checked against a run with no cache), processes
killed with SIGKILL at random moments while they fill the cache (cold starts and `qd precompile`). Whatever
happens, the next process computes the right result and `qd cache verify` finds no damage it cannot explain.

(Other faults have their own files: full disks and read-only folders in tests/cli/test_precompile_faults.py,
threads in tests/runtime/test_threads.py, planted entries in test_trust.py, bookkeeping in test_bookkeeping.py.)
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from quadrants.aot.inventory import open_store, verify
from quadrants.cache import trust
from tests.cache.conftest import Project
from tests.cache.test_robustness import APP, assert_correct, entries
from tests.cache.test_robustness import warm as warm  # noqa: F401 - the fixture

pytestmark = pytest.mark.slow
SEED = int(os.environ.get("QD_FAULT_SEED", "20261130"))


def _damage(rng: random.Random, path: Path, others: list[Path]) -> str:
    data = bytearray(path.read_bytes())
    how = rng.choice(["flip", "truncate", "zero", "append", "swap", "empty"]) if data else "append"
    if how == "flip":
        for _ in range(rng.randint(1, 8)):
            data[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
    elif how == "truncate":
        del data[rng.randrange(len(data)) :]
    elif how == "zero":
        a = rng.randrange(len(data))
        data[a : a + rng.randint(1, 4096)] = bytes(min(len(data) - a, 4096))
    elif how == "append":
        data += os.urandom(rng.randint(1, 512))
    elif how == "swap":
        data = bytearray(rng.choice(others).read_bytes())
    else:
        data = bytearray()
    path.write_bytes(bytes(data))
    return how


def test_random_damage_never_changes_a_result(warm: Project) -> None:
    rng = random.Random(SEED)
    trials = int(os.environ.get("QD_FAULT_TRIALS", "30"))
    damaged_paths: set[str] = set()
    for trial in range(trials):
        files = entries(warm.cache)
        victims = rng.sample(files, k=min(len(files), rng.randint(1, 3)))
        damaged_paths |= {str(v) for v in victims}
        done = [f"{v.parent.parent.name}:{_damage(rng, v, files)}" for v in victims]
        scale = rng.choice([3, 4])
        run = warm.run(str(scale), check=False)
        assert run.stderr.count("Traceback") == 0, (trial, done, run.stderr)
        assert_correct(run, scale)
        again = warm.run(str(scale))
        assert_correct(again, scale)
    trust.forget()
    damaged = verify(open_store(str(warm.cache))).damaged
    # entries no run needed (a kernel served by the bundle) stay damaged until read; verify names only those
    assert {d.path for d in damaged} <= damaged_paths


def _kill_at_random(cmd: list[str], cwd: Path, env: dict[str, str], rng: random.Random, times: int) -> int:
    killed = 0
    for _ in range(times):
        proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(rng.uniform(0.05, 0.8))
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
            killed += 1
        proc.wait()
    return killed


def test_cold_starts_killed_at_random_leave_a_usable_cache(project: Project) -> None:
    project.write("app.py", APP)
    rng = random.Random(SEED + 1)
    env = {**os.environ, "QD_CACHE_DIR": str(project.cache), "QD_LOG_LEVEL": "warn"}
    killed = 0
    for scale in range(10, 19):  # a new template value each time: every start compiles and writes
        killed += _kill_at_random([sys.executable, "app.py", str(scale)], project.root, env, rng, 1)
    assert killed > 0
    for scale in range(10, 19):
        run = project.run(str(scale))
        assert_correct(run, scale)
        assert "Traceback" not in run.stderr
    trust.forget()
    damaged = verify(open_store(str(project.cache))).damaged
    assert damaged == []


MANIFEST = """
modules = ["app"]
cache_dir = "cache"

[[kernel]]
name = "app:k_scale"
signatures = [{ s = 1 }, { s = 2 }, { s = 3 }, { s = 4 }, { s = 5 }, { s = 6 }]

[[kernel]]
name = "app:k_add"

[[kernel]]
name = "app:k_sq"
"""


def test_precompile_killed_at_random_then_run_again_completes(project: Project) -> None:
    project.write("app.py", APP.split("x = np.arange")[0])  # the kernels, without the calls
    project.write("qd.toml", MANIFEST)
    rng = random.Random(SEED + 2)
    env = {k: v for k, v in os.environ.items() if not k.startswith("QD_")}
    cmd = [sys.executable, "-m", "quadrants_cli.main", "precompile", "-j", "2"]
    _kill_at_random(cmd, project.root, env, rng, 4)
    done = subprocess.run(cmd + ["--json"], cwd=project.root, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    check = subprocess.run(cmd + ["--check"], cwd=project.root, env=env, capture_output=True, text=True, timeout=600)
    assert check.returncode == 0, check.stdout
    trust.forget()
    damaged = verify(open_store(str(project.root / "cache"))).damaged
    assert damaged == []
