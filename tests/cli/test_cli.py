"""The `qd` command."""

from __future__ import annotations

from click.testing import CliRunner

import quadrants
from quadrants_cli.main import main


def test_version() -> None:
    result = CliRunner().invoke(main, ["--version"])
    assert result.exit_code == 0
    assert quadrants.__version__ in result.output
