"""The derivative table on random kernels (tests/passes/autodiff_cases.py): `kernel.grad` against central
differences in float64 here, and against real Quadrants 1.3.3 where a Python with it is given."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.passes import autodiff_cases

SEEDS = range(40)


def _check_against_differences(result: dict[str, list[float]], what: str) -> int:
    """Compare the gradient with the central differences where they are stable (step h and h/2 agree); the
    number of components compared."""
    compared = 0
    for g, fd, fd2 in zip(result["grad"], result["fd"], result["fd2"]):
        if abs(fd - fd2) > 1e-6 * max(1.0, abs(fd)):
            continue  # a kink (abs, floor, min/max, an if) within a step of this input
        assert g == pytest.approx(fd, rel=1e-5, abs=1e-6), what
        compared += 1
    return compared


def test_gradients_match_central_differences(tmp_path: Path) -> None:
    import quadrants as qd

    compared = 0
    for seed in SEEDS:
        path = tmp_path / f"adcase_{seed}.py"
        path.write_text(autodiff_cases.case_source(seed))
        result = autodiff_cases.evaluate(autodiff_cases.load(path), autodiff_cases.inputs(seed))
        compared += _check_against_differences(result, f"seed {seed}:\n{path.read_text()}")
        qd.reset()
        qd.init(arch=qd.cpu)
    assert compared >= 0.9 * len(SEEDS) * autodiff_cases.N_INPUTS


REFERENCE = os.environ.get("REFERENCE_QUADRANTS_PYTHON", "/work/ref133/bin/python")


@pytest.mark.slow
@pytest.mark.skipif(not Path(REFERENCE).exists(), reason="no Python with real Quadrants 1.3.3 (set "
                    "REFERENCE_QUADRANTS_PYTHON)")  # fmt: skip
def test_gradients_match_real_quadrants(tmp_path: Path) -> None:
    script = Path(autodiff_cases.__file__)
    seeds = [str(s) for s in SEEDS]
    runs = {}
    for name, python in (("ours", sys.executable), ("reference", REFERENCE)):
        out = tmp_path / name
        out.mkdir()
        proc = subprocess.run([python, str(script), str(out), *seeds], capture_output=True, text=True, timeout=600,
                              env={**os.environ, "PYTHONPATH": ""})  # fmt: skip
        assert proc.returncode == 0, proc.stderr[-3000:]
        runs[name] = json.loads(proc.stdout.strip().splitlines()[-1])
    for seed in seeds:
        ours, ref = runs["ours"][seed]["grad"], runs["reference"][seed]["grad"]
        assert ours == pytest.approx(ref, rel=1e-9, abs=1e-12), f"seed {seed}: {autodiff_cases.case_source(int(seed))}"
