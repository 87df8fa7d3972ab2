"""`qd cache explain MODULE:KERNEL`: gather the kernel and its signatures, print inventory.explain's answer."""

from __future__ import annotations

import dataclasses
import json
import os
import sys
from typing import Any

import click

from quadrants_cli.common import console, fail_usage


def run_explain(kernel_name: str, manifest_path: str | None, signature: str | None, target: str | None,
                cache_dir: str | None, as_json: bool) -> None:  # fmt: skip
    from quadrants._config import with_target
    from quadrants.aot import inventory, project
    from quadrants.aot import manifest as manifest_mod
    from quadrants.aot import precompile as pc
    from quadrants.aot.manifest import Manifest, ManifestError, Signature

    if ":" not in kernel_name:
        fail_usage(f"{kernel_name!r}: expected module:kernel (or module:Class.method)", as_json)
    try:
        path = manifest_path or manifest_mod.find()
        m = manifest_mod.load(path) if path else None
        target = target or (m.targets[0] if m else "host")
        env = project.environment(m, target) if m else {}
        if cache_dir:
            env["QD_CACHE_DIR"] = os.path.abspath(cache_dir)
        with pc.environment(env):
            from quadrants.driver import Driver
            from quadrants.lang import program

            if m is not None:
                project.import_modules(m)
            if os.getcwd() not in sys.path:
                sys.path.insert(0, os.getcwd())
            module = kernel_name.split(":")[0]
            found = project.discover(project.import_paths_or_modules([module]))
            if kernel_name not in found:
                fail_usage(f"no kernel {kernel_name!r}; kernels in {module}: {', '.join(found) or 'none'}", as_json)
            kernel = found[kernel_name].kernel
            calls: list[list[Any]]
            if signature is not None:
                pseudo = Manifest("--signature", [], [], None, ["host"], {}, [])
                calls = [project.example_args(pseudo, kernel, kernel.params, Signature(_parse_inline(signature), ()))]
            elif m is not None and m.kernel(kernel_name) is not None:
                calls = [a for _, a in project.calls(m, m.kernel(kernel_name), kernel)]  # type: ignore[arg-type]
            else:
                pseudo = Manifest("(annotations)", [], [], None, ["host"], {}, [])
                calls = [project.example_args(pseudo, kernel, kernel.params, Signature({}, ()))]
            config = program.get().config
            cache = Driver(with_target(config, target), load=False)
            results = [inventory.explain(kernel, args, cache) for args in calls]
    except (ManifestError, project.ProjectError) as e:
        fail_usage(str(e), as_json)
    if as_json:
        click.echo(json.dumps([dataclasses.asdict(r) for r in results], indent=2))
    else:
        for r in results:
            _print(r)
    sys.exit(0 if all(r.found for r in results) else 1)


def _parse_inline(text: str) -> dict[str, Any]:
    from quadrants.aot.manifest import Manifest, ManifestError, _param_value

    try:
        import tomllib
    except ImportError:  # Python 3.10
        import tomli as tomllib  # type: ignore[no-redef]
    try:
        table = tomllib.loads(f"s = {text}")["s"]
    except tomllib.TOMLDecodeError as e:
        raise ManifestError(f"--signature is not a TOML inline table ({e})", "--signature") from None
    if not isinstance(table, dict):
        raise ManifestError('--signature must be an inline table like { x = "ndarray[f32, 1]" }', "--signature")
    pseudo = Manifest("--signature", [], [], None, ["host"], {}, [])
    return {k: _param_value(pseudo, v, (k,)) for k, v in table.items()}


def _print(r: Any) -> None:
    from rich.markup import escape

    from quadrants.aot.inventory import diff_text

    out = console()
    state = "[green]cached[/green]" if r.found else f"[red]not cached[/red] ({escape(r.reason or '')})"
    out.print(f"[bold]{escape(r.kernel)}[/bold]: {state}")
    if r.key:
        out.print(f"  key {r.key}")
    for k, v in r.parts.items():
        shown = v if "\n" not in v and len(v) < 100 else f"{len(v.splitlines())} lines, {len(v)} chars"
        out.print(f"  {k:24} {escape(shown)}")
    if not r.found:
        if r.nearest is None:
            out.print("  no entry of this kernel is stored")
        else:
            out.print(f"  closest stored entry {r.nearest[:16]}... differs in: {', '.join(d[0] for d in r.differences)}")
            for part, old, new in r.differences:
                out.print(f"  [yellow]{escape(part)}[/yellow]:")
                if "\n" in old or "\n" in new:
                    for line in diff_text(old, new):
                        out.print("    " + escape(line))
                else:
                    out.print(f"    stored: {escape(old)}\n    now:    {escape(new)}")
