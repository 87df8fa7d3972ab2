"""How the `qd` commands show their results to people: every rich table, progress bar and colored line.

Consumes the data the library returns (quadrants.aot's reports, listings and explanations) and a rich
`Console`; produces text only. `--json` output does not come through here: each command dumps the data itself.
"""

from __future__ import annotations

import time
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

AUDIT_COLORS = {"violation": "red", "fallback": "yellow", "not_fastcache": "cyan", "warning": "yellow"}


# ---- qd precompile ----------------------------------------------------------------------------------------


class Progress:
    """A rich progress bar over the compile tasks (probes are instant and not shown). Where the output is not a
    terminal (CI logs, pipes) a bar shows nothing, so each finished task is one line instead: a long build step
    shows life."""

    def __init__(self, out: Console, enabled: bool) -> None:
        self.out, self.enabled = out, enabled
        self.bar: Any = None
        self.task: Any = None
        self.total = 0  # compile tasks planned; lines are printed for them when there is no bar
        self.done = 0

    def __enter__(self) -> Progress:
        return self

    def plan(self, n: int) -> None:
        if not self.enabled or n == 0:
            return
        if not self.out.is_terminal:
            self.total = n
            self.out.print(f"compiling {n} signature(s)", highlight=False)
            return
        from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn
        from rich.progress import Progress as Bar

        self.bar = Bar(TextColumn("compiling"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                       TextColumn("{task.description}"), console=self.out, transient=True)  # fmt: skip
        self.bar.start()
        self.task = self.bar.add_task("", total=n)

    def advance(self, item: Any) -> None:
        if self.bar is not None:  # only compile tasks report after plan()
            self.bar.update(self.task, advance=1, description=item.kernel)
        elif self.total:
            self.done += 1
            self.out.print(f"[{self.done}/{self.total}] {item.status} {item.kernel} (signature #{item.index + 1}, "
                           f"target {item.target}) {item.seconds:.2f} s", highlight=False, markup=False)  # fmt: skip

    def warmed(self, w: Any) -> None:
        """A [[warmup]] run finished: one line (it may take minutes; the bar has stopped by then)."""
        if self.enabled:
            self.stop()
            self.out.print(f"warm-up {w.status}: {w.command} (target {w.target}) {w.seconds:.1f} s, "
                           f"{w.compiles} compiled, {w.hits} loaded from the cache", highlight=False, markup=False)  # fmt: skip

    def stop(self) -> None:
        if self.bar is not None:
            self.bar.stop()
            self.bar = None

    def __exit__(self, *exc: object) -> None:
        self.stop()


def precompile_report(out: Console, report: Any) -> None:
    """quadrants.aot.precompile.Report: a table per target, then failures, notes and errors."""
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
        _failure(out, i, f"{i.kernel} (signature #{i.index + 1}, {i.where}, target {i.target})")
    for w in report.warmups:
        _failure(out, w, f"warm-up {escape(w.command)} ({w.where}, target {w.target})")
    if report.warmups:
        compiled = sum(w.compiles for w in report.warmups)
        out.print(f"{len(report.warmups)} warm-up run(s): {compiled} kernel(s) compiled, "
                  f"{sum(w.hits for w in report.warmups)} loaded from the cache, "
                  f"{sum(w.seconds for w in report.warmups):.1f} s", highlight=False)  # fmt: skip
    if report.not_fastcache:
        out.print("[yellow]listed but not fastcache=True[/yellow] (precompiled into the offline cache only; "
                  "the frontend still runs at start): " + ", ".join(report.not_fastcache))  # fmt: skip
    if report.not_in_manifest:
        out.print("[yellow]fastcache kernels not in the manifest[/yellow] (they compile at first call): "
                  + ", ".join(report.not_in_manifest))  # fmt: skip
    pulled = sum(1 for i in report.items if i.pulled)
    if report.shard or pulled or report.pushed:
        shard = f"shard {report.shard[0]}/{report.shard[1]} ({report.other_shards} signatures in other shards); " \
            if report.shard else ""
        out.print(f"{shard}remote cache: {pulled} pulled, {report.pushed} entries pushed", highlight=False)
    damaged = [i for i in report.items if i.damaged]
    if damaged:
        out.print(f"[yellow]rebuilt {len(damaged)} damaged[/yellow] signature(s) (their cache entries failed the "
                  "checksum and were replaced): " + ", ".join(f"{i.kernel} #{i.index + 1}" for i in damaged))  # fmt: skip
    for target, path in report.bundles.items():
        out.print(f"bundle for {target}: {path}", highlight=False)
    for note in report.notes:
        out.print(f"[yellow]note[/yellow]: {note}")
    for error in report.errors:
        out.print(f"[red]error[/red]: {error}")
    out.print(f"done in {report.seconds:.2f} s; the cache is {report.cache_dir} (start the program with "
              f"QD_CACHE_DIR={report.cache_dir})", highlight=False)  # fmt: skip


def _failure(out: Console, result: Any, what: str) -> None:
    """A signature or warm-up that failed (or with --check, missed): what it is, then its detail indented."""
    if result.status not in ("failed", "missing"):
        return
    out.print(f"[red]{'FAILED' if result.status == 'failed' else 'NOT CACHED'}[/red] {what}:")
    out.print("  " + result.detail.replace("\n", "\n  "), markup=False, highlight=False)


# ---- qd audit ---------------------------------------------------------------------------------------------


def audit_report(out: Console, report: Any) -> None:
    """quadrants.aot.audit.AuditReport: one line per finding, then the counts."""
    for f in report.findings:
        color = AUDIT_COLORS[f.kind]
        out.print(f"{escape(f.where)}: [{color}]{f.kind}[/{color}] {escape(f.kernel)}: {escape(f.message)}")
    counts = ", ".join(f"{report.count(k)} {k.replace('_', ' ')}" for k in ("violation", "fallback", "not_fastcache",
                                                                             "warning"))  # fmt: skip
    out.print(f"{len(report.kernels)} kernels in {len(report.modules)} module(s): {counts}")


# ---- qd record --------------------------------------------------------------------------------------------


def record_summary(out: Console, output: str, summary: Any, rc: int) -> None:
    """quadrants.aot.record's merge summary, and the program's exit status when it failed."""
    out.print(f"{len(summary.kernels)} kernel(s) called; {output}: {len(summary.added_kernels)} kernel(s) and "
              f"{summary.added_signatures} signature(s) added, {summary.known_signatures} already there", highlight=False)  # fmt: skip
    if summary.added_modules:
        out.print("modules added: " + ", ".join(summary.added_modules), highlight=False)
    if summary.cache_dir is not None:
        out.print(f"cache_dir = {summary.cache_dir!r} added (relative to {output}): qd precompile fills it", highlight=False)
    for command, kernels in summary.warmups.items():
        out.print(f"warm-up run = {command}: {len(kernels)} kernel(s) added whose arguments only the program "
                  "builds (qd precompile runs it; or give each a factory)" + (":" if kernels else ""),
                  highlight=False, markup=False)  # fmt: skip
        for k in kernels:
            out.print(f"  {k}: {summary.unspellable.get(k, '')}", highlight=False, markup=False)
    for msg in summary.skipped:
        out.print(f"[yellow]skipped[/yellow] {msg}", highlight=False)
    if summary.not_fastcache:
        out.print("[yellow]not fastcache=True[/yellow] (offline cache only; the frontend runs at start): "
                  + ", ".join(summary.not_fastcache))  # fmt: skip
    if rc != 0:
        out.print(f"[red]the program exited with status {rc}[/red] (what it called before is recorded)")


# ---- qd cache ---------------------------------------------------------------------------------------------


def size(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return str(n)


def ago(t: float) -> str:
    s = max(0.0, time.time() - t)
    for unit, secs in (("d", 86400), ("h", 3600), ("min", 60)):
        if s >= secs:
            return f"{s / secs:.0f} {unit} ago"
    return "just now"


def short_signature(sig: str) -> str:
    """`a.0=ndarray[f32, 1];a.1:value=...` -> `ndarray[f32, 1], ...` for a table cell."""
    if not sig:
        return ""
    parts = []
    for item in sig.split(";"):
        _, _, v = item.partition("=")
        parts.append(v.removeprefix("scalar:") if len(v) < 40 else v[:37] + "...")
    return ", ".join(parts)


def cache_listing(out: Console, root: str, rows: list[dict[str, Any]]) -> None:
    """`qd cache ls`: one table row per entry."""
    t = Table(title=f"{root}", title_justify="left")
    for col in ("kind", "kernel", "signature", "target", "size", "last used"):
        t.add_column(col, overflow="fold", justify="right" if col == "size" else "left")
    for r in rows:
        cells = (r["kind"], r["kernel"], short_signature(r["signature"]), r["target"], size(r["size"]),
                 ago(r["last_used"]))  # fmt: skip
        t.add_row(*(escape(c) for c in cells))
    out.print(t)


def cache_stats(out: Console, data: dict[str, Any]) -> None:
    """`qd cache stats`: entries and bytes per kind, and the recorded hits and misses."""
    out.print(f"{data['root']}: {data['entries']} entries, {size(data['bytes'])}")
    for kind, v in data["kinds"].items():
        out.print(f"  {kind:9} {v['entries']:6} entries  {size(v['bytes']):>10}")
    rec = {k: v for k, v in data["recorded"].items() if not k.startswith("remote_")}
    remote = {k[len("remote_"):]: v for k, v in data["recorded"].items() if k.startswith("remote_")}
    if rec:
        out.print(f"recorded by {rec.get('processes', 0)} process(es): "
                  + ", ".join(f"{k} {v}" for k, v in sorted(rec.items()) if k != "processes"))  # fmt: skip
    else:
        out.print("no hits or misses recorded yet")
    if remote:
        moved = f"{size(remote.pop('bytes_in', 0))} in, {size(remote.pop('bytes_out', 0))} out"
        out.print("remote cache: " + ", ".join(f"{k} {remote.get(k, 0)}" for k in
                                                ("hits", "misses", "pushes", "errors", "rejected")) + f"; {moved}")


def cache_export(out: Console, done: Any) -> None:
    """quadrants.aot.archive.Exported."""
    out.print(f"exported {done.entries} entries ({size(done.bytes)}) to {done.path}", highlight=False)
    for s in done.skipped:
        out.print(f"[yellow]left out[/yellow] {escape(s)}")


def cache_import(out: Console, done: Any) -> None:
    """quadrants.aot.archive.Imported."""
    out.print(f"imported {done.entries} entries ({size(done.bytes)}) into {done.root}; {done.present} were "
              "already there", highlight=False)  # fmt: skip


def cache_verify(out: Console, found: Any, repair: bool) -> None:
    """quadrants.aot.inventory.Verified: each damaged or dangling entry (its kernel and signature), the counts,
    and what --repair deleted."""
    for e in found.damaged:
        what = _entry_name(e) if e.kind != "bookkeeping" else "bookkeeping file"
        out.print(f"[red]damaged[/red] {e.kind} entry of {escape(what)}: {escape(e.problem or '')}\n  {escape(e.path)}")
    for e in found.dangling:
        out.print(f"[yellow]dangling[/yellow] {escape(_entry_name(e))}: its compiled code is gone")
    out.print(f"{found.checked} entries checked, {len(found.damaged)} damaged, {len(found.dangling)} dangling")
    if repair:
        kept = len(found.damaged) + len(found.dangling) - len(found.removed)
        out.print(f"repaired: {len(found.removed)} deleted" + (f", {kept} untrusted or undeletable left" if kept else "")
                  + "; the next run or `qd precompile` builds them again")  # fmt: skip
    elif found.damaged or found.dangling:
        out.print("`qd cache verify --repair` deletes them; then `qd precompile` builds them again")


def _entry_name(e: Any) -> str:
    """An inventory.EntryInfo as `app.k:add (ndarray[f32, 1], f32; target host)`, or what is known of it."""
    if not e.name:
        return "an unknown kernel (its metadata is unreadable and no entry points to it)"
    extra = "; ".join(x for x in (short_signature(e.signature), e.target and f"target {e.target}") if x)
    return f"{e.name} ({extra})" if extra else e.name


def explanation(out: Console, r: Any) -> None:
    """quadrants.aot.explain.Explanation: the key part by part; for a miss, the parts that differ."""
    from quadrants.aot.explain import diff_text

    state = "[green]cached[/green]" if r.found else f"[red]not cached[/red] ({escape(r.reason or '')})"
    out.print(f"[bold]{escape(r.kernel)}[/bold]: {state}")
    if r.key:
        out.print(f"  key {r.key}")
    if r.remote is not None:
        out.print("  the remote cache " + ("[green]has it[/green]" if r.remote else "[yellow]does not have it[/yellow]"))
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
