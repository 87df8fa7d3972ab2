"""`qd record -o qd.toml -- python app.py ...`: run a program, merge the signatures it called into the manifest.
The merge is quadrants.aot.record, the summary cli/render.py."""

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
    from quadrants._config import env_name
    from quadrants.aot.record import RecordError, merge, read_records
    from quadrants_cli import render

    if not command:
        fail_usage("give the command to run after --, e.g. qd record -- python app.py")
    folder = os.path.dirname(os.path.abspath(output))
    if not os.path.isdir(folder):
        fail_usage(f"-o {output}: the folder {folder} does not exist")
    fd, log = tempfile.mkstemp(prefix="qd-record-", suffix=".jsonl")
    os.close(fd)
    try:
        env = {**os.environ, env_name("record"): log}  # QD_RECORD: the program appends each new signature
        try:
            rc = subprocess.call(list(command), env=env)
        except OSError as e:
            fail_usage(f"cannot run {command[0]!r}: {e.strerror}")
        try:
            summary = merge(output, read_records(log), command=list(command), cwd=os.getcwd())
        except RecordError as e:
            fail(str(e))
    finally:
        os.unlink(log)
    render.record_summary(console(), output, summary, rc)
    sys.exit(rc)
