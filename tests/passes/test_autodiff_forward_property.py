"""Forward mode on the random kernels of tests/passes/autodiff_cases.py: the Jacobian-vector product that
`qd.ad.FwdMode` computes, one unit seed per input, equals the reverse-mode gradient (`kernel.grad`) and the
central differences in float64 wherever those are stable."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.passes import autodiff_cases

SEEDS = range(40)


def test_forward_mode_matches_reverse_mode_and_central_differences(tmp_path: Path) -> None:
    import quadrants as qd

    compared = 0
    for seed in SEEDS:
        path = tmp_path / f"fwdcase_{seed}.py"
        path.write_text(autodiff_cases.case_source(seed).replace("needs_grad=True", "needs_grad=True, needs_dual=True"))
        module = autodiff_cases.load(path)
        xs = autodiff_cases.inputs(seed)
        result = autodiff_cases.evaluate(module, xs)
        module.x.from_numpy(np.array(xs))
        for j in range(autodiff_cases.N_INPUTS):
            seed_vector = [1.0 if m == j else 0.0 for m in range(autodiff_cases.N_INPUTS)]
            with qd.ad.FwdMode(loss=module.loss, param=module.x, seed=seed_vector):
                module.k()
            tangent = float(module.loss.dual[None])
            where = f"seed {seed}, input {j}:\n{path.read_text()}"
            assert tangent == pytest.approx(result["grad"][j], rel=1e-9, abs=1e-12), where
            fd, fd2 = result["fd"][j], result["fd2"][j]
            if abs(fd - fd2) <= 1e-6 * max(1.0, abs(fd)):
                assert tangent == pytest.approx(fd, rel=1e-5, abs=1e-6), where
                compared += 1
        qd.reset()
        qd.init(arch=qd.cpu)
    assert compared >= 0.9 * len(SEEDS) * autodiff_cases.N_INPUTS
