"""The examples run as tests (in-process where cheap, as a subprocess for the `make run` driver)."""

from __future__ import annotations

import os
import subprocess
import sys

EXAMPLES = os.path.join(os.path.dirname(__file__), "..", "..", "examples")


def test_diffusion_matches_numpy() -> None:
    sys.path.insert(0, EXAMPLES)
    try:
        import diffusion
    finally:
        sys.path.remove(EXAMPLES)
    r = diffusion.main(64, 20)
    assert r["max_err"] < 1e-5
    assert abs(r["heat1"] - r["heat0"]) < 1.0


def test_run_demo_script() -> None:
    out = subprocess.run(
        [sys.executable, os.path.join(EXAMPLES, "run_demo.py")], capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stderr
    assert "compile + first call" in out.stdout and "max |quadrants - numpy|" in out.stdout
