"""Genesis smoke test: unmodified Genesis drops a box on a plane with this package as its `quadrants`.

Runs where a Python with Genesis installed beside this package is named by GENESIS_PYTHON (see
examples/genesis/README.md: /work/venv-gs-ours/bin/python), or where this interpreter imports `genesis`;
skips otherwise, saying so. The expected position is what real Quadrants 0.5.2 gives for the same scene."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # starts Genesis in a process

SCENES = Path(__file__).resolve().parents[2] / "examples" / "genesis" / "scenes.py"
ROOT = Path(__file__).resolve().parents[2]


def _genesis_python() -> str | None:
    named = os.environ.get("GENESIS_PYTHON")
    if named:
        return named
    return sys.executable if importlib.util.find_spec("genesis") is not None else None


def test_a_box_falls_and_rests_as_on_real_quadrants(tmp_path: Path) -> None:
    python = _genesis_python()
    if python is None:
        pytest.skip("Genesis is not installed: set GENESIS_PYTHON to a Python with genesis-world 0.4.5 and this "
                    "package (examples/genesis/README.md)")  # fmt: skip
    env = {**os.environ, "HOME": str(tmp_path), "XDG_CACHE_HOME": str(tmp_path / "cache"),
           "PYTHONPATH": str(ROOT)}  # fmt: skip
    # the CPU run only: Genesis' largest kernels pass more than the 4 KiB of parameters a CUDA kernel takes
    # under PTX ISA 8.0 (add_equality_constraints: 5264 bytes), so the suite's PTX check would refuse them
    env.pop("QD_PTX_CHECK", None)
    run = subprocess.run([python, str(SCENES), "box", "--steps", "100"], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=900)  # fmt: skip
    assert run.returncode == 0, run.stderr[-3000:]
    out = json.loads(run.stdout.strip().splitlines()[-1])
    x, y, z = out["box"]["pos"]
    assert z == pytest.approx(0.09989222139120102, abs=1e-6)  # real Quadrants 0.5.2: 0.09989222139120102
    assert abs(x) < 1e-6 and abs(y) < 1e-6
    assert out["quadrants"]["compiles"] > 0
