"""The small JSON files beside a cache's entries, read with their shape checked.

- `usage.json`: `{"bytes": int}`, the size bound's ledger (approximate; rebuilt by a scan when damaged).
- `targets.json`: `{"cpu": [str], "cuda": [str]}`, what `qd precompile` filled the cache for.
- `stats.json`: `{name: int}`, hit/miss counters that processes add at exit.

A file that is missing is empty; one that is not JSON or has another shape (`{"bytes": null}`, `{"cpu": 5}`) is
reported once with a warning and read as empty, and the next write replaces it: bookkeeping never stops a
process. `problems` lists what `qd cache verify` reports.
"""

from __future__ import annotations

import json
import os
import stat
from typing import Any

from quadrants import _logging
from quadrants.targets import KINDS

USAGE, TARGETS, STATS_FILE = "usage.json", "targets.json", "stats.json"
_WARNED: set[str] = set()


def _load(path: str) -> tuple[Any, str | None]:
    """(the parsed JSON or None, why it could not be read); a missing file is (None, None)."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags)  # never a symlink's target, never blocked on a FIFO
    except (FileNotFoundError, NotADirectoryError):  # missing (a file where a folder should be: the store says so)
        return None, None
    except OSError as e:
        return None, e.strerror or str(e)
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None, "not a regular file"
        raw = f.read(1 << 20)  # these files are tiny; a huge one is damage, not data
    try:
        return json.loads(raw), None
    except ValueError as e:
        return None, f"not JSON ({e})"


def _shape_problem(name: str, data: Any) -> str | None:
    if not isinstance(data, dict):
        return f"expected a JSON object, found {type(data).__name__}"
    if name == USAGE:
        b = data.get("bytes")
        return None if isinstance(b, int) and not isinstance(b, bool) and b >= 0 else f'"bytes" is {b!r}'
    if name == TARGETS:
        for k, v in data.items():
            if k not in KINDS or not isinstance(v, list) or not all(isinstance(x, str) for x in v):
                return f"{k!r} is {v!r}, expected a list of target names"
        return None
    for k, v in data.items():
        if not isinstance(v, int) or isinstance(v, bool) or v < 0:
            return f"counter {k!r} is {v!r}"
    return None


def problem(root: str, name: str) -> str | None:
    """Why `<root>/<name>` is damaged, or None (also when it is missing)."""
    data, why = _load(os.path.join(root, name))
    if why is not None:
        return why
    return None if data is None else _shape_problem(name, data)


def read(root: str, name: str) -> dict[str, Any]:
    """`<root>/<name>` when it has its shape, else {} (with one warning per file and process)."""
    path = os.path.join(root, name)
    data, why = _load(path)
    if data is None and why is None:
        return {}
    why = why or _shape_problem(name, data)
    if why is None:
        return data  # type: ignore[no-any-return]
    if path not in _WARNED:
        _WARNED.add(path)
        _logging.warn(f"the cache's {path} is damaged ({why}); it is rebuilt", tag="cache")
    return {}


def usage_bytes(root: str) -> int | None:
    """The ledger's byte count, or None when there is no usable ledger (then the caller scans)."""
    return read(root, USAGE).get("bytes")
