"""The cloth as a `@qd.data_oriented` object: its state arrays, parameters, and one time step.

`Cloth.step` is plain Python that launches the kernels of `kernels.py`; the two kernels defined here are methods
(their `self` is compiled in: its ndarrays are arguments, its primitive members are constants).
"""

from __future__ import annotations

import numpy as np

import quadrants as qd
from cloth import kernels as K

vec3 = qd.math.vec3


@qd.data_oriented
class Cloth:
    def __init__(self, n: int = 64, spacing: float = 0.02, height: float = 1.0, substeps: int = 20) -> None:
        self.n = n
        self.substeps = substeps
        self.x = qd.Vector.ndarray(3, qd.f32, (n, n))
        self.v = qd.Vector.ndarray(3, qd.f32, (n, n))
        self.f = qd.Vector.ndarray(3, qd.f32, (n, n))
        self.rest = qd.Vector.ndarray(3, qd.f32, (n, n))
        self.normals = qd.Vector.ndarray(3, qd.f32, (n, n))
        self.params = K.Params(dt=1.0 / (60 * substeps), mass=1.0 / (n * n), stiffness=30.0, damping=0.02,
                               spacing=spacing, gravity=vec3(0.0, -9.8, 0.0), n=n)  # fmt: skip
        self.sphere_center = vec3(0.0, 0.45, 0.0)
        self.sphere_radius = 0.25
        self.pinned = ((0, 0), (0, n - 1))
        K.init_grid(self.x, self.v, spacing, height)
        K.init_grid(self.rest, self.f, spacing, height)

    @qd.kernel(fastcache=True)
    def reset_velocity(self):
        for i, j in self.v:
            self.v[i, j] = vec3(0.0, 0.0, 0.0)

    @qd.kernel(fastcache=True)
    def nudge(self, i: qd.i32, j: qd.i32, dv: vec3):
        self.v[i, j] += dv

    def step(self, wind_strength: float = 0.0) -> None:
        p = self.params
        for _ in range(self.substeps):
            K.clear_forces(self.f)
            K.add_gravity(self.f, p)
            K.spring_forces(self.x, self.v, self.f, p, K.STRUCTURAL, 1.0)
            K.spring_forces(self.x, self.v, self.f, p, K.SHEAR, 1.0)
            K.spring_forces(self.x, self.v, self.f, p, K.BEND, 1.0)
            K.air_drag(self.v, self.f, 0.001)
            if wind_strength:
                K.compute_normals(self.x, self.normals)
                K.wind(self.f, self.normals, vec3(0.0, 0.0, 1.0), wind_strength)
            K.integrate(self.x, self.v, self.f, p)
            K.collide_sphere(self.x, self.v, self.sphere_center, self.sphere_radius, 0.01)
            K.collide_floor(self.x, self.v, 0.0)
            K.pin(self.x, self.v, self.rest, self.pinned)

    def energy(self) -> tuple[float, float]:
        return K.kinetic_energy(self.v, self.params.mass), K.potential_energy(self.x, self.params)

    def vertices(self) -> np.ndarray:
        out = np.zeros((self.n * self.n, 3), dtype=np.float32)
        K.to_vertices(self.x, out)
        return out

    def bounds(self) -> tuple[np.ndarray, np.ndarray]:
        lo = np.full(3, np.inf, dtype=np.float32)
        hi = np.full(3, -np.inf, dtype=np.float32)
        K.bounding_box(self.x, lo, hi)
        return lo, hi
