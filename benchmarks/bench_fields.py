"""Workloads over SNode trees and differentiable fields, written once in the Quadrants language (run by
bench_qd.py under this project or under real Quadrants 1.3.3):

- `p2g_sparse`: particle-to-grid of 1M particles into a pointer grid (512³ index space in 8³ blocks), then a
  struct-for over the active cells; one step also empties the grid (`deactivate_all`), as a sparse MPM does.
- `sparse_memory`: resident memory of a pointer grid (1024³ index space in 8³ f32 blocks) with 1 % of its blocks
  active, against the active blocks' bytes (measured from /proc/self/statm around the activating launch).
- `diffmpm`: a differentiable 2D MPM (fixed-corotated elasticity), forward and backward of 32 substeps
  through `qd.ad.Tape` with `grad_replaced` substeps that recompute the grid, as difftaichi's diffmpm does.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from common import sample_times

import quadrants as qd

P2G_PARTICLES = 1 << 20
P2G_BLOCKS, P2G_BLOCK = 64, 8  # pointer cells per axis, dense cells per block axis: 512³ index space
MEM_BLOCKS, MEM_BLOCK, MEM_EVERY = 128, 8, 100  # 1024³ index space; every 100th block active (1 %)


def p2g_sparse(out: dict[str, Any]) -> None:
    n_grid = P2G_BLOCKS * P2G_BLOCK
    inv_dx = float(n_grid)
    x = qd.Vector.field(3, qd.f32, shape=P2G_PARTICLES)
    m = qd.field(qd.f32)
    blocks = qd.root.pointer(qd.ijk, P2G_BLOCKS)
    blocks.dense(qd.ijk, P2G_BLOCK).place(m)

    @qd.kernel
    def p2g():
        for p in x:
            xp = x[p] * inv_dx
            base = qd.cast(xp - 0.5, qd.i32)
            fx = xp - base
            w = [0.5 * (1.5 - fx) ** 2, 0.75 - (fx - 1.0) ** 2, 0.5 * (fx - 0.5) ** 2]
            for i, j, k in qd.static(qd.ndrange(3, 3, 3)):
                m[base + qd.Vector([i, j, k])] += w[i][0] * w[j][1] * w[k][2]

    @qd.kernel
    def active_sum() -> qd.f32:
        s = 0.0
        for i, j, k in m:
            s += m[i, j, k]
        return s

    # a ball of radius 0.06 at the domain's centre: ~8 particles per cell, ~1 % of the blocks active
    rng = np.random.default_rng(1)
    d = rng.normal(size=(P2G_PARTICLES, 3))
    d *= (0.06 * rng.random(P2G_PARTICLES) ** (1 / 3) / np.linalg.norm(d, axis=1))[:, None]
    x.from_numpy((d + 0.5).astype(np.float32))
    total: list[float] = []

    def step() -> None:
        blocks.deactivate_all()
        p2g()
        total.append(active_sum())

    times = sample_times(step, repeat=9, warmup=2)
    out["p2g_sparse"], out["p2g_sparse_samples"] = float(np.median(times)), times
    out["p2g_sparse_mass_err"] = abs(total[-1] - P2G_PARTICLES) / P2G_PARTICLES  # each particle deposits 1


def _rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096


def sparse_memory(out: dict[str, Any]) -> None:
    g = qd.field(qd.f32)
    qd.root.pointer(qd.ijk, MEM_BLOCKS).dense(qd.ijk, MEM_BLOCK).place(g)

    @qd.kernel
    def touch(n: qd.i32, every: qd.i32):
        for b in range(n):
            lin = b * every
            bi, bj, bk = lin // (MEM_BLOCKS * MEM_BLOCKS), (lin // MEM_BLOCKS) % MEM_BLOCKS, lin % MEM_BLOCKS
            g[bi * MEM_BLOCK, bj * MEM_BLOCK, bk * MEM_BLOCK] = 1.0

    touch(1, 1)  # compiles, and activates one block
    qd.sync()
    before = _rss_bytes()
    n = MEM_BLOCKS**3 // MEM_EVERY
    touch(n, MEM_EVERY)
    qd.sync()
    out["sparse_memory_bytes"] = _rss_bytes() - before
    out["sparse_memory_active_bytes"] = (n - 1) * MEM_BLOCK**3 * 4  # block 0 was active before
    out["sparse_memory_slot_bytes"] = MEM_BLOCKS**3 * 8  # one pointer per block: resident from the start


def _diffmpm(steps: int = 32, n_particles: int = 8192, n_grid: int = 128) -> Callable[[], float]:
    dx, inv_dx, dt = 1.0 / n_grid, float(n_grid), 1e-4
    p_vol, p_mass, bound = 1.0, 1.0, 3
    mu, la, gravity = 10.0, 10.0, 9.8
    vec, mat = qd.types.vector(2, qd.f32), qd.types.matrix(2, 2, qd.f32)
    x = qd.Vector.field(2, qd.f32, shape=(steps, n_particles), needs_grad=True)
    v = qd.Vector.field(2, qd.f32, shape=(steps, n_particles), needs_grad=True)
    C = qd.Matrix.field(2, 2, qd.f32, shape=(steps, n_particles), needs_grad=True)
    F = qd.Matrix.field(2, 2, qd.f32, shape=(steps, n_particles), needs_grad=True)
    grid_v_in = qd.Vector.field(2, qd.f32, shape=(n_grid, n_grid), needs_grad=True)
    grid_m_in = qd.field(qd.f32, shape=(n_grid, n_grid), needs_grad=True)
    grid_v_out = qd.Vector.field(2, qd.f32, shape=(n_grid, n_grid), needs_grad=True)
    init_v = qd.Vector.field(2, qd.f32, shape=(), needs_grad=True)
    loss = qd.field(qd.f32, shape=(), needs_grad=True)

    @qd.kernel
    def clear_grid():
        for i, j in grid_m_in:
            grid_v_in[i, j] = vec(0, 0)
            grid_m_in[i, j] = 0
            grid_v_in.grad[i, j] = vec(0, 0)
            grid_m_in.grad[i, j] = 0
            grid_v_out.grad[i, j] = vec(0, 0)

    @qd.kernel
    def set_v():
        for i in range(n_particles):
            v[0, i] = init_v[None]

    @qd.kernel
    def p2g(f: qd.i32):
        for p in range(n_particles):
            base = qd.cast(x[f, p] * inv_dx - 0.5, qd.i32)
            fx = x[f, p] * inv_dx - qd.cast(base, qd.f32)
            w = [0.5 * (1.5 - fx) ** 2, 0.75 - (fx - 1) ** 2, 0.5 * (fx - 0.5) ** 2]
            new_F = (qd.Matrix.diag(dim=2, val=1) + dt * C[f, p]) @ F[f, p]
            J = new_F.determinant()
            F[f + 1, p] = new_F
            r, s = qd.polar_decompose(new_F)
            cauchy = 2 * mu * (new_F - r) @ new_F.transpose() + qd.Matrix.diag(2, la * (J - 1) * J)
            affine = -(dt * p_vol * 4 * inv_dx * inv_dx) * cauchy + p_mass * C[f, p]
            for i, j in qd.static(qd.ndrange(3, 3)):
                offset = qd.Vector([i, j])
                dpos = (qd.cast(offset, qd.f32) - fx) * dx
                weight = w[i][0] * w[j][1]
                grid_v_in[base + offset] += weight * (p_mass * v[f, p] + affine @ dpos)
                grid_m_in[base + offset] += weight * p_mass

    @qd.kernel
    def grid_op():
        for i, j in grid_m_in:
            inv_m = 1 / (grid_m_in[i, j] + 1e-10)
            v_out = inv_m * grid_v_in[i, j]
            v_out[1] -= dt * gravity
            if i < bound and v_out[0] < 0:
                v_out[0] = 0
            if i > n_grid - bound and v_out[0] > 0:
                v_out[0] = 0
            if j < bound and v_out[1] < 0:
                v_out[1] = 0
            if j > n_grid - bound and v_out[1] > 0:
                v_out[1] = 0
            grid_v_out[i, j] = v_out

    @qd.kernel
    def g2p(f: qd.i32):
        for p in range(n_particles):
            base = qd.cast(x[f, p] * inv_dx - 0.5, qd.i32)
            fx = x[f, p] * inv_dx - qd.cast(base, qd.f32)
            w = [0.5 * (1.5 - fx) ** 2, 0.75 - (fx - 1.0) ** 2, 0.5 * (fx - 0.5) ** 2]
            new_v = vec(0, 0)
            new_C = mat(0, 0, 0, 0)
            for i, j in qd.static(qd.ndrange(3, 3)):
                dpos = qd.cast(qd.Vector([i, j]), qd.f32) - fx
                g_v = grid_v_out[base[0] + i, base[1] + j]
                weight = w[i][0] * w[j][1]
                new_v += weight * g_v
                new_C += 4 * weight * g_v.outer_product(dpos) * inv_dx
            v[f + 1, p] = new_v
            x[f + 1, p] = x[f, p] + dt * v[f + 1, p]
            C[f + 1, p] = new_C

    @qd.kernel
    def compute_loss():
        for i in range(n_particles):
            loss[None] += dt * x[steps - 1, i][0]

    @qd.ad.grad_replaced
    def substep(s):
        clear_grid()
        p2g(s)
        grid_op()
        g2p(s)

    @qd.ad.grad_for(substep)
    def substep_grad(s):
        clear_grid()
        p2g(s)
        grid_op()
        g2p.grad(s)
        grid_op.grad()
        p2g.grad(s)

    rng = np.random.default_rng(2)
    x0 = np.zeros((steps, n_particles, 2), np.float32)
    x0[0] = rng.random((n_particles, 2)) * 0.3 + 0.35
    f0 = np.zeros((steps, n_particles, 2, 2), np.float32)
    f0[0] = np.eye(2, dtype=np.float32)

    def forward_backward() -> float:
        x.from_numpy(x0)
        F.from_numpy(f0)
        init_v[None] = [0.3, 0.1]
        with qd.ad.Tape(loss=loss):
            set_v()
            for s in range(steps - 1):
                substep(s)
            compute_loss()
        return float(init_v.grad[None][0])

    return forward_backward


def diffmpm(out: dict[str, Any]) -> None:
    run = _diffmpm()
    grads: list[float] = []
    times = sample_times(lambda: grads.append(run()), repeat=11, warmup=1)
    out["diffmpm"], out["diffmpm_samples"] = float(np.median(times)), times
    out["diffmpm_grad"] = grads[-1]  # d loss / d init_v.x, compared between the systems in the report


WORKLOADS = {"p2g_sparse": p2g_sparse, "sparse_memory": sparse_memory, "diffmpm": diffmpm}


def run(want: Callable[[str], bool], out: dict[str, Any]) -> None:
    for name, fn in WORKLOADS.items():
        if want(name):
            fn(out)
