"""The cloth example's CI workflow (examples/cloth/ci/github-actions.yml) run three times, its steps as the file
has them (tests/examples/gha.py), the kernel cache carried between runs as actions/cache carries it: a cold run
compiles and saves, a run of the same commit restores the exact key and compiles nothing, a run after one kernel
changed restores the previous entry through `restore-keys` and compiles that kernel only."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

pytest.importorskip("yaml")

from tests.examples.gha import REPO, CacheStore, StepResult, run_job  # noqa: E402

pytestmark = pytest.mark.slow  # an example's workflow, run end to end

WORKFLOW = REPO / "examples" / "cloth" / "ci" / "github-actions.yml"
EXAMPLE = "examples/cloth"
CHANGED = "cloth.kernels:kinetic_energy"


def _run_stats(step: StepResult) -> tuple[int, int, bool]:
    """(compiles, fastcache hits, llvmlite imported) from run.py's report."""
    m = re.search(r"\((\d+) compiles, (\d+) fastcache hits, llvmlite imported: (\w+)\)", step.stdout)
    assert m, step.stdout
    return int(m.group(1)), int(m.group(2)), m.group(3) == "True"


def _job(tmp_path: Path, name: str, store: CacheStore, src: Path = REPO) -> tuple[dict[str, StepResult], dict]:
    workspace = tmp_path / name / "workspace"
    steps = run_job(WORKFLOW, "test", workspace, store, (src, [EXAMPLE]))
    report = json.loads((workspace / EXAMPLE / "precompile-report.json").read_text())
    return {s.name: s for s in steps}, report


def test_the_warm_cache_workflow_across_three_runs(tmp_path: Path) -> None:
    store = CacheStore(tmp_path / "cache-service")
    store.root.mkdir()
    restore, warm, run = "Restore the kernel cache", "Warm the kernel cache", "Run"

    steps, report = _job(tmp_path, "cold", store)  # the first run: nothing to restore, everything compiles
    assert steps[restore].cache_hit is None
    assert report["compiled"] > 0 and report["failed"] == 0 and report["missing"] == 0, report
    kernels = report["kernels"]
    assert _run_stats(steps[run]) == (0, kernels, False)
    assert len(store.saved) == 1

    steps, report = _job(tmp_path, "same-commit", store)  # the exact key: nothing compiles, nothing saved
    assert steps[restore].cache_hit == "true"
    assert report["compiled"] == 0 and report["cached"] == report["signatures"], report
    assert _run_stats(steps[run]) == (0, kernels, False)
    assert len(store.saved) == 1

    changed = tmp_path / "changed-src"  # a commit that edits one kernel's source (the same arithmetic)
    shutil.copytree(REPO / EXAMPLE, changed / EXAMPLE, ignore=shutil.ignore_patterns(".qd-cache", "__pycache__"))
    kernels_py = changed / EXAMPLE / "cloth" / "kernels.py"
    text = kernels_py.read_text()
    assert text.count("e += 0.5 * mass * v[i, j].dot(v[i, j])") == 1
    kernels_py.write_text(
        text.replace("e += 0.5 * mass * v[i, j].dot(v[i, j])", "e += mass * 0.5 * v[i, j].dot(v[i, j])")
    )
    steps, report = _job(tmp_path, "one-kernel-changed", store, changed)
    assert steps[restore].cache_hit == "false"  # a restore-keys hit: the previous run's entry
    compiled = {item["kernel"] for item in report["items"] if item["status"] == "compiled"}
    assert compiled == {CHANGED}, compiled
    assert _run_stats(steps[run]) == (0, kernels, False)
    assert len(store.saved) == 2  # saved under the new key for the next run
