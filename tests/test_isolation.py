"""The suite never writes into the user's files: every process it starts runs with HOME and XDG_CACHE_HOME in a
temporary folder (tests/conftest.py), also those whose environment drops the `QD_*` variables, as the CLI tests'
helpers do (so QD_CACHE_DIR is gone and the default cache is used)."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from quadrants.aot import inventory
from tests.conftest import GUARD_HOME, REAL_HOME

pytestmark = pytest.mark.slow  # starts a Python process

SCRIPT = """
import numpy as np
import quadrants as qd

qd.init(arch=qd.cpu)


@qd.kernel(fastcache=True)
def {name}(x: qd.types.NDArray[qd.f32, 1]):
    for i in range(x.shape[0]):
        x[i] = 1.0


{name}(np.zeros(4, np.float32))
"""


def kernels_in(cache_root: str) -> set[str]:
    """The kernel names of the entries of a cache folder (empty when it does not exist)."""
    if not os.path.isdir(cache_root):
        return set()
    return {e.name for e in inventory.scan(inventory.open_store(cache_root)) if e.name}


def test_a_process_without_the_qd_variables_writes_only_inside_the_session_home(tmp_path: Path) -> None:
    guard = os.environ.get(GUARD_HOME)
    assert guard, "the session runs with the user's own HOME: the conftest guard is off"
    real_home = os.environ[REAL_HOME]
    assert os.environ["HOME"] == guard != real_home
    name = f"k_{uuid.uuid4().hex[:12]}"  # only this test's child compiles a kernel of this name
    (tmp_path / "app.py").write_text(SCRIPT.format(name=name))
    env = {k: v for k, v in os.environ.items() if not k.startswith("QD_")}  # the default cache, as qd sees it
    proc = subprocess.run([sys.executable, "app.py"], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=300)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert any(k.endswith(f":{name}") for k in kernels_in(os.path.join(guard, ".cache", "quadrants-fastcache")))
    user_cache = os.path.join(real_home, ".cache", "quadrants-fastcache")
    assert not any(name in k for k in kernels_in(user_cache)), f"written into {user_cache}"
