"""Test helpers: define kernels from source text (kept in linecache so the compiler can read it)."""

from __future__ import annotations

import itertools
import linecache
import textwrap
from typing import Any

import quadrants as qd

_counter = itertools.count()


def define(src: str, **names: Any) -> dict[str, Any]:
    """Execute `src` (dedented) as a module body and return its namespace. `qd` is predefined."""
    src = textwrap.dedent(src)
    filename = f"<qd-test-{next(_counter)}>"
    linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)
    ns: dict[str, Any] = {"qd": qd, "__name__": "qdtest", **names}
    exec(compile(src, filename, "exec"), ns)
    return ns
