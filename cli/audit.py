"""`qd audit`: which kernels are not fastcache-pure, without running the program (quadrants.aot.audit)."""

from __future__ import annotations

import json
import os
import sys

import click

from quadrants_cli.common import console, fail_usage

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
    from quadrants.aot import manifest as manifest_mod
    from quadrants.aot import project
    from quadrants.aot.manifest import ManifestError

    os.environ.setdefault("QD_LOG_LEVEL", "warn")
    signatures: dict[str, list[list[object]]] = {}
    try:
        if targets:
            modules = project.import_paths_or_modules(list(targets))
        else:
            path = manifest_path or manifest_mod.find()
            if path is None:
                fail_usage("give modules or paths to audit, or run where a qd.toml (or pyproject.toml) is", as_json)
            m = manifest_mod.load(path)
            modules = project.import_modules(m)
            found = project.discover(modules)
            for entry in m.kernels:
                if entry.name in found:
                    signatures[entry.name] = [a for _, a in project.calls(m, entry, found[entry.name].kernel)]
    except (ManifestError, project.ProjectError) as e:
        fail_usage(str(e), as_json)
    report = audit_mod.audit(modules, signatures)
    if as_json:
        click.echo(json.dumps(report.to_json(strict), indent=2))
    else:
        _print(report)
    sys.exit(report.exit_code(strict))


def _print(report) -> None:  # type: ignore[no-untyped-def]
    from rich.markup import escape

    out = console()
    for f in report.findings:
        color = COLORS[f.kind]
        out.print(f"{escape(f.where)}: [{color}]{f.kind}[/{color}] {escape(f.kernel)}: {escape(f.message)}")
    counts = ", ".join(f"{report.count(k)} {k.replace('_', ' ')}" for k in ("violation", "fallback", "not_fastcache",
                                                                             "warning"))  # fmt: skip
    out.print(f"{len(report.kernels)} kernels in {len(report.modules)} module(s): {counts}")
