"""`qd precompile`: fill the cache from the manifest. Parsing and printing only; the work is
quadrants.aot.precompile, the tables cli/render.py."""

from __future__ import annotations

import json
import sys

import click

from quadrants_cli.common import console, default_log_level, fail, fail_usage, stdout_to_stderr


@click.command("precompile")
@click.option("-m", "--manifest", "manifest_path", type=click.Path(dir_okay=False), help="qd.toml or pyproject.toml "
              "(default: found from the current folder upwards)")  # fmt: skip
@click.option("--cache-dir", type=click.Path(file_okay=False), help="overrides the manifest's cache_dir")
@click.option("--target", "targets", multiple=True, help="overrides the manifest's targets (repeatable)")
@click.option("-j", "--jobs", type=click.IntRange(1), help="worker processes (default: one per core)")
@click.option("--json", "as_json", is_flag=True, help="print the report as JSON (for CI)")
@click.option("--check", is_flag=True, help="compile nothing; exit 1 unless every signature is already cached (the "
              "[[warmup]] runs do run, and fail the check if they compile)")  # fmt: skip
@click.option("--shard", "shard_text", metavar="K/N", help="only shard K of N of the signatures (stable; every "
              "signature in exactly one), pushed to the remote cache; no bundle is linked")  # fmt: skip
def precompile(manifest_path: str | None, cache_dir: str | None, targets: tuple[str, ...], jobs: int | None,
               as_json: bool, check: bool, shard_text: str | None) -> None:  # fmt: skip
    """Compile every kernel signature listed in the manifest into the cache, ahead of time.

    Exit status: 0 all done, 1 some signatures failed (or, with --check, are not cached), 2 usage or
    manifest error."""
    from quadrants.aot import precompile as pc
    from quadrants.aot.manifest import ManifestError
    from quadrants.aot.opened import open_project
    from quadrants.aot.project import ProjectError
    from quadrants_cli import render

    out = console(as_json)
    default_log_level()
    try:
        shard = pc.parse_shard(shard_text) if shard_text is not None else None
    except ValueError as e:
        fail_usage(str(e), as_json)
    try:
        opened = open_project(manifest_path, cache_dir=cache_dir, targets=list(targets) or None)
        with render.Progress(out, enabled=not as_json) as progress, stdout_to_stderr(as_json):
            report = pc.precompile(opened, jobs=jobs, check=check, progress=progress.advance, planned=progress.plan,
                                   shard=shard, warmed=progress.warmed)  # fmt: skip
    except (ManifestError, ProjectError) as e:
        fail_usage(str(e), as_json)
    except pc.BuildRefused as e:  # a cache folder that refuses writes, no linker
        fail(str(e), as_json)
    if as_json:
        click.echo(json.dumps(report.to_json(), indent=2))
    else:
        render.precompile_report(out, report)
    sys.exit(report.exit_code)
