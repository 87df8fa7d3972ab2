"""`qd precompile`: fill the cache from the manifest. Printing only; the work is quadrants.aot.precompile."""

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
@click.option("--check", is_flag=True, help="compile nothing; exit 1 unless every signature is already cached")
def precompile(manifest_path: str | None, cache_dir: str | None, targets: tuple[str, ...], jobs: int | None,
               as_json: bool, check: bool) -> None:  # fmt: skip
    """Compile every kernel signature listed in the manifest into the cache, ahead of time.

    Exit status: 0 all done, 1 some signatures failed (or, with --check, are not cached), 2 usage or
    manifest error."""
    from quadrants.aot import precompile as pc
    from quadrants.aot.manifest import ManifestError
    from quadrants.aot.project import ProjectError

    out = console(as_json)
    default_log_level()
    try:
        m = pc.load_manifest(manifest_path, cache_dir, list(targets) or None)
        with _Progress(out, enabled=not as_json) as progress, stdout_to_stderr(as_json):
            report = pc.precompile(m, jobs=jobs, check=check, progress=progress.advance, planned=progress.plan)
    except (ManifestError, ProjectError) as e:
        fail_usage(str(e), as_json)
    except pc.CacheNotWritable as e:
        fail(str(e), as_json)
    if as_json:
        click.echo(json.dumps(report.to_json(), indent=2))
    else:
        _print_report(out, report)
    sys.exit(report.exit_code)


class _Progress:
    """A rich progress bar over the compile tasks (probes are instant and not shown)."""

    def __init__(self, out, enabled: bool) -> None:  # type: ignore[no-untyped-def]
        self.out, self.enabled = out, enabled
        self.bar = None
        self.task = None

    def __enter__(self) -> _Progress:
        return self

    def plan(self, n: int) -> None:
        if not self.enabled or n == 0:
            return
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        self.bar = Progress(TextColumn("compiling"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                            TextColumn("{task.description}"), console=self.out, transient=True)  # fmt: skip
        self.bar.start()
        self.task = self.bar.add_task("", total=n)

    def advance(self, item) -> None:  # type: ignore[no-untyped-def]
        if self.bar is not None:  # only compile tasks report after plan()
            self.bar.update(self.task, advance=1, description=item.kernel)

    def __exit__(self, *exc: object) -> None:
        if self.bar is not None:
            self.bar.stop()


def _print_report(out, report) -> None:  # type: ignore[no-untyped-def]
    from rich.table import Table

    title = "qd precompile --check" if report.check else "qd precompile"
    t = Table(title=f"{title}: {report.manifest} -> {report.cache_dir}", title_justify="left")
    for col in ("target", "kernels", "signatures", "compiled", "already cached", "failed" if not report.check else
                "not cached", "time"):  # fmt: skip
        t.add_column(col, justify="right" if col != "target" else "left")
    for target in report.targets:
        items = [i for i in report.items if i.target == target]
        bad = sum(1 for i in items if i.status in ("failed", "missing"))
        t.add_row(target, str(len({i.kernel for i in items})), str(len(items)),
                  str(sum(1 for i in items if i.status == "compiled")),
                  str(sum(1 for i in items if i.status == "cached")),
                  f"[red]{bad}[/red]" if bad else "0", f"{sum(i.seconds for i in items):.2f} s")  # fmt: skip
    out.print(t)
    for i in report.items:
        if i.status in ("failed", "missing"):
            word = "FAILED" if i.status == "failed" else "NOT CACHED"
            out.print(f"[red]{word}[/red] {i.kernel} (signature #{i.index + 1}, {i.where}, target {i.target}):")
            out.print("  " + i.detail.replace("\n", "\n  "), markup=False, highlight=False)
    if report.not_fastcache:
        out.print("[yellow]listed but not fastcache=True[/yellow] (precompiled into the offline cache only; "
                  "the frontend still runs at start): " + ", ".join(report.not_fastcache))  # fmt: skip
    if report.not_in_manifest:
        out.print("[yellow]fastcache kernels not in the manifest[/yellow] (they compile at first call): "
                  + ", ".join(report.not_in_manifest))  # fmt: skip
    for target, path in report.bundles.items():
        out.print(f"bundle for {target}: {path}", highlight=False)
    for note in report.notes:
        out.print(f"[yellow]note[/yellow]: {note}")
    for error in report.errors:
        out.print(f"[red]error[/red]: {error}")
    out.print(f"done in {report.seconds:.2f} s", highlight=False)
