"""Shared fixtures: every test starts from a fresh `qd.init` on the CPU."""

from __future__ import annotations

import pytest

import quadrants as qd


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--update-golden", action="store_true", help="rewrite tests/golden/* from current output")


@pytest.fixture(scope="session")
def session_cache_dir(tmp_path_factory: pytest.TempPathFactory) -> str:
    """Tests never read or write the user's cache: one fresh cache directory per test session (per worker)."""
    return str(tmp_path_factory.mktemp("qd-cache"))


@pytest.fixture(autouse=True)
def fresh_runtime(session_cache_dir: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("QD_CACHE_DIR", session_cache_dir)
    qd.init(arch=qd.cpu, log_level="warn")


def kernel_ir(kernel):  # type: ignore[no-untyped-def]
    """The IR of a kernel's (only) specialization, compiled without caches so it is always available."""
    launcher = next(iter(kernel._launchers.values()))
    if launcher.compiled is None:
        raise AssertionError("compile with qd.init(offline_cache=False) to inspect the IR")
    return launcher.compiled.frontend.kernel


@pytest.fixture
def update_golden(request: pytest.FixtureRequest) -> bool:
    return bool(request.config.getoption("--update-golden"))
