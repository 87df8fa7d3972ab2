"""`qd record -o qd.toml -- python app.py ...`: run a program, merge the signatures it called into the manifest."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile

import click

from quadrants_cli.common import console, fail, fail_usage


@click.command("record", context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False})
@click.option("-o", "--output", default="qd.toml", show_default=True, type=click.Path(dir_okay=False),
              help="the manifest to create or extend (qd.toml or pyproject.toml)")  # fmt: skip
@click.argument("command", nargs=-1, type=click.UNPROCESSED, required=True)
def record(output: str, command: tuple[str, ...]) -> None:
    """Run COMMAND and add every kernel signature it called to the manifest.

    Example: qd record -o qd.toml -- python app.py --steps 10"""
    from quadrants.aot.record import RecordError, merge, read_records

    if not command:
        fail_usage("give the command to run after --, e.g. qd record -- python app.py")
    folder = os.path.dirname(os.path.abspath(output))
    if not os.path.isdir(folder):
        fail_usage(f"-o {output}: the folder {folder} does not exist")
    fd, log = tempfile.mkstemp(prefix="qd-record-", suffix=".jsonl")
    os.close(fd)
    try:
        env = {**os.environ, "QD_RECORD": log}
        try:
            rc = subprocess.call(list(command), env=env)
        except OSError as e:
            fail_usage(f"cannot run {command[0]!r}: {e.strerror}")
        try:
            summary = merge(output, read_records(log))
        except RecordError as e:
            fail(str(e))
    finally:
        os.unlink(log)
    out = console()
    out.print(f"{len(summary.kernels)} kernel(s) called; {output}: {len(summary.added_kernels)} kernel(s) and "
              f"{summary.added_signatures} signature(s) added, {summary.known_signatures} already there", highlight=False)  # fmt: skip
    if summary.added_modules:
        out.print("modules added: " + ", ".join(summary.added_modules), highlight=False)
    for msg in summary.skipped:
        out.print(f"[yellow]skipped[/yellow] {msg}", highlight=False)
    if summary.not_fastcache:
        out.print("[yellow]not fastcache=True[/yellow] (offline cache only; the frontend runs at start): "
                  + ", ".join(summary.not_fastcache))  # fmt: skip
    if rc != 0:
        out.print(f"[red]the program exited with status {rc}[/red] (what it called before is recorded)")
    sys.exit(rc)
