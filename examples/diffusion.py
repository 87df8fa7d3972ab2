"""Heat diffusion on a 2-D grid: a 5-point stencil kernel, a reduction and a qd.func.

python examples/diffusion.py [N] [STEPS]
"""

from __future__ import annotations

import sys
import time

import numpy as np

import quadrants as qd


@qd.func
def laplacian(u: qd.types.NDArray[qd.f32, 2], i: qd.i32, j: qd.i32) -> qd.f32:
    return u[i - 1, j] + u[i + 1, j] + u[i, j - 1] + u[i, j + 1] - 4.0 * u[i, j]


@qd.kernel
def step(u: qd.types.NDArray[qd.f32, 2], v: qd.types.NDArray[qd.f32, 2], k: qd.f32):
    for i, j in qd.ndrange((1, u.shape[0] - 1), (1, u.shape[1] - 1)):
        v[i, j] = u[i, j] + k * laplacian(u, i, j)


@qd.kernel
def total_heat(u: qd.types.NDArray[qd.f32, 2]) -> qd.f32:
    s = 0.0
    for i, j in u:
        s += u[i, j]
    return s


def main(n: int = 512, steps: int = 200) -> dict[str, float]:
    qd.init(arch=qd.cpu)
    u = qd.ndarray(qd.f32, (n, n))
    v = qd.ndarray(qd.f32, (n, n))
    init = np.zeros((n, n), np.float32)
    init[n // 4 : 3 * n // 4, n // 4 : 3 * n // 4] = 1.0
    u.from_numpy(init)
    v.from_numpy(init)
    t0 = time.perf_counter()
    step(u, v, 0.2)
    heat0 = total_heat(u)
    t1 = time.perf_counter()
    for _ in range(steps // 2):
        step(u, v, 0.2)
        step(v, u, 0.2)
    heat1 = total_heat(u)
    t2 = time.perf_counter()
    # The same computation in numpy, as a check.
    w = init.copy()
    for _ in range(steps):
        x = w.copy()
        x[1:-1, 1:-1] = w[1:-1, 1:-1] + 0.2 * (
            w[:-2, 1:-1] + w[2:, 1:-1] + w[1:-1, :-2] + w[1:-1, 2:] - 4 * w[1:-1, 1:-1]
        )
        w = x
    err = float(np.abs(u.to_numpy() - w).max())
    return {"first_call_s": t1 - t0, "run_s": t2 - t1, "heat0": heat0, "heat1": heat1, "max_err": err}


if __name__ == "__main__":
    args = [int(a) for a in sys.argv[1:]]
    r = main(*args)
    print(f"compile + first call: {r['first_call_s'] * 1e3:.1f} ms")
    print(f"{200} steps:          {r['run_s'] * 1e3:.1f} ms")
    print(f"total heat {r['heat0']:.3f} -> {r['heat1']:.3f}, max |quadrants - numpy| = {r['max_err']:.2e}")
