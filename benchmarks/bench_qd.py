"""The workloads written once in the Quadrants language; runs under this project's quadrants or under real
Quadrants 1.3.3 (same source: the API is compatible). Prints JSON: {workload: seconds, ...}.

    python bench_qd.py [--only a,b]
"""

from __future__ import annotations

import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
import bench_fields  # noqa: E402
from common import emit, median_time, per_call, selection  # noqa: E402

import quadrants as qd  # noqa: E402

N_SAXPY = 1 << 24
N_SUM = 1 << 24
STENCIL = 4096
NBODY = 4096
N_RANDOM = 1 << 22
Nd = qd.types.NDArray


@qd.kernel
def saxpy(a: qd.f32, x: Nd[qd.f32, 1], y: Nd[qd.f32, 1]):
    for i in range(x.shape[0]):
        y[i] = a * x[i] + y[i]


@qd.kernel
def atomic_sum(x: Nd[qd.f32, 1], s: Nd[qd.f32, 1]):
    for i in range(x.shape[0]):
        s[0] += x[i]


@qd.kernel
def stencil(u: Nd[qd.f32, 2], v: Nd[qd.f32, 2]):
    for i, j in qd.ndrange((1, u.shape[0] - 1), (1, u.shape[1] - 1)):
        v[i, j] = 0.25 * (u[i - 1, j] + u[i + 1, j] + u[i, j - 1] + u[i, j + 1])


@qd.kernel
def nbody(px: Nd[qd.f32, 1], py: Nd[qd.f32, 1], pz: Nd[qd.f32, 1], m: Nd[qd.f32, 1],
          ax: Nd[qd.f32, 1], ay: Nd[qd.f32, 1], az: Nd[qd.f32, 1]):  # fmt: skip
    for i in range(px.shape[0]):
        xi, yi, zi = px[i], py[i], pz[i]
        fx, fy, fz = 0.0, 0.0, 0.0
        for j in range(px.shape[0]):
            dx, dy, dz = px[j] - xi, py[j] - yi, pz[j] - zi
            r2 = dx * dx + dy * dy + dz * dz + 1e-3
            inv = 1.0 / qd.sqrt(r2)
            s = m[j] * inv * inv * inv
            fx += dx * s
            fy += dy * s
            fz += dz * s
        ax[i], ay[i], az[i] = fx, fy, fz


vec3 = qd.math.vec3


@qd.kernel
def nbody_vec3(p: Nd[vec3, 1], m: Nd[qd.f32, 1], a: Nd[vec3, 1]):
    for i in range(p.shape[0]):
        pi = p[i]
        acc = vec3(0.0)
        for j in range(p.shape[0]):
            d = p[j] - pi
            inv = 1.0 / qd.sqrt(d.dot(d) + 1e-3)
            acc += d * (m[j] * inv * inv * inv)
        a[i] = acc


@qd.kernel
def fill_random(x: Nd[qd.f32, 1]):
    for i in range(x.shape[0]):
        x[i] = qd.random()


@qd.kernel
def tiny(a: Nd[qd.f32, 1], b: Nd[qd.f32, 1], c: Nd[qd.f32, 1]):
    for i in range(a.shape[0]):
        c[i] = a[i] + b[i]


@qd.kernel
def tiny_args(x: Nd[qd.f32, 1], n: qd.i32, s: qd.f32):
    for i in range(x.shape[0]):
        x[i] = s * n


N_STRUCT = 1 << 20
particle = qd.types.struct(pos=vec3, vel=vec3, mass=qd.f32)
step_params = qd.types.struct(g=vec3, dt=qd.f32)


@qd.kernel
def struct_step(ps: qd.template(), prm: step_params):
    for i in ps:
        p = ps[i]
        p.vel += prm.g * prm.dt / p.mass
        p.pos += p.vel * prm.dt
        ps[i] = p


def nd(arr: np.ndarray):
    out = qd.ndarray(qd.f32, arr.shape)
    out.from_numpy(arr)
    return out


def cold_compile(count: int = 9) -> float:
    """Seconds to compile and first-run a new simple kernel (the compiler already warmed up)."""
    import linecache
    import textwrap

    times = []
    for k in range(count + 1):
        src = textwrap.dedent(f"""
            @qd.kernel
            def fresh_{k}(x: Nd[qd.f32, 1], y: Nd[qd.f32, 1]):
                for i in range(x.shape[0]):
                    y[i] = x[i] * {k + 1}.5 + y[i]
        """)
        path = f"<cold-{k}>"
        linecache.cache[path] = (len(src), None, src.splitlines(True), path)
        ns = {"qd": qd, "Nd": Nd}
        exec(compile(src, path, "exec"), ns)
        fn = ns[f"fresh_{k}"]
        x, y = nd(np.ones(16, np.float32)), nd(np.ones(16, np.float32))
        t0 = time.perf_counter()
        fn(x, y)
        if k:  # the first one pays one-time initialization
            times.append(time.perf_counter() - t0)
    times.sort()
    return times[len(times) // 2]


def main() -> None:
    want = selection()
    qd.init(arch=qd.cpu, offline_cache=False, log_level="error")
    rng = np.random.default_rng(0)
    out: dict[str, float] = {}

    if want("saxpy"):
        x, y = nd(rng.random(N_SAXPY, np.float32)), nd(rng.random(N_SAXPY, np.float32))
        out["saxpy"] = median_time(lambda: (saxpy(2.0, x, y), qd.sync()))
    if want("sum"):
        x = nd(rng.random(N_SUM, np.float32))
        s = nd(np.zeros(1, np.float32))
        out["sum"] = median_time(lambda: (atomic_sum(x, s), qd.sync()))
        s.fill(0)
        atomic_sum(x, s)
        out["sum_rel_err"] = abs(float(s.to_numpy()[0]) - float(x.to_numpy().astype(np.float64).sum())) / N_SUM
    if want("stencil"):
        u, v = nd(rng.random((STENCIL, STENCIL), np.float32)), nd(np.zeros((STENCIL, STENCIL), np.float32))
        out["stencil"] = median_time(lambda: (stencil(u, v), qd.sync()))
    if want("nbody"):
        arrs = [nd(rng.random(NBODY, np.float32)) for _ in range(4)] + [
            nd(np.zeros(NBODY, np.float32)) for _ in range(3)
        ]
        out["nbody"] = median_time(lambda: (nbody(*arrs), qd.sync()), repeat=5, warmup=1)
    if want("nbody_vec3"):
        p = qd.ndarray(vec3, (NBODY,))
        p.from_numpy(rng.random((NBODY, 3), np.float32))
        m, a = nd(rng.random(NBODY, np.float32)), qd.ndarray(vec3, (NBODY,))
        out["nbody_vec3"] = median_time(lambda: (nbody_vec3(p, m, a), qd.sync()), repeat=5, warmup=1)
    if want("struct"):
        ps = particle.field(shape=N_STRUCT)
        ps.mass.from_numpy(rng.random(N_STRUCT, np.float32) + 0.5)
        prm = step_params(g=vec3(0, -9.8, 0), dt=1e-3)
        out["struct"] = median_time(lambda: (struct_step(ps, prm), qd.sync()))
    if want("random"):
        x = qd.ndarray(qd.f32, (N_RANDOM,))
        out["random"] = median_time(lambda: (fill_random(x), qd.sync()))
    if want("launch"):
        a, b, c = (nd(np.ones(1, np.float32)) for _ in range(3))
        out["launch"] = per_call(lambda: tiny(a, b, c))
    if want("launch_args"):
        x = np.ones(1, np.float32)
        out["launch_args"] = per_call(lambda: tiny_args(x, 3, 0.5))
    if want("compile"):
        out["compile"] = cold_compile()
    bench_fields.run(want, out)
    emit(out)


if __name__ == "__main__":
    main()
