"""The compiler digest in every cache key: an edited compiler makes other keys, an unchanged one the same, and a
start whose files stat the same reads the remembered digest instead of hashing the sources again."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import quadrants

pytestmark = pytest.mark.slow  # starts Python processes

PRINT = "import quadrants.cache.keys as k; print(k.compiler_digest())"


def _digest(root: Path) -> str:
    env = {**os.environ, "PYTHONPATH": str(root)}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    out = subprocess.run([sys.executable, "-c", PRINT], env=env, cwd=root, capture_output=True, text=True, check=True)
    return out.stdout.strip()


def test_the_digest_follows_the_compiler_source(tmp_path: Path) -> None:
    pkg = tmp_path / "quadrants"
    shutil.copytree(Path(quadrants.__file__).parent, pkg, ignore=shutil.ignore_patterns("__pycache__"))
    first = _digest(tmp_path)
    memo = pkg / "__pycache__" / "compiler-digest.txt"
    assert memo.read_text().split()[1] == first
    assert _digest(tmp_path) == first  # remembered
    lowering = pkg / "codegen" / "lower.py"
    lowering.write_text(lowering.read_text() + "\n# an edit\n")
    edited = _digest(tmp_path)
    assert edited != first and memo.read_text().split()[1] == edited
    memo.write_text(memo.read_text().split()[0] + " forged\n")  # a stale memo of other files is not trusted...
    os.utime(lowering, ns=(0, 0))  # ...once a file's stat changes
    assert _digest(tmp_path) == edited
    (pkg / "docs.txt").write_text("not compiler code")  # files outside the compiler's packages do not count
    assert _digest(tmp_path) == edited
