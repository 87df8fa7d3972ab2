"""`qd cache explain MODULE:KERNEL`: parse the arguments, print quadrants.aot.explain's answer (cli/render.py)."""

from __future__ import annotations

import dataclasses
import json
import sys

import click

from quadrants_cli.common import CACHE_DIR_HELP, console, fail_usage


@click.command("explain")
@click.argument("kernel")
@click.option("-m", "--manifest", "manifest_path", type=click.Path(dir_okay=False),
              help="qd.toml or pyproject.toml with the kernel's signatures (default: found from the current folder)")
@click.option("--signature", help='one signature as a TOML inline table, e.g. \'{ x = "ndarray[f32, 1]" }\'')
@click.option("--target", default=None, help="CPU target (default: the manifest's first, else host)")
@click.option("--cache-dir", type=click.Path(file_okay=False), help=CACHE_DIR_HELP)
@click.option("--json", "as_json", is_flag=True, help="print the explanation as JSON")
def explain(kernel: str, manifest_path: str | None, signature: str | None, target: str | None,
            cache_dir: str | None, as_json: bool) -> None:  # fmt: skip
    """Show KERNEL's (module:qualname) fastcache key part by part, and for a miss, what differs from the closest
    stored entry. Signatures come from --signature or the manifest."""
    from quadrants.aot.explain import explain_kernel
    from quadrants.aot.manifest import ManifestError
    from quadrants.aot.project import ProjectError
    from quadrants_cli import render

    try:
        results = explain_kernel(kernel, manifest_path, signature, target, cache_dir)
    except (ManifestError, ProjectError) as e:
        fail_usage(str(e), as_json)
    if as_json:
        click.echo(json.dumps([dataclasses.asdict(r) for r in results], indent=2))
    else:
        out = console()
        for r in results:
            render.explanation(out, r)
    sys.exit(0 if all(r.found for r in results) else 1)
