"""`open_project`: the manifest, target, cache root and environment every `qd` command starts from."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from quadrants.aot.manifest import ManifestError
from quadrants.aot.opened import NO_MANIFEST, open_project, running

MANIFEST = """modules = ["app"]
cache_dir = "build/cache"
targets = ["x86-64-v3", "host"]

[init]
default_fp = "f64"
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "qd.toml").write_text(MANIFEST)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("QD_LOG_LEVEL", raising=False)
    return tmp_path


def test_the_manifest_found_here_gives_target_cache_and_environment(project: Path) -> None:
    opened = open_project(None)
    assert opened.manifest is not None and opened.require_manifest() is opened.manifest
    assert opened.target == "x86-64-v3"  # the manifest's first
    assert opened.cache_dir == str(project / "build" / "cache")
    env = opened.environment
    assert env["QD_CACHE_DIR"] == opened.cache_dir and env["QD_CPU_TARGET"] == "x86-64-v3"
    assert env["QD_DEFAULT_FP"] == "f64" and env["QD_OFFLINE_CACHE_FALLBACK"] == "0" and env["QD_LOG_LEVEL"] == "warn"
    assert set(env["QD_SET_BY_QD"].split(",")) == set(env) - {"QD_SET_BY_QD"}


def test_overrides(project: Path) -> None:
    opened = open_project("qd.toml", cache_dir="elsewhere", targets=["cuda:sm_80,sm_90"])
    assert opened.cache_dir == os.path.abspath("elsewhere") == opened.environment["QD_CACHE_DIR"]
    assert opened.manifest is not None and opened.manifest.targets == ["cuda:sm_80", "cuda:sm_90"]
    assert opened.target == "cuda:sm_80" and opened.environment["QD_CPU_TARGET"] == "host"
    assert open_project(None, "host").environment["QD_CPU_TARGET"] == "host"
    with pytest.raises(ManifestError, match="--target"):
        open_project(None, targets=["cuda:sm_xx"])


def test_without_a_manifest(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("QD_CACHE_DIR", str(tmp_path / "user-cache"))
    monkeypatch.delenv("QD_OFFLINE_CACHE_FILE_PATH", raising=False)
    opened = open_project(None)
    assert opened.manifest is None and opened.target == "host" and opened.environment == {}
    assert opened.cache_dir == str(tmp_path / "user-cache")
    with pytest.raises(ManifestError, match="no manifest") as info:
        opened.require_manifest()
    assert info.value.message == NO_MANIFEST
    assert open_project(None, cache_dir="c").environment == {"QD_CACHE_DIR": os.path.abspath("c")}


def test_running_restores_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("QD_DEBUG", "0")
    monkeypatch.delenv("QD_OPT_LEVEL", raising=False)
    with running({"QD_DEBUG": "1", "QD_OPT_LEVEL": "0"}):
        assert os.environ["QD_DEBUG"] == "1" and os.environ["QD_OPT_LEVEL"] == "0"
    assert os.environ["QD_DEBUG"] == "0" and "QD_OPT_LEVEL" not in os.environ
