"""`qd cache ...`: inspect and maintain a cache directory (quadrants.aot.inventory does the work)."""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any

import click

from quadrants_cli.common import console, fail, fail_usage

CACHE_DIR_HELP = "the cache directory (default: the manifest's cache_dir, else QD_CACHE_DIR, else the user cache)"


def _store(cache_dir: str | None, as_json: bool = False) -> Any:
    from quadrants._config import load_config
    from quadrants.aot import inventory
    from quadrants.aot import manifest as manifest_mod
    from quadrants.aot.manifest import ManifestError

    if cache_dir is None:
        path = manifest_mod.find()
        if path is not None:
            try:
                m = manifest_mod.load(path)
            except ManifestError as e:
                fail_usage(str(e), as_json)
            if m.cache_dir:
                cache_dir = os.path.join(m.root, m.cache_dir)
    if cache_dir is None:
        from quadrants._config import cache_root

        cache_dir = cache_root(load_config({})[0])
    return inventory.open_store(cache_dir)


def _size(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return str(n)


def _ago(t: float) -> str:
    s = max(0.0, time.time() - t)
    for unit, secs in (("d", 86400), ("h", 3600), ("min", 60)):
        if s >= secs:
            return f"{s / secs:.0f} {unit} ago"
    return "just now"


@click.group("cache")
def cache() -> None:
    """Inspect and maintain the kernel cache."""


@cache.command("ls")
@click.option("--cache-dir", type=click.Path(file_okay=False), help=CACHE_DIR_HELP)
@click.option("--json", "as_json", is_flag=True)
def ls(cache_dir: str | None, as_json: bool) -> None:
    """List cached kernels: kernel, signature, target, size, last used."""
    from rich.table import Table

    from quadrants.aot import inventory

    store = _store(cache_dir, as_json)
    rows = inventory.listing(store).rows
    if as_json:
        click.echo(json.dumps({"root": store.root, "entries": rows}, indent=2))
        return
    t = Table(title=f"{store.root}", title_justify="left")
    for col in ("kind", "kernel", "signature", "target", "size", "last used"):
        t.add_column(col, overflow="fold", justify="right" if col == "size" else "left")
    from rich.markup import escape

    for r in rows:
        cells = (r["kind"], r["kernel"], _short_signature(r["signature"]), r["target"], _size(r["size"]),
                 _ago(r["last_used"]))  # fmt: skip
        t.add_row(*(escape(c) for c in cells))
    console().print(t)


def _short_signature(sig: str) -> str:
    """`a.0=ndarray[f32, 1];a.1:value=...` -> `ndarray[f32, 1], ...` for a table cell."""
    if not sig:
        return ""
    parts = []
    for item in sig.split(";"):
        _, _, v = item.partition("=")
        parts.append(v.removeprefix("scalar:") if len(v) < 40 else v[:37] + "...")
    return ", ".join(parts)


@cache.command("stats")
@click.option("--cache-dir", type=click.Path(file_okay=False), help=CACHE_DIR_HELP)
@click.option("--json", "as_json", is_flag=True)
def stats(cache_dir: str | None, as_json: bool) -> None:
    """Entries and bytes per kind, and the hits and misses processes recorded."""
    from quadrants.aot import inventory

    data = inventory.totals(_store(cache_dir, as_json))
    if as_json:
        click.echo(json.dumps(data, indent=2))
        return
    out = console()
    out.print(f"{data['root']}: {data['entries']} entries, {_size(data['bytes'])}")
    for kind, v in data["kinds"].items():
        out.print(f"  {kind:9} {v['entries']:6} entries  {_size(v['bytes']):>10}")
    rec = data["recorded"]
    if rec:
        out.print(f"recorded by {rec.get('processes', 0)} process(es): "
                  + ", ".join(f"{k} {v}" for k, v in sorted(rec.items()) if k != "processes"))  # fmt: skip
    else:
        out.print("no hits or misses recorded yet")


@cache.command("verify")
@click.option("--cache-dir", type=click.Path(file_okay=False), help=CACHE_DIR_HELP)
@click.option("--json", "as_json", is_flag=True)
def verify(cache_dir: str | None, as_json: bool) -> None:
    """Check every entry's checksum; exit 1 if any is damaged."""
    from quadrants.aot import inventory

    checked, damaged, dangling = inventory.verify(_store(cache_dir, as_json))
    code = 1 if damaged else 0
    if as_json:
        click.echo(json.dumps({"checked": checked, "damaged": [{"path": e.path, "problem": e.problem} for e in damaged],
                               "dangling": dangling, "exit_code": code}, indent=2))  # fmt: skip
    else:
        out = console()
        for e in damaged:
            out.print(f"[red]damaged[/red] {e.path}: {e.problem}")
        for d in dangling:
            out.print(f"[yellow]dangling[/yellow] {d}")
        out.print(f"{checked} entries checked, {len(damaged)} damaged, {len(dangling)} dangling")
    sys.exit(code)


@cache.command("gc")
@click.option("--cache-dir", type=click.Path(file_okay=False), help=CACHE_DIR_HELP)
@click.option("--max-size", required=True, help="keep at most this much (500M, 2G): least recently used goes first")
def gc(cache_dir: str | None, max_size: str) -> None:
    """Delete least recently used entries until the cache fits in --max-size."""
    from quadrants.aot import inventory

    try:
        limit = inventory.parse_size(max_size)
    except ValueError as e:
        fail_usage(str(e))
    store = _store(cache_dir)
    why = inventory.writable(store)
    if why is not None:
        fail(f"cannot clean the cache, it refuses changes: {why}")
    deleted, left = inventory.gc(store, limit)
    console().print(f"deleted {deleted} entries; {_size(left)} left")


@cache.command("clear")
@click.option("--cache-dir", type=click.Path(file_okay=False), help=CACHE_DIR_HELP)
@click.option("-y", "--yes", is_flag=True, help="do not ask")
def clear(cache_dir: str | None, yes: bool) -> None:
    """Delete every entry."""
    from quadrants.aot import inventory

    store = _store(cache_dir)
    why = inventory.writable(store)
    if why is not None:
        fail(f"cannot clear the cache, it refuses changes: {why}")
    if not yes and not click.confirm(f"delete every entry in {store.root}?"):
        sys.exit(1)
    console().print(f"deleted {store.clear()} entries")


@cache.command("explain")
@click.argument("kernel")
@click.option("-m", "--manifest", "manifest_path", type=click.Path(dir_okay=False))
@click.option("--signature", help='one signature as a TOML inline table, e.g. \'{ x = "ndarray[f32, 1]" }\'')
@click.option("--target", default=None, help="CPU target (default: the manifest's first, else host)")
@click.option("--cache-dir", type=click.Path(file_okay=False), help=CACHE_DIR_HELP)
@click.option("--json", "as_json", is_flag=True)
def explain(kernel: str, manifest_path: str | None, signature: str | None, target: str | None,
            cache_dir: str | None, as_json: bool) -> None:  # fmt: skip
    """Show KERNEL's (module:qualname) fastcache key part by part, and for a miss, what differs from the closest
    stored entry. Signatures come from --signature or the manifest."""
    from quadrants_cli.explain import run_explain

    run_explain(kernel, manifest_path, signature, target, cache_dir, as_json)
