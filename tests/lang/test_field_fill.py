"""`field.fill(v)` inside a kernel or `@qd.func` is a loop over the field at every launch (issue 27, gap 1): it
used to run once, while the kernel compiled, so later launches left the field as it was."""

from __future__ import annotations

import numpy as np
import pytest

import quadrants as qd
from quadrants.errors import QuadrantsCompilationError


def test_fill_in_a_kernel_runs_at_every_launch() -> None:
    x = qd.field(qd.f32, (4, 3))

    @qd.kernel
    def clear():
        x.fill(2.5)

    clear()
    assert (x.to_numpy() == 2.5).all()
    x[1, 2] = 9.0  # written between launches: the next launch fills it again
    clear()
    assert (x.to_numpy() == 2.5).all()


def test_fill_in_a_func_with_a_runtime_value_then_use() -> None:
    x = qd.field(qd.i32, (8,))
    out = qd.field(qd.i32, ())

    @qd.func
    def reset(v: qd.i32):
        x.fill(v)

    @qd.kernel
    def step(v: qd.i32):
        reset(v)
        for i in range(8):
            out[None] += x[i] * i

    step(3)
    assert x.to_numpy().tolist() == [3] * 8 and out[None] == 3 * 28
    x[5] = 100
    step(-1)
    assert x.to_numpy().tolist() == [-1] * 8 and out[None] == 3 * 28 - 28


def test_fill_of_vector_and_0d_fields() -> None:
    v = qd.Vector.field(3, qd.f32, (5,))
    m = qd.Matrix.field(2, 2, qd.i32, (2, 2))
    z = qd.field(qd.i32, ())

    @qd.kernel
    def fill(a: qd.f32):
        v.fill(a)  # a scalar fills every component
        m.fill(qd.Matrix([[1, 2], [3, 4]]))
        z.fill(7)

    v[2] = [9, 9, 9]
    m[0, 1] = [[0, 0], [0, 0]]
    fill(1.5)
    assert (v.to_numpy() == 1.5).all()
    assert (m.to_numpy() == np.array([[1, 2], [3, 4]])).all()
    assert z[None] == 7
    z[None] = 0
    fill(0.5)
    assert (v.to_numpy() == 0.5).all() and z[None] == 7


def test_fill_of_an_offset_field_covers_its_domain() -> None:
    x = qd.field(qd.f32, (3,), offset=(-1,))

    @qd.kernel
    def fill():
        x.fill(4.0)

    fill()
    assert x.to_numpy().tolist() == [4.0] * 3


def test_fill_of_a_struct_field_in_a_kernel_is_refused() -> None:
    s = qd.Struct.field({"a": qd.f32, "b": qd.i32}, shape=(3,))

    @qd.kernel
    def fill():
        s.fill(1)

    with pytest.raises(QuadrantsCompilationError, match="Python-scope only"):
        fill()
