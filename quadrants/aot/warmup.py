"""`[[warmup]]` runs: kernels whose arguments only the program can build, cached by running the program once.

A signature in the manifest is a type per parameter, or an object `qd precompile` can rebuild (aot/objects.py). A
data_oriented solver that holds fields, a scene graph and the simulator that owns it is neither: its kernels'
compiled-in values (field shapes, the solver's settings, what `qd.static` picked) exist only once the program has
built it. `qd record` then writes the command it ran as a warm-up; `qd precompile` runs it against the cache with
the target's QD_* environment, so what it compiles is stored where a start finds it, and reads back what the run
did:

    precompile ─► `run` in the manifest's folder, env: QD_CACHE_DIR, QD_CPU_TARGET, ..., QD_RECORD, QD_STATS_FILE
       ├─ QD_STATS_FILE: qd.stats() at the child's exit ─► compiled (a miss stored) or cached (every kernel hit)
       └─ QD_RECORD: the kernels it called ─► a listed kernel it did not call is a failure (the program changed)

A warm-up executes the program, so it runs only for the host target (a named CPU's or a GPU's code could not run
here). With `--check` it runs too, and anything it compiles is a miss (exit 1); what it compiled is then stored,
as a run of the program would store it.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from typing import Any

from quadrants.aot.manifest import Manifest, WarmupEntry, relative_inside

TAIL = 3000  # characters of a failed run's output kept in the report
PYTHONS = ("python", "python3")  # a command's first word that means the interpreter running qd
_PYTHON = re.compile(r"python(\d+(\.\d+)?)?")  # an interpreter qd record saw (written as `python`)


@dataclass
class WarmupResult:
    command: str  # the command as written, for messages
    where: str  # manifest file:line
    target: str
    status: str = "pending"  # compiled | cached | failed | missing (--check)
    detail: str = ""
    seconds: float = 0.0
    compiles: int = 0  # what the run compiled (misses of every cache)
    hits: int = 0  # kernels it loaded from the cache (fastcache and offline)
    called: list[str] = field(default_factory=list)  # the kernels it called (module:qualname)
    not_called: list[str] = field(default_factory=list)  # listed kernels it did not call


def argv(entry: WarmupEntry) -> list[str]:
    """The command to start: `python` (or `python3`) first means this interpreter, the one whose environment has
    the project and this package installed."""
    run = list(entry.run)
    if run[0] in PYTHONS:
        run[0] = sys.executable
    return run


def run(m: Manifest, entry: WarmupEntry, target: str, env: dict[str, str], check: bool = False) -> WarmupResult:
    """Run one warm-up for `target` under `env` (the target's QD_* environment) and say what it compiled."""
    from quadrants.aot.record import read_records

    result = WarmupResult(" ".join(entry.run), m.where(entry.path), target)
    with tempfile.TemporaryDirectory(prefix="qd-warmup-") as tmp:
        stats_path, log = os.path.join(tmp, "stats.json"), os.path.join(tmp, "record.jsonl")
        child = {**os.environ, **env, **dict(entry.env), "QD_STATS_FILE": stats_path, "QD_RECORD": log}
        t0 = time.perf_counter()
        try:
            done = subprocess.run(argv(entry), cwd=m.root, env=child, stdin=subprocess.DEVNULL, capture_output=True,
                                  text=True, errors="replace", timeout=entry.timeout)  # fmt: skip
        except OSError as e:
            result.status, result.detail = "failed", f"cannot run {entry.run[0]!r}: {e.strerror or e}"
            return result
        except subprocess.TimeoutExpired:
            result.seconds = time.perf_counter() - t0
            result.status, result.detail = "failed", f"still running after {entry.timeout:g} s (timeout)"
            return result
        result.seconds = time.perf_counter() - t0
        stats = _read_json(stats_path)
        records = read_records(log)
    if done.returncode != 0 or stats is None:
        why = f"exited with {done.returncode}" if done.returncode != 0 else "wrote no statistics (did it import quadrants?)"
        result.status, result.detail = "failed", f"{why}:\n{_tail(done.stdout + done.stderr)}"
        return result
    cache = stats.get("cache", {})
    result.compiles = int(stats.get("compiles", 0))
    result.hits = int(cache.get("fastcache_hits", 0)) + int(cache.get("offline_hits", 0))
    result.called = sorted({r["kernel"] for r in records})
    result.not_called = [k for k in entry.kernels if k not in result.called]
    if result.not_called:
        result.status = "failed"
        result.detail = f"it did not call {', '.join(result.not_called)} (listed in the warm-up's kernels)"
    elif result.compiles and check:
        result.status, result.detail = "missing", f"the run compiled {result.compiles} kernel(s)"
    else:
        result.status = "compiled" if result.compiles else "cached"
    return result


def _read_json(path: str) -> dict[str, Any] | None:
    try:
        with open(path) as f:
            data = json.load(f)
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _tail(text: str) -> str:
    text = text.strip()
    return text if len(text) <= TAIL else "..." + text[-TAIL:]


# ---- qd record's side: the command it ran, as a manifest writes it ---------------------------------------------


def as_written(command: list[str], cwd: str, manifest_dir: str) -> list[str]:
    """`command` (run from `cwd`) as a warm-up's `run`, which starts in the manifest's folder: a Python interpreter
    first becomes `python` (qd's own at precompile time), and every argument naming an existing file or folder is
    a path relative to the manifest's folder when it lies inside it, else absolute."""
    out = []
    for i, arg in enumerate(command):
        if i == 0 and _is_python(arg):
            out.append("python")
            continue
        path = arg if os.path.isabs(arg) else os.path.join(cwd, arg)
        out.append(arg if arg.startswith("-") or not os.path.exists(path) else relative_inside(path, manifest_dir))
    return out


def _is_python(arg: str) -> bool:
    return _PYTHON.fullmatch(os.path.basename(arg)) is not None
