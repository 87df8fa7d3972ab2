"""The diffusion example against numpy (the cloth example: test_cloth.py)."""

from __future__ import annotations

import os
import sys

import pytest

pytestmark = pytest.mark.slow  # an example, run end to end

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
