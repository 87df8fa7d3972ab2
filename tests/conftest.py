"""Shared fixtures and options: every test starts from a fresh `qd.init` on the CPU.

Session-wide checks: every kernel the suite compiles is verified after every pass (`--no-verify-passes` turns
it off) and, where ptxas is installed, also compiled to PTX and assembled (`--no-ptx-check` turns it off).
`golden` compares text with tests/golden/ (`--update-golden` rewrites it). A test that starts a Python process
must be marked `slow` (the `slow_marker_guard` fixture fails it otherwise), so `-m "not slow"` leaves none.

Tests never touch the user's files: the controller points HOME and XDG_CACHE_HOME at a temporary folder before
anything starts (workers and every child process inherit it, also those whose environment drops the `QD_*`
variables); tests/test_isolation.py fails when a process of the suite writes into the real user cache.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from typing import Any

import pytest

import quadrants as qd


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--update-golden", action="store_true", help="rewrite tests/golden/* from current output")
    parser.addoption("--no-ptx-check", action="store_true", help="do not also compile every kernel to PTX")
    parser.addoption("--no-verify-passes", action="store_true",
                     help="do not verify the IR after every pass of every kernel")  # fmt: skip
    parser.addoption("--backend", default="cpu", choices=["cpu", "cuda-emulated"],
                     help="run kernels on the CPU backend, or through the CUDA backend emulated on the CPU")  # fmt: skip


BACKEND = {"name": "cpu"}


def backend_kwargs() -> dict[str, Any]:
    """qd.init arguments of the backend this session tests (`--backend`)."""
    if BACKEND["name"] == "cuda-emulated":
        return {"arch": qd.cuda, "cuda_emulate": True}
    return {"arch": qd.cpu}


def qd_init(**kwargs: Any) -> None:
    """`qd.init` on the session's backend (tests that need other options pass them)."""
    qd.init(**{**backend_kwargs(), **kwargs})


PTX_ARCHS = "sm_80,sm_90"
REAL_HOME = "QUADRANTS_TESTS_REAL_HOME"  # the user's HOME before the guard replaced it (not a QD_* variable: kept)
GUARD_HOME = "QUADRANTS_TESTS_GUARD_HOME"



def _guard_user_files() -> None:
    """HOME and XDG_CACHE_HOME of this session (and all its children): a fresh temporary folder, removed at
    the end (`pytest_sessionfinish`)."""
    if GUARD_HOME in os.environ:
        return  # a pytest run inside a test: already guarded
    real = os.path.expanduser("~")
    guard = tempfile.mkdtemp(prefix="qd-test-home-")
    os.environ[REAL_HOME], os.environ[GUARD_HOME] = real, guard
    os.environ["HOME"] = guard
    os.environ["XDG_CACHE_HOME"] = os.path.join(guard, ".cache")
    GUARDED.append(guard)


GUARDED: list[str] = []  # the guard folder this process made (the controller's)


def pytest_configure(config: pytest.Config) -> None:
    """Every kernel the suite compiles is also compiled for the GPU and assembled by ptxas (QD_PTX_CHECK), on
    every machine where ptxas is installed: a kernel the CUDA backend miscompiles fails its test. And every
    kernel's IR is verified after each pass (QD_VERIFY_PASSES, the `verify_passes` option), also in the
    processes the tests start."""
    from quadrants.codegen.nvptx import ptxas_path

    BACKEND["name"] = config.getoption("--backend")
    if hasattr(config, "workerinput"):
        return  # xdist workers inherit the environment set up by the controller
    _guard_user_files()
    if not config.getoption("--no-verify-passes"):
        os.environ.setdefault("QD_VERIFY_PASSES", "1")
    if not config.getoption("--no-ptx-check") and ptxas_path() is not None and "QD_PTX_CHECK" not in os.environ:
        os.environ["QD_PTX_CHECK"] = PTX_ARCHS
        os.environ["QD_TEST_PTX_DIR"] = tempfile.mkdtemp(prefix="qd-ptx-check-")


def pytest_sessionfinish(session: pytest.Session) -> None:
    for guard in GUARDED:
        shutil.rmtree(guard, ignore_errors=True)
    folder = os.environ.get("QD_TEST_PTX_DIR")
    if folder and os.path.isdir(folder):
        from quadrants._stats import STATS

        worker = getattr(session.config, "workerinput", {}).get("workerid", "main")
        with open(os.path.join(folder, f"{worker}.json"), "w") as f:
            json.dump({"ptx_checked": STATS.cache.get("ptx_checked", 0)}, f)


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    folder = os.environ.get("QD_TEST_PTX_DIR")
    if hasattr(config, "workerinput") or not folder or not os.path.isdir(folder):
        return
    totals = {"ptx_checked": 0}
    for name in os.listdir(folder):
        with open(os.path.join(folder, name)) as f:
            for k, v in json.load(f).items():
                totals[k] += v
    shutil.rmtree(folder, ignore_errors=True)
    terminalreporter.write_line(
        f"CUDA check: {totals['ptx_checked']} kernels compiled to PTX and assembled by ptxas for {PTX_ARCHS}"
    )


@pytest.fixture(scope="session")
def session_cache_dir(tmp_path_factory: pytest.TempPathFactory) -> str:
    """Tests never read or write the user's cache: one fresh cache directory per test session (per worker)."""
    return str(tmp_path_factory.mktemp("qd-cache"))


@pytest.fixture(autouse=True)
def fresh_runtime(session_cache_dir: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("QD_CACHE_DIR", session_cache_dir)
    qd_init(log_level="warn")


def kernel_ir(kernel):  # type: ignore[no-untyped-def]
    """The IR of a kernel's (only) specialization, compiled without caches so it is always available."""
    launcher = next(iter(kernel._launchers.values()))
    if launcher.compiled is None:
        raise AssertionError("compile with qd.init(offline_cache=False) to inspect the IR")
    return launcher.compiled.frontend.kernel


@pytest.fixture
def golden(request: pytest.FixtureRequest) -> Callable[[str, str], None]:
    """`golden(relpath, text)`: assert `text` equals tests/golden/<relpath>; a missing file fails.
    `--update-golden` writes the file instead."""
    from tests.golden_support import check_golden

    update = bool(request.config.getoption("--update-golden"))
    test_file = request.node.nodeid.split("::")[0]
    return lambda relpath, text: check_golden(relpath, text, update, test_file)


def _starts_python(args: Any) -> bool:
    argv = [args] if isinstance(args, (str, bytes, os.PathLike)) else list(args)
    exe = os.fsdecode(argv[0]).split(" ")[0] if argv else ""
    if exe == sys.executable or os.path.basename(exe).startswith("python"):
        return True
    in_venv = sys.prefix != sys.base_prefix  # then the interpreter's folder holds only Python scripts (qd, ...)
    return in_venv and os.path.dirname(os.path.abspath(exe)) == os.path.dirname(sys.executable)


@pytest.fixture(autouse=True)
def slow_marker_guard(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """A test not marked `slow` may not start a Python process (the interpreter or a script of its venv, such
    as `qd`): the marker is how `-m "not slow"` leaves out every cross-process test. Tools the compiler runs
    (ptxas, the linker) are allowed."""
    if request.node.get_closest_marker("slow") is not None:
        return
    execute_child = subprocess.Popen._execute_child  # type: ignore[attr-defined]

    def guarded(self: subprocess.Popen, args: Any, *rest: Any, **kwargs: Any) -> None:
        if _starts_python(args):
            raise AssertionError(f"{request.node.nodeid} starts a Python process: mark it @pytest.mark.slow")
        execute_child(self, args, *rest, **kwargs)

    monkeypatch.setattr(subprocess.Popen, "_execute_child", guarded)
