"""The `qd` command."""

from __future__ import annotations

from click.testing import CliRunner

import quadrants
from quadrants_cli.main import main


def test_version() -> None:
    result = CliRunner().invoke(main, ["--version"])
    assert result.exit_code == 0
    assert quadrants.__version__ in result.output


def test_version_names_the_distribution_pip_installs() -> None:
    from pathlib import Path

    try:
        import tomllib
    except ImportError:  # Python 3.10
        import tomli as tomllib  # type: ignore[no-redef]

    dist = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text())["project"]["name"]
    result = CliRunner().invoke(main, ["-V"])
    assert result.exit_code == 0 and f"({dist}, import quadrants)" in result.output


def _commands(group, prefix=()):  # type: ignore[no-untyped-def]
    import click

    for name, cmd in group.commands.items():
        yield (*prefix, name), cmd
        if isinstance(cmd, click.Group):
            yield from _commands(cmd, (*prefix, name))


def test_every_option_has_a_help_text() -> None:
    import click

    missing = [(" ".join(path), p.name) for path, cmd in _commands(main) for p in cmd.params
               if isinstance(p, click.Option) and not p.help]  # fmt: skip
    assert missing == []


def test_every_cache_command_that_reports_has_json() -> None:
    cache = main.commands["cache"]
    without = [n for n in ("ls", "stats", "verify", "gc", "clear", "export", "import", "explain")
               if "as_json" not in {p.name for p in cache.commands[n].params}]  # fmt: skip
    assert without == []


def test_gc_and_clear_as_json_then_stats_shows_zeros(tmp_path) -> None:  # type: ignore[no-untyped-def]
    import json

    import numpy as np

    import quadrants as qd
    from tests.conftest import qd_init

    qd_init(offline_cache_file_path=str(tmp_path), log_level="error")

    @qd.kernel(fastcache=True)
    def fill(x: qd.types.NDArray[qd.f32, 1]):
        for i in range(x.shape[0]):
            x[i] = 1.0

    fill(np.zeros(4, np.float32))
    from quadrants.aot.inventory import open_store
    from quadrants.cache.fastcache import record_counters

    record_counters(open_store(str(tmp_path)))  # what a process adds to stats.json at exit
    runner = CliRunner()
    before = json.loads(runner.invoke(main, ["cache", "stats", "--cache-dir", str(tmp_path), "--json"]).output)
    assert before["entries"] > 0 and before["recorded"], before
    gc = runner.invoke(main, ["cache", "gc", "--cache-dir", str(tmp_path), "--max-size", "1G", "--json"])
    assert gc.exit_code == 0 and json.loads(gc.output)["deleted"] == 0
    cleared = runner.invoke(main, ["cache", "clear", "--cache-dir", str(tmp_path), "--json"])
    assert cleared.exit_code == 0 and json.loads(cleared.output)["deleted"] == before["entries"]
    after = json.loads(runner.invoke(main, ["cache", "stats", "--cache-dir", str(tmp_path), "--json"]).output)
    assert after["entries"] == 0 and after["recorded"] == {}
