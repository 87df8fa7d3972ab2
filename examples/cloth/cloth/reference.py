"""The same time step in numpy (float32), to check the kernels against (tests/examples)."""

from __future__ import annotations

import numpy as np

from cloth import kernels as K


def _shift(a: np.ndarray, di: int, dj: int) -> tuple[np.ndarray, np.ndarray]:
    """a[i + di, j + dj] for every (i, j), and where that neighbour exists."""
    n = a.shape[0]
    out = np.zeros_like(a)
    ok = np.zeros((n, n), dtype=bool)
    i0, i1 = max(0, -di), min(n, n - di)
    j0, j1 = max(0, -dj), min(n, n - dj)
    out[i0:i1, j0:j1] = a[i0 + di : i1 + di, j0 + dj : j1 + dj]
    ok[i0:i1, j0:j1] = True
    return out, ok


def step(x: np.ndarray, v: np.ndarray, rest: np.ndarray, p: K.Params, center: np.ndarray, radius: float,
         pinned: tuple[tuple[int, int], ...], drag: float = 0.001, friction: float = 0.01) -> None:  # fmt: skip
    f32 = np.float32
    f = np.broadcast_to(np.asarray(p.gravity, dtype=f32) * f32(p.mass), x.shape).copy()
    for family in (K.STRUCTURAL, K.SHEAR, K.BEND):
        for di, dj in family:
            xj, ok = _shift(x, di, dj)
            vj, _ = _shift(v, di, dj)
            d = xj - x
            length = np.linalg.norm(d, axis=-1, keepdims=True).astype(f32)
            safe = np.where(length > 1e-6, length, f32(1))
            u = d / safe
            rest_len = f32(p.spacing) * f32(np.sqrt(di * di + dj * dj))
            mag = f32(p.stiffness) * (length - rest_len) + f32(p.damping) * np.sum((vj - v) * u, -1, keepdims=True)
            f += np.where(ok[..., None] & (length > 1e-6), u * mag, f32(0))
    f -= f32(drag) * v
    v += f * f32(p.dt / p.mass)
    x += v * f32(p.dt)
    d = x - center
    dist = np.linalg.norm(d, axis=-1, keepdims=True)
    inside = dist < radius
    nrm = d / np.where(dist > 0, dist, 1)
    x[:] = np.where(inside, center + nrm * f32(radius), x)
    vn = np.sum(v * nrm, -1, keepdims=True)
    v[:] = np.where(inside & (vn < 0), v - nrm * vn, v)
    v[:] = np.where(inside, v * f32(1 - friction), v)
    below = x[..., 1] < 0
    x[..., 1] = np.where(below, 0, x[..., 1])
    v[..., 1] = np.where(below & (v[..., 1] < 0), 0, v[..., 1])
    for i, j in pinned:
        x[i, j] = rest[i, j]
        v[i, j] = 0
