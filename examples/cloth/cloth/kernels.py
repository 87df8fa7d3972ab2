"""The cloth's kernels: a grid of particles joined by springs, falling onto a sphere.

Every kernel is `fastcache=True`, so a precompiled process loads them by key. Parameters come in as a
dataclass (`Params`), vectors as `qd.math.vec3` values, state as vec3 ndarrays of shape (n, n).
"""

from __future__ import annotations

import dataclasses

import quadrants as qd
from quadrants.lang._fast_caching import FIELD_METADATA_CACHE_VALUE

vec3 = qd.math.vec3
Grid = qd.types.NDArray[qd.math.vec3, 2]
Scalars = qd.types.NDArray[qd.f32, 2]

# Spring families as grid offsets: each particle pulls on its neighbours at these offsets (a gather: no atomics).
STRUCTURAL = ((1, 0), (-1, 0), (0, 1), (0, -1))
SHEAR = ((1, 1), (-1, -1), (1, -1), (-1, 1))
BEND = ((2, 0), (-2, 0), (0, 2), (0, -2))


@dataclasses.dataclass
class Params:
    """Physical parameters; `n` is compiled in (a kernel per grid size), the rest are runtime values."""

    dt: qd.f32
    mass: qd.f32
    stiffness: qd.f32
    damping: qd.f32
    spacing: qd.f32
    gravity: vec3
    n: int = dataclasses.field(default=64, metadata={FIELD_METADATA_CACHE_VALUE: True})


@qd.func
def inside(i, j, n):
    return 0 <= i < n and 0 <= j < n


@qd.func
def spring(xi, xj, vi, vj, rest, k, c):
    """Hooke's law along the spring plus damping of the relative velocity along it."""
    d = xj - xi
    length = d.norm()
    f = vec3(0.0, 0.0, 0.0)
    if length > 1e-6:
        u = d / length
        f = u * (k * (length - rest) + c * (vj - vi).dot(u))
    return f


@qd.kernel(fastcache=True)
def init_grid(x: Grid, v: Grid, spacing: qd.f32, height: qd.f32):
    n = x.shape[0]
    for i, j in x:
        x[i, j] = vec3((i - n / 2) * spacing, height, (j - n / 2) * spacing)
        v[i, j] = vec3(0.0, 0.0, 0.0)


@qd.kernel(fastcache=True)
def clear_forces(f: Grid):
    for i, j in f:
        f[i, j] = vec3(0.0, 0.0, 0.0)


@qd.kernel(fastcache=True)
def add_gravity(f: Grid, p: Params):
    for i, j in f:
        f[i, j] += p.gravity * p.mass


@qd.kernel(fastcache=True)
def spring_forces(x: Grid, v: Grid, f: Grid, p: Params, offsets: qd.template(), reach: qd.f32):
    """Forces of one spring family (its offsets compiled in; `reach` scales the rest length)."""
    for i, j in x:
        total = vec3(0.0, 0.0, 0.0)
        for k in qd.static(range(len(offsets))):
            di, dj = qd.static(offsets[k][0], offsets[k][1])
            if inside(i + di, j + dj, p.n):
                rest = p.spacing * reach * qd.sqrt(float(di * di + dj * dj))
                total += spring(x[i, j], x[i + di, j + dj], v[i, j], v[i + di, j + dj], rest, p.stiffness, p.damping)
        f[i, j] += total


@qd.kernel(fastcache=True)
def air_drag(v: Grid, f: Grid, drag: qd.f32):
    for i, j in v:
        f[i, j] -= drag * v[i, j]


@qd.kernel(fastcache=True)
def wind(f: Grid, normals: Grid, direction: vec3, strength: qd.f32):
    for i, j in f:
        f[i, j] += normals[i, j] * (strength * normals[i, j].dot(direction))


@qd.kernel(fastcache=True)
def integrate(x: Grid, v: Grid, f: Grid, p: Params):
    """Semi-implicit Euler."""
    for i, j in x:
        v[i, j] += f[i, j] * (p.dt / p.mass)
        x[i, j] += v[i, j] * p.dt


@qd.kernel(fastcache=True)
def collide_sphere(x: Grid, v: Grid, center: vec3, radius: qd.f32, friction: qd.f32):
    """Push particles out of the sphere, removing the inward normal velocity and some of the tangential."""
    for i, j in x:
        d = x[i, j] - center
        dist = d.norm()
        if dist < radius:
            nrm = d / dist
            x[i, j] = center + nrm * radius
            vn = v[i, j].dot(nrm)
            if vn < 0:
                v[i, j] -= nrm * vn
            v[i, j] *= 1.0 - friction


@qd.kernel(fastcache=True)
def collide_floor(x: Grid, v: Grid, floor: qd.f32):
    for i, j in x:
        if x[i, j][1] < floor:
            x[i, j][1] = floor
            if v[i, j][1] < 0:
                v[i, j][1] = 0.0


@qd.kernel(fastcache=True)
def pin(x: Grid, v: Grid, rest: Grid, corners: qd.template()):
    """Hold the listed grid points where they started."""
    for k in qd.static(range(len(corners))):
        i, j = qd.static(corners[k][0], corners[k][1])
        x[i, j] = rest[i, j]
        v[i, j] = vec3(0.0, 0.0, 0.0)


@qd.kernel(fastcache=True)
def compute_normals(x: Grid, normals: Grid):
    n = x.shape[0]
    for i, j in x:
        i0, i1 = qd.max(i - 1, 0), qd.min(i + 1, n - 1)
        j0, j1 = qd.max(j - 1, 0), qd.min(j + 1, n - 1)
        c = (x[i1, j] - x[i0, j]).cross(x[i, j1] - x[i, j0])
        length = c.norm()
        normals[i, j] = c / length if length > 1e-12 else vec3(0.0, 1.0, 0.0)


@qd.kernel(fastcache=True)
def kinetic_energy(v: Grid, mass: qd.f32) -> qd.f32:
    e = 0.0
    for i, j in v:
        e += 0.5 * mass * v[i, j].dot(v[i, j])
    return e


@qd.kernel(fastcache=True)
def potential_energy(x: Grid, p: Params) -> qd.f32:
    """Gravitational potential plus the energy stored in the structural springs."""
    e = 0.0
    for i, j in x:
        e -= p.mass * p.gravity.dot(x[i, j])
        for di, dj in qd.static(((1, 0), (0, 1))):  # each structural spring once
            if inside(i + di, j + dj, p.n):
                stretch = (x[i + di, j + dj] - x[i, j]).norm() - p.spacing
                e += 0.5 * p.stiffness * stretch * stretch
    return e


@qd.kernel(fastcache=True)
def max_speed(v: Grid) -> qd.f32:
    m = 0.0
    for i, j in v:
        qd.atomic_max(m, v[i, j].norm())
    return m


@qd.kernel(fastcache=True)
def bounding_box(x: Grid, lo: qd.types.NDArray[qd.f32, 1], hi: qd.types.NDArray[qd.f32, 1]):
    for i, j in x:
        for c in qd.static(range(3)):
            qd.atomic_min(lo[c], x[i, j][c])
            qd.atomic_max(hi[c], x[i, j][c])


@qd.kernel(fastcache=True)
def stretch_ratio(x: Grid, spacing: qd.f32, out: Scalars):
    """How stretched each particle's right-hand spring is (1 = rest length): for shading."""
    n = x.shape[0]
    for i, j in x:
        r = 1.0
        if i + 1 < n:
            r = (x[i + 1, j] - x[i, j]).norm() / spacing
        out[i, j] = r


@qd.kernel(fastcache=True)
def to_vertices(x: Grid, out: qd.types.ndarray()):
    """Flatten positions into an (n*n, 3) array a renderer can take (numpy or torch)."""
    n = x.shape[0]
    for i, j in x:
        for c in qd.static(range(3)):
            out[i * n + j, c] = x[i, j][c]
