"""The same workloads in Numba (`parallel=True`, `prange`), run in its own venv. Prints JSON."""

from __future__ import annotations

import os
import sys
import time

import numba
import numpy as np
from numba import njit, prange

sys.path.insert(0, os.path.dirname(__file__))
from common import emit, median_time, per_call, selection  # noqa: E402

N_SAXPY = 1 << 24
STENCIL = 4096
NBODY = 4096
N_RANDOM = 1 << 22


@njit(parallel=True, fastmath=True)
def saxpy(a, x, y):
    for i in prange(x.shape[0]):
        y[i] = a * x[i] + y[i]


@njit(parallel=True, fastmath=True)
def fill_random(x):
    for i in prange(x.shape[0]):
        x[i] = np.random.random()  # Numba: one generator state per thread


@njit(parallel=True, fastmath=True)
def stencil(u, v):
    for i in prange(1, u.shape[0] - 1):
        for j in range(1, u.shape[1] - 1):
            v[i, j] = np.float32(0.25) * (u[i - 1, j] + u[i + 1, j] + u[i, j - 1] + u[i, j + 1])


@njit(parallel=True, fastmath=True)
def nbody(px, py, pz, m, ax, ay, az):
    n = px.shape[0]
    for i in prange(n):
        xi, yi, zi = px[i], py[i], pz[i]
        fx = np.float32(0.0)
        fy = np.float32(0.0)
        fz = np.float32(0.0)
        for j in range(n):
            dx, dy, dz = px[j] - xi, py[j] - yi, pz[j] - zi
            r2 = dx * dx + dy * dy + dz * dz + np.float32(1e-3)
            inv = np.float32(1.0) / np.sqrt(r2)
            s = m[j] * inv * inv * inv
            fx += dx * s
            fy += dy * s
            fz += dz * s
        ax[i], ay[i], az[i] = fx, fy, fz


@njit(parallel=True, fastmath=True)
def nbody_vec3(p, m, a):
    n = p.shape[0]
    for i in prange(n):
        ax = np.float32(0.0)
        ay = np.float32(0.0)
        az = np.float32(0.0)
        for j in range(n):
            dx, dy, dz = p[j, 0] - p[i, 0], p[j, 1] - p[i, 1], p[j, 2] - p[i, 2]
            inv = np.float32(1.0) / np.sqrt(dx * dx + dy * dy + dz * dz + np.float32(1e-3))
            s = m[j] * inv * inv * inv
            ax += dx * s
            ay += dy * s
            az += dz * s
        a[i, 0], a[i, 1], a[i, 2] = ax, ay, az


@njit
def tiny(a, b, c):
    for i in range(a.shape[0]):
        c[i] = a[i] + b[i]


@njit
def tiny_args(x, n, s):
    for i in range(x.shape[0]):
        x[i] = s * n


def cold_compile(count: int = 5) -> float:
    times = []
    for k in range(count + 1):
        ns: dict = {"njit": njit}
        exec(f"@njit\ndef f(x, y):\n    for i in range(x.shape[0]):\n        y[i] = x[i] * {k + 1}.5 + y[i]\n", ns)
        x, y = np.ones(16, np.float32), np.ones(16, np.float32)
        t0 = time.perf_counter()
        ns["f"](x, y)
        if k:
            times.append(time.perf_counter() - t0)
    times.sort()
    return times[len(times) // 2]


def main() -> None:
    want = selection()
    rng = np.random.default_rng(0)
    out: dict[str, float] = {"threads": numba.get_num_threads()}

    if want("saxpy"):
        x, y = rng.random(N_SAXPY, np.float32), rng.random(N_SAXPY, np.float32)
        out["saxpy"] = median_time(lambda: saxpy(np.float32(2.0), x, y))
    if want("stencil"):
        u, v = rng.random((STENCIL, STENCIL), np.float32), np.zeros((STENCIL, STENCIL), np.float32)
        out["stencil"] = median_time(lambda: stencil(u, v))
    if want("nbody"):
        arrs = [rng.random(NBODY, np.float32) for _ in range(4)] + [np.zeros(NBODY, np.float32) for _ in range(3)]
        out["nbody"] = median_time(lambda: nbody(*arrs), repeat=5, warmup=1)
    if want("nbody_vec3"):
        p, m, a = rng.random((NBODY, 3), np.float32), rng.random(NBODY, np.float32), np.zeros((NBODY, 3), np.float32)
        out["nbody_vec3"] = median_time(lambda: nbody_vec3(p, m, a), repeat=5, warmup=1)
    if want("random"):
        xr = np.zeros(N_RANDOM, np.float32)
        out["random"] = median_time(lambda: fill_random(xr))
    if want("launch"):
        a, b, c = (np.ones(1, np.float32) for _ in range(3))
        out["launch"] = per_call(lambda: tiny(a, b, c))
    if want("launch_args"):
        x = np.ones(1, np.float32)
        out["launch_args"] = per_call(lambda: tiny_args(x, 3, 0.5))
    if want("compile"):
        out["compile"] = cold_compile()
    emit(out)


if __name__ == "__main__":
    main()
