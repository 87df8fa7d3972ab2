"""`qd audit`: which kernels are not fastcache-pure, without running the program (quadrants.aot.audit)."""

from __future__ import annotations

import json
import os
import sys
from typing import Any

import click

from quadrants_cli.common import console, default_log_level, fail_usage, stdout_to_stderr

COLORS = {"violation": "red", "fallback": "yellow", "not_fastcache": "cyan", "warning": "yellow"}


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
    from quadrants.aot import project
    from quadrants.aot.manifest import ManifestError

    default_log_level()
    try:
        with stdout_to_stderr(as_json):
            modules, signatures = _import(targets, manifest_path, as_json)
    except (ManifestError, project.ProjectError) as e:
        fail_usage(str(e), as_json)
    with stdout_to_stderr(as_json):
        report = audit_mod.audit(modules, signatures)
    if as_json:
        click.echo(json.dumps(report.to_json(strict), indent=2))
    else:
        _print(report)
    sys.exit(report.exit_code(strict))


def _import(targets: tuple[str, ...], manifest_path: str | None,
            as_json: bool) -> tuple[list[Any], dict[str, list[list[Any]]]]:  # fmt: skip
    """The modules to audit, and the manifest's signatures of their kernels (to judge field parameters). Module
    names are found from the current folder too, as `python -m` would (the installed `qd` script does not put
    it on sys.path)."""
    from quadrants.aot import manifest as manifest_mod
    from quadrants.aot import project

    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    if targets:
        return project.import_paths_or_modules(list(targets)), {}
    path = manifest_path or manifest_mod.find()
    if path is None:
        fail_usage("give modules or paths to audit, or run where a qd.toml (or pyproject.toml) is", as_json)
    m = manifest_mod.load(path)
    modules = project.import_modules(m)
    found = project.discover(modules)
    signatures = {e.name: [a for _, a in project.calls(m, e, found[e.name].kernel)] for e in m.kernels if e.name in found}
    return modules, signatures


def _print(report) -> None:  # type: ignore[no-untyped-def]
    from rich.markup import escape

    out = console()
    for f in report.findings:
        color = COLORS[f.kind]
        out.print(f"{escape(f.where)}: [{color}]{f.kind}[/{color}] {escape(f.kernel)}: {escape(f.message)}")
    counts = ", ".join(f"{report.count(k)} {k.replace('_', ' ')}" for k in ("violation", "fallback", "not_fastcache",
                                                                             "warning"))  # fmt: skip
    out.print(f"{len(report.kernels)} kernels in {len(report.modules)} module(s): {counts}")
