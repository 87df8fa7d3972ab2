"""What the `qd` commands share: the console, option help, and how usage errors end (exit status 2)."""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import Iterator
from typing import NoReturn

from rich.console import Console

CACHE_DIR_HELP = "the cache directory (default: the manifest's cache_dir, else QD_CACHE_DIR, else the user cache)"


def console(quiet: bool = False) -> Console:
    """Where human-readable output goes: stdout, or stderr when stdout carries JSON."""
    wide = None if sys.stdout.isatty() else 160  # logs (CI, pipes): wide enough that tables do not fold names
    return Console(stderr=quiet, highlight=False, soft_wrap=True, width=wide, emoji=False)


@contextlib.contextmanager
def stdout_to_stderr(enabled: bool) -> Iterator[None]:
    """While the project runs (imports, factories, worker processes), its output goes to stderr, so that stdout
    carries the one JSON document of `--json` (file descriptor 1 itself is redirected: C code and children too)."""
    if not enabled:
        yield
        return
    sys.stdout.flush()
    saved = os.dup(1)
    os.dup2(2, 1)
    try:
        yield
    finally:
        sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)


def default_log_level() -> None:
    """The project runs quietly under `qd` (warnings and errors) unless the user set QD_LOG_LEVEL."""
    from quadrants._config import quiet_logging_under_qd

    quiet_logging_under_qd()


def fail_usage(message: str, as_json: bool = False) -> NoReturn:
    """A usage or manifest error: the message (file:line: what was expected) and exit status 2."""
    fail(message, as_json, 2)


def fail(message: str, as_json: bool = False, code: int = 1) -> NoReturn:
    """An error that stops the command: the message on stderr (or as JSON on stdout) and exit status `code`."""
    if as_json:
        print(json.dumps({"error": message, "exit_code": code}))
    else:
        from rich.markup import escape

        Console(stderr=True, highlight=False, soft_wrap=True, emoji=False).print(f"[red]error[/red]: {escape(message)}")
    sys.exit(code)
