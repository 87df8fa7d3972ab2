"""`qd audit`: which kernels are not fastcache-pure, without running the program. Parsing and printing only; the
work is quadrants.aot.audit, the lines cli/render.py."""

from __future__ import annotations

import json
import sys

import click

from quadrants_cli.common import console, default_log_level, fail_usage, stdout_to_stderr


@click.command("audit")
@click.argument("targets", nargs=-1)
@click.option("-m", "--manifest", "manifest_path", type=click.Path(dir_okay=False),
              help="read the modules (and signatures) from this manifest when no MODULES|PATHS are given")  # fmt: skip
@click.option("--strict", is_flag=True, help="exit 1 when anything is found")
@click.option("--json", "as_json", is_flag=True, help="print the findings as JSON")
def audit(targets: tuple[str, ...], manifest_path: str | None, strict: bool, as_json: bool) -> None:
    """Report kernels that are not fastcache-pure: not marked fastcache=True, reading globals, or falling back.

    TARGETS are module names, .py files or folders; without any, the manifest's modules."""
    from quadrants.aot import audit as audit_mod
    from quadrants.aot.manifest import ManifestError
    from quadrants.aot.project import ProjectError
    from quadrants_cli import render

    default_log_level()
    try:
        with stdout_to_stderr(as_json):
            try:
                report = audit_mod.audit_project(list(targets), manifest_path)
            except audit_mod.NothingToAudit as e:  # reported inside the redirection, as it always was
                fail_usage(str(e), as_json)
    except (ManifestError, ProjectError) as e:
        fail_usage(str(e), as_json)
    if as_json:
        click.echo(json.dumps(report.to_json(strict), indent=2))
    else:
        render.audit_report(console(), report)
    sys.exit(report.exit_code(strict))
