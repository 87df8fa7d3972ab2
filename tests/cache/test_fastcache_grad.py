"""`kernel.grad` of a fastcache kernel is a fastcache entry of its own: a second process loads both the primal
and the adjoint without the frontend (the mode is in the key, so they never serve each other)."""

from __future__ import annotations

import pytest

from tests.cache.conftest import LOADED, STORED

pytestmark = pytest.mark.slow  # the program runs in fresh processes

APP = """
import json, sys
import numpy as np
import quadrants as qd
qd.init(arch=qd.cpu)

@qd.kernel(fastcache=True)
def k(x: qd.types.NDArray[qd.f32, 1], loss: qd.types.NDArray[qd.f32, 0]) -> None:
    for i in range(x.shape[0]):
        loss[None] += x[i] * x[i] * x[i]

x = qd.ndarray(qd.f32, (4,), needs_grad=True)
loss = qd.ndarray(qd.f32, (), needs_grad=True)
x.from_numpy(np.arange(4, dtype=np.float32))
k(x, loss)
loss.grad.fill(1.0)
k.grad(x, loss)
obs = lambda o: [o.cache_key_generated, o.cache_validated, o.cache_loaded, o.cache_stored]
print(json.dumps({"primal": obs(k.src_ll_cache_observations), "grad": obs(k.grad.src_ll_cache_observations),
                  "frontend": "quadrants.frontend.visitor" in sys.modules, "x_grad": x.grad.to_numpy().tolist()}))
"""


def test_grad_of_a_fastcache_kernel_is_cached_across_processes(project) -> None:
    project.write("app.py", APP)
    first, second = project.run(), project.run()
    want = [3.0 * i * i for i in range(4)]  # d/dx sum x^3 = 3 x^2
    assert first.out["primal"] == STORED and first.out["grad"] == STORED and first.out["x_grad"] == want
    assert second.out["primal"] == LOADED and second.out["grad"] == LOADED and second.out["x_grad"] == want
    assert not second.out["frontend"]
