"""Cross-process cache tests: each test writes a small project and runs it in fresh Python processes."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest


@dataclass
class Run:
    out: dict[str, Any]
    stderr: str
    stdout: str


class Project:
    def __init__(self, root: Path, cache: Path) -> None:
        self.root = root
        self.cache = cache

    def write(self, name: str, text: str) -> Path:
        path = self.root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
        return path

    def run(self, *args: str, script: str = "app.py", env: dict[str, str] | None = None, check: bool = True,
            cwd: Path | None = None) -> Run:  # fmt: skip
        """Run `script` (with `args`) in a fresh process; its last JSON line of output is `Run.out`."""
        full_env = {**os.environ, "QD_CACHE_DIR": str(self.cache), "QD_LOG_LEVEL": "warn", **(env or {})}
        full_env.pop("PYTHONDONTWRITEBYTECODE", None)
        proc = subprocess.run([sys.executable, script, *args], cwd=cwd or self.root, env=full_env,
                              capture_output=True, text=True, timeout=300)  # fmt: skip
        if check and proc.returncode != 0:
            raise AssertionError(f"{script} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
        lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
        return Run(json.loads(lines[-1]) if lines else {}, proc.stderr, proc.stdout)


@pytest.fixture
def project(tmp_path: Path) -> Project:
    (tmp_path / "proj").mkdir()
    return Project(tmp_path / "proj", tmp_path / "cache")


# The observations of every kernel called, printed as JSON by the child programs.
REPORT = '''
import json as _json

def report(**values):
    out = dict(values)
    for name, k in list(globals().items()):
        prim = getattr(k, "_primal", None)
        if prim is not None and getattr(prim, "src_ll_cache_observations", None) is not None:
            o = prim.src_ll_cache_observations
            out[name] = [o.cache_key_generated, o.cache_validated, o.cache_loaded, o.cache_stored]
    print(_json.dumps(out))
'''

STORED = [True, False, False, True]
LOADED = [True, True, True, False]


def make_read_only(path: Path) -> list[str] | None:
    """Make a folder tree refuse writes, also for root (immutable attribute). Returns the undo command, or None
    when this machine cannot (the test then skips)."""
    if os.geteuid() == 0:
        if shutil.which("chattr") is None:
            return None
        if subprocess.run(["chattr", "-R", "+i", str(path)], capture_output=True).returncode != 0:
            return None
        undo = ["chattr", "-R", "-i", str(path)]
    else:
        subprocess.run(["chmod", "-R", "a-w", str(path)], check=True)
        undo = ["chmod", "-R", "u+w", str(path)]
    try:
        (path / "probe").write_text("x")
    except OSError:
        return undo
    subprocess.run(undo)
    return None
