"""The `qd` commands of a fleet: `qd precompile --shard`, `qd cache export | import`, `qd cache stats`' remote
line. They run this checkout's `qd` (its cli/ folder as `quadrants_cli`), whatever is installed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cache.test_remote import APP

pytestmark = pytest.mark.slow  # every test runs `qd` in subprocesses

ROOT = Path(__file__).resolve().parents[2]


def qd(tmp_path: Path, *args: str, env: dict[str, str] | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess:
    link = tmp_path / "cli-of-this-checkout"
    if not link.exists():
        link.mkdir()
        (link / "quadrants_cli").symlink_to(ROOT / "cli")
    full = {k: v for k, v in os.environ.items() if not k.startswith("QD_")}
    full["PYTHONPATH"] = os.pathsep.join([str(link), str(ROOT), full.get("PYTHONPATH", "")])
    return subprocess.run([sys.executable, "-m", "quadrants_cli.main", *args], cwd=cwd or tmp_path,
                          env={**full, "QD_LOG_LEVEL": "warn", **(env or {})}, capture_output=True, text=True,
                          timeout=600)  # fmt: skip


def test_export_then_import(project, tmp_path: Path) -> None:
    project.write("app.py", APP)
    project.run()
    archive = tmp_path / "cache.tar"
    out = qd(tmp_path, "cache", "export", "--cache-dir", str(project.cache), "-o", str(archive), "--json")
    assert out.returncode == 0 and json.loads(out.stdout)["entries"] == 6, out.stderr
    target = tmp_path / "imported"
    got = qd(tmp_path, "cache", "import", str(archive), "--cache-dir", str(target), "--json")
    assert got.returncode == 0 and json.loads(got.stdout)["entries"] == 6, got.stderr
    text = qd(tmp_path, "cache", "import", str(archive), "--cache-dir", str(target))
    assert text.returncode == 0 and "6 were already there" in text.stdout
    cut = tmp_path / "cut.tar"
    cut.write_bytes(archive.read_bytes()[:4000])
    bad = qd(tmp_path, "cache", "import", str(cut), "--cache-dir", str(tmp_path / "other"))
    assert bad.returncode == 1 and "nothing was imported" in bad.stderr
    assert not list((tmp_path / "other").rglob("*.qd"))


def test_shard_usage_errors(tmp_path: Path) -> None:
    (tmp_path / "qd.toml").write_text('modules = ["m"]\n')
    for bad in ("0/3", "4/3", "two"):
        out = qd(tmp_path, "precompile", "--shard", bad)
        assert out.returncode == 2 and "expected K/N" in out.stderr, (bad, out.stderr)


def test_stats_show_the_remote_counters(project, remote_server, tmp_path: Path) -> None:
    project.write("app.py", APP)
    project.run(env=remote_server.env)
    fresh = tmp_path / "fresh"
    project.run(env={**remote_server.env, "QD_CACHE_DIR": str(fresh)})
    out = qd(tmp_path, "cache", "stats", "--cache-dir", str(fresh))
    assert out.returncode == 0 and "remote cache: hits 3, misses 0, pushes 0, errors 0" in out.stdout, out.stdout
    pushed = qd(tmp_path, "cache", "stats", "--cache-dir", str(project.cache))
    assert "remote cache: hits" in pushed.stdout and "pushes 0" not in pushed.stdout
