"""`qd cache ...`: inspect and maintain a cache directory. Parsing and printing only; the work is
quadrants.aot.inventory (and quadrants.aot.explain), the tables cli/render.py."""

from __future__ import annotations

import dataclasses
import json
import os
import sys
from typing import Any

import click

from quadrants_cli.common import CACHE_DIR_HELP, console, fail, fail_usage
from quadrants_cli.explain import explain


def _store(cache_dir: str | None, as_json: bool = False, create: bool = False) -> Any:
    """The store of --cache-dir, else of the project's cache root (the manifest found here, else the config).
    A --cache-dir that does not exist is a usage error, except for `create` (import fills a new one)."""
    from quadrants.aot import inventory
    from quadrants.aot.manifest import ManifestError
    from quadrants.aot.opened import open_project

    if cache_dir is not None:
        if not create and not os.path.isdir(cache_dir):  # a typo must not look like an empty cache
            fail_usage(f"--cache-dir {cache_dir}: no such folder", as_json)
        return inventory.open_store(cache_dir)
    try:
        root = open_project(None).cache_dir
    except ManifestError as e:
        fail_usage(str(e), as_json)
    return inventory.open_store(root)


@click.group("cache")
def cache() -> None:
    """Inspect and maintain the kernel cache."""


@cache.command("ls")
@click.option("--cache-dir", type=click.Path(file_okay=False), help=CACHE_DIR_HELP)
@click.option("--json", "as_json", is_flag=True, help="print the entries as JSON")
def ls(cache_dir: str | None, as_json: bool) -> None:
    """List cached kernels: kernel, signature, target, size, last used."""
    from quadrants.aot import inventory
    from quadrants_cli import render

    store = _store(cache_dir, as_json)
    rows = inventory.listing(store).rows
    if as_json:
        click.echo(json.dumps({"root": store.root, "entries": rows}, indent=2))
        return
    render.cache_listing(console(), store.root, rows)


@cache.command("stats")
@click.option("--cache-dir", type=click.Path(file_okay=False), help=CACHE_DIR_HELP)
@click.option("--json", "as_json", is_flag=True, help="print the totals as JSON")
def stats(cache_dir: str | None, as_json: bool) -> None:
    """Entries and bytes per kind, and the hits and misses processes recorded."""
    from quadrants.aot import inventory
    from quadrants_cli import render

    data = inventory.totals(_store(cache_dir, as_json))
    if as_json:
        click.echo(json.dumps(data, indent=2))
        return
    render.cache_stats(console(), data)


@cache.command("verify")
@click.option("--cache-dir", type=click.Path(file_okay=False), help=CACHE_DIR_HELP)
@click.option("--repair", is_flag=True, help="delete the damaged and dangling entries (the next run or qd "
              "precompile builds them again)")  # fmt: skip
@click.option("--json", "as_json", is_flag=True, help="print the result as JSON")
def verify(cache_dir: str | None, repair: bool, as_json: bool) -> None:
    """Check every entry's checksum and trust, naming the kernel and signature of each damaged one; exit 1 if any
    is damaged (with --repair: if any could not be deleted)."""
    from quadrants.aot import inventory
    from quadrants_cli import render

    store = _store(cache_dir, as_json)
    found = inventory.verify(store)
    if repair:
        why = inventory.writable(store)
        if why is not None:
            fail(f"cannot repair the cache, it refuses changes: {why}", as_json)
        inventory.repair(store, found)
    left = [e for e in found.damaged if e.path not in found.removed]
    code = 1 if left else 0
    if as_json:
        click.echo(json.dumps({"checked": found.checked, "damaged": [
            {"path": e.path, "kind": e.kind, "kernel": e.name, "signature": e.signature, "target": e.target,
             "problem": e.problem} for e in found.damaged],
            "dangling": [f"{e.name or e.key[:12]}: its compiled code is gone" for e in found.dangling],
            "removed": found.removed, "exit_code": code}, indent=2))  # fmt: skip
    else:
        render.cache_verify(console(), found, repair)
    sys.exit(code)


@cache.command("gc")
@click.option("--cache-dir", type=click.Path(file_okay=False), help=CACHE_DIR_HELP)
@click.option("--max-size", required=True, help="keep at most this much (500M, 2G): least recently used goes first")
@click.option("--json", "as_json", is_flag=True, help="print what was deleted as JSON")
def gc(cache_dir: str | None, max_size: str, as_json: bool) -> None:
    """Delete least recently used entries until the cache fits in --max-size."""
    from quadrants.aot import inventory
    from quadrants_cli import render

    try:
        limit = inventory.parse_size(max_size)
    except ValueError as e:
        fail_usage(str(e), as_json)
    store = _store(cache_dir, as_json)
    why = inventory.writable(store)
    if why is not None:
        fail(f"cannot clean the cache, it refuses changes: {why}", as_json)
    deleted, left = inventory.gc(store, limit)
    if as_json:
        click.echo(json.dumps({"root": store.root, "deleted": deleted, "bytes_left": left}, indent=2))
        return
    console().print(f"deleted {deleted} entries; {render.size(left)} left")


@cache.command("clear")
@click.option("--cache-dir", type=click.Path(file_okay=False), help=CACHE_DIR_HELP)
@click.option("-y", "--yes", is_flag=True, help="do not ask")
@click.option("--json", "as_json", is_flag=True, help="print what was deleted as JSON (implies --yes)")
def clear(cache_dir: str | None, yes: bool, as_json: bool) -> None:
    """Delete every entry, and the hits and misses recorded (`qd cache stats` then shows zeros)."""
    from quadrants.aot import inventory

    store = _store(cache_dir, as_json)
    why = inventory.writable(store)
    if why is not None:
        fail(f"cannot clear the cache, it refuses changes: {why}", as_json)
    if not (yes or as_json) and not click.confirm(f"delete every entry in {store.root}?"):
        sys.exit(1)
    deleted = store.clear()
    if as_json:
        click.echo(json.dumps({"root": store.root, "deleted": deleted}, indent=2))
        return
    console().print(f"deleted {deleted} entries")


@cache.command("export")
@click.option("--cache-dir", type=click.Path(file_okay=False), help=CACHE_DIR_HELP)
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False), help="the archive to write")
@click.option("--json", "as_json", is_flag=True, help="print what was exported as JSON")
def export(cache_dir: str | None, output: str, as_json: bool) -> None:
    """Write every valid entry of the cache into one archive (for CI artifacts, a CI cache step, a Docker COPY)."""
    from quadrants.aot import archive
    from quadrants_cli import render

    try:
        done = archive.export_cache(_store(cache_dir, as_json), output)
    except OSError as e:
        fail(f"cannot write {output}: {e.strerror or e}", as_json)
    if as_json:
        click.echo(json.dumps(dataclasses.asdict(done), indent=2))
    else:
        render.cache_export(console(), done)


@cache.command("import")
@click.argument("archive_path", metavar="FILE", type=click.Path(dir_okay=False, exists=True))
@click.option("--cache-dir", type=click.Path(file_okay=False), help=CACHE_DIR_HELP)
@click.option("--json", "as_json", is_flag=True, help="print what was imported as JSON")
def import_(archive_path: str, cache_dir: str | None, as_json: bool) -> None:
    """Verify every entry of an archive made by `qd cache export`, then install them all (or none: exit 1)."""
    from quadrants.aot import archive
    from quadrants_cli import render

    try:
        done = archive.import_cache(archive_path, _store(cache_dir, as_json, create=True))
    except archive.ArchiveError as e:
        fail(str(e), as_json)
    if as_json:
        click.echo(json.dumps(dataclasses.asdict(done), indent=2))
    else:
        render.cache_import(console(), done)


cache.add_command(explain)
