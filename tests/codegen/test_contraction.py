"""On the CPU, `a * b + c` rounds twice, as real Quadrants 1.3.3 computes it (codegen/lower.py FAST_FLAGS).

Fusing it into one FMA changed results that ill-conditioned code amplifies: Genesis' tool entity takes SDF
normals by a finite difference, which inside a flat region is rounding noise, and the fused version pointed them
elsewhere (its MPM block drifted 2.7e-5 m from 0.5.2's; now it matches).
"""

from __future__ import annotations

import numpy as np
import pytest

import quadrants as qd


@pytest.mark.parametrize("fast_math", [True, False])
def test_multiply_add_rounds_twice_on_the_cpu(fast_math: bool) -> None:
    qd.init(arch=qd.cpu, fast_math=fast_math)

    @qd.kernel
    def mad(a: qd.f32, b: qd.f32, c: qd.f32) -> qd.f32:
        return a * b + c

    a = b = np.float32(1 + 2.0**-12)
    c = -np.float32(1 + 2.0**-11)
    twice = np.float32(np.float32(a * b) + c)  # the product rounds to 1 + 2**-11: 0.0
    fused = np.float64(a) * np.float64(b) + np.float64(c)  # exact here: 2**-24
    assert twice == 0.0 and fused == 2.0**-24
    assert mad(a, b, c) == twice


def test_the_cuda_backend_still_contracts() -> None:
    from tests.cuda.test_ptx import compiled

    qd.init(arch=qd.cpu, offline_cache=False, log_level="warn")

    @qd.kernel
    def k(x: qd.types.NDArray[qd.f32, 1], a: qd.f32, c: qd.f32):
        for i in range(x.shape[0]):
            x[i] = x[i] * a + c

    assert "fma.rn.f32" in compiled(k, np.ones(4, np.float32), 2.0, 1.0).ptx["sm_80"]
