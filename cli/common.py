"""What the `qd` commands share: the console, and how usage errors end (exit status 2)."""

from __future__ import annotations

import json
import sys
from typing import NoReturn

from rich.console import Console


def console(quiet: bool = False) -> Console:
    """Where human-readable output goes: stdout, or stderr when stdout carries JSON."""
    wide = None if sys.stdout.isatty() else 160  # logs (CI, pipes): wide enough that tables do not fold names
    return Console(stderr=quiet, highlight=False, soft_wrap=True, width=wide, emoji=False)


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
