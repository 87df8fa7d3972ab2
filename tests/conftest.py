"""Shared fixtures: every test starts from a fresh `qd.init` on the CPU."""

from __future__ import annotations

import pytest

import quadrants as qd


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--update-golden", action="store_true", help="rewrite tests/golden/* from current output")


@pytest.fixture(autouse=True)
def fresh_runtime() -> None:
    qd.init(arch=qd.cpu, log_level="warn")


@pytest.fixture
def update_golden(request: pytest.FixtureRequest) -> bool:
    return bool(request.config.getoption("--update-golden"))
