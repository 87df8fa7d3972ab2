"""The kernels whose stages are kept as golden files (tests/golden/), specialized by hand.

`CASES` covers what the backends treat differently: a parallel loop, a reduction, serial code between two
loops, a func call (with a while loop, ndrange and a static loop), vector/matrix arithmetic, a recursive
real function called from a parallel loop, and qd.random() draws. `PASS_CASES` names, for every pass of the
pipeline, a kernel the pass rewrites (`drift` reads two of its dataclass's four members: `prune_args`).
"""

from __future__ import annotations

import dataclasses

import quadrants as qd
from tests.golden_support import GoldenCase, dataclass_param, ndarray, scalar, template

Nd = qd.types.NDArray


@qd.kernel
def saxpy(a: qd.f32, x: Nd[qd.f32, 1], y: Nd[qd.f32, 1]):
    for i in range(x.shape[0]):
        y[i] = a * x[i] + y[i]


@qd.kernel
def total(x: Nd[qd.f32, 1], s: Nd[qd.f32, 1]) -> qd.f32:
    acc = 0.0
    for i in range(x.shape[0]):
        s[0] += x[i]
        acc += x[i] * 2
    return acc


@qd.func
def sq(v):
    return v * v


@qd.kernel
def control(a: Nd[qd.i32, 2], n: qd.template()) -> qd.i32:
    c = 0
    for i, j in qd.ndrange(a.shape[0], (1, a.shape[1])):
        k = 0
        while k < n:
            if a[i, j] > k and k % 2 == 0:
                a[i, j] = sq(k)
            k += 1
    for p in qd.static(range(n)):
        c += p
    return c


@qd.kernel
def phases(x: Nd[qd.i32, 1]) -> qd.i32:
    c = 0
    for i in range(x.shape[0]):
        qd.atomic_max(c, x[i])
    m = c * 2
    for j in range(x.shape[0]):
        x[j] += m
    return m


@qd.kernel
def transform(p: Nd[qd.f32, 2]):
    for i in range(p.shape[0]):
        m = qd.Matrix([[0.0, -1.0], [1.0, 0.0]])
        v = qd.Vector([p[i, 0], p[i, 1]])
        w = m @ v + v.dot(v) * v
        p[i, 0] = w[0]
        p[i, 1] = w[1]


@qd.real_func
def fib(n: qd.i32) -> qd.i32:
    if n < 2:
        return n
    return fib(n - 1) + fib(n - 2)


@qd.kernel
def fibs(x: Nd[qd.i32, 1]):
    for i in range(x.shape[0]):
        x[i] = fib(i)


@qd.kernel
def bump(x: Nd[qd.f32, 1]):
    x[0] += 1.0
    for i in range(x.shape[0]):
        x[i] *= 2.0


@qd.kernel
def jitter(x: Nd[qd.f32, 1]) -> qd.f64:
    for i in range(x.shape[0]):
        for _ in range(2):
            x[i] += qd.random()
    return qd.random(qd.f64)


CASES: dict[str, GoldenCase] = {
    "saxpy": GoldenCase(saxpy, [scalar("a", qd.f32), ndarray("x", qd.f32, 1), ndarray("y", qd.f32, 1)]),
    "total": GoldenCase(total, [ndarray("x", qd.f32, 1), ndarray("s", qd.f32, 1)], (qd.f32,)),
    "control": GoldenCase(control, [ndarray("a", qd.i32, 2), template("n", 3)], (qd.i32,)),
    "phases": GoldenCase(phases, [ndarray("x", qd.i32, 1)], (qd.i32,)),
    "transform": GoldenCase(transform, [ndarray("p", qd.f32, 2)]),
    "fibs": GoldenCase(fibs, [ndarray("x", qd.i32, 1)]),
    "jitter": GoldenCase(jitter, [ndarray("x", qd.f32, 1)], (qd.f64,)),
}

@qd.kernel
def grow(x: qd.template(), n: qd.i32):
    for i in range(n):
        x[i] = x[i] + 1.0


@dataclasses.dataclass
class Bodies:
    pos: Nd[qd.f32, 1]
    mass: Nd[qd.f32, 1]
    vel: Nd[qd.f32, 1]
    steps: qd.i32


@qd.kernel
def drift(b: Bodies, dt: qd.f32):
    for i in range(b.pos.shape[0]):
        b.pos[i] += b.vel[i] * dt


@qd.kernel
def pack(x: qd.template(), y: qd.template(), n: qd.i32):
    for i in range(n):
        x[i] = i
        y[i] = i * 0.5


class _PassCases(dict[str, GoldenCase]):
    """The cases by pass; `sparse_access`'s kernel writes a field of a sparse tree, `bit_stores`' two fields of
    a qd.BitpackedFields, made when asked for (fields belong to the program of the test that asks)."""

    def get(self, name: str, default: GoldenCase | None = None) -> GoldenCase | None:  # type: ignore[override]
        if name == "sparse_access":
            x = qd.field(qd.f32)
            qd.root.pointer(qd.i, 4).dense(qd.i, 8).place(x)
            return GoldenCase(grow, [template("x", x), scalar("n", qd.i32)])
        if name == "bit_stores":
            a = qd.field(dtype=qd.types.quant.int(12))
            b = qd.field(dtype=qd.types.quant.fixed(20, max_value=4.0))
            bits = qd.BitpackedFields(max_num_bits=32)
            bits.place(a, b)
            qd.root.dense(qd.i, 8).place(bits)
            return GoldenCase(pack, [template("x", a), template("y", b), scalar("n", qd.i32)])
        return super().get(name, default)


PASS_CASES = _PassCases({
    "reductions": CASES["total"],
    "demote_atomics": GoldenCase(bump, [ndarray("x", qd.f32, 1)]),
    "random_streams": CASES["jitter"],
    "prune_args": GoldenCase(drift, [dataclass_param("b", Bodies, [ndarray("pos", qd.f32, 1), ndarray("mass", qd.f32, 1),
                                     ndarray("vel", qd.f32, 1), scalar("steps", qd.i32)]), scalar("dt", qd.f32)]),
})  # fmt: skip
