"""The `qd` command."""

from __future__ import annotations

from click.testing import CliRunner
from quadrants_cli.main import main

import quadrants


def test_version() -> None:
    result = CliRunner().invoke(main, ["--version"])
    assert result.exit_code == 0
    assert quadrants.__version__ in result.output
