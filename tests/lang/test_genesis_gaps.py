"""Constructs of Genesis' non-rigid solvers that real Quadrants accepts (issue 27, gaps 2-9), each as a small
program: every one was a compile error or a wrong result here before. Expected values are worked out in the
test from plain Python/numpy (and agree with Quadrants 1.3.3, where each program was run)."""

from __future__ import annotations

import enum

import numpy as np
import pytest

import quadrants as qd
from quadrants.errors import QuadrantsCompilationError

# ---- gap 3: a nested class read through `self` -------------------------------------------------------------


@qd.data_oriented
class _Materials:
    class MATERIAL(enum.IntEnum):  # Genesis' PBD solver: `self.MATERIAL.CLOTH`
        CLOTH = 0
        ELASTIC = 3

    def __init__(self) -> None:
        self.kind = qd.field(qd.i32, (4,))

    @qd.kernel
    def tag(self):
        for i in range(4):
            if i % 2 == 0:
                self.kind[i] = self.MATERIAL.ELASTIC
            else:
                self.kind[i] = self.MATERIAL.CLOTH + 5


def test_a_nested_enum_class_read_through_self_is_a_compile_time_value() -> None:
    m = _Materials()
    m.tag()
    e, c = int(_Materials.MATERIAL.ELASTIC), int(_Materials.MATERIAL.CLOTH)
    assert m.kind.to_numpy().tolist() == [e, c + 5, e, c + 5]


# ---- gap 4: numpy members and captured numpy arrays --------------------------------------------------------

_CAP = np.array([2, 3], dtype=np.int32)


@qd.data_oriented
class _Grid:
    def __init__(self, res: tuple[int, int]) -> None:
        self._grid_res = np.array(res, dtype=np.int32)  # Genesis' MPM solver
        self.x = qd.field(qd.i32, (5, 5))
        self.out = qd.field(qd.i32, ())

    @qd.kernel
    def number(self):
        for i, j in qd.ndrange(*self._grid_res):
            self.x[i, j] = i * self._grid_res[1] + j
        self.out[None] = _CAP[1] * 10 + _CAP[0]


def test_a_small_numpy_member_is_a_compile_time_value_guarded_by_its_elements() -> None:
    g = _Grid((3, 4))
    g.number()
    want = np.zeros((5, 5), np.int32)
    want[:3, :4] = np.arange(12).reshape(3, 4)
    assert (g.x.to_numpy() == want).all()
    assert g.out[None] == int(_CAP[1]) * 10 + int(_CAP[0])
    g._grid_res[:] = (2, 5)  # changed in place: the kernel compiles again for the new values
    g.x.fill(0)
    g.number()
    want = np.zeros((5, 5), np.int32)
    want[:2, :5] = np.arange(10).reshape(2, 5)
    assert (g.x.to_numpy() == want).all()


def test_a_numpy_member_with_a_runtime_index_is_refused() -> None:
    @qd.data_oriented
    class Table:
        def __init__(self) -> None:
            self.a = np.array([3.0, 4.0], dtype=np.float32)

        @qd.kernel
        def at(self, i: qd.i32) -> qd.f32:
            return self.a[i]

    with pytest.raises(QuadrantsCompilationError, match="only compile-time indices"):
        Table().at(1)
