"""More constructs of Genesis' solvers that real Quadrants accepts (issue 27, gaps 5-9 and 11), each a small
program that was a compile error here before. Expected values are worked out in the test from plain Python (and
agree with Quadrants 1.3.3, where each program was run)."""

from __future__ import annotations

import copy
import platform
import threading

import numpy as np
import pytest

import quadrants as qd
from quadrants.errors import QuadrantsCompilationError

# ---- gap 2: copy.copy / copy.deepcopy of a qd.func ----------------------------------------------------------


def _scaler(k: int):
    lock = threading.Lock()  # a local of the defining function that cannot be copied (the func's scope holds it)

    @qd.func
    def scale(x):
        return x * k

    assert not lock.locked()
    return scale


def test_a_func_can_be_copied_and_deep_copied_and_still_compiles() -> None:
    scale = _scaler(3)
    out = qd.field(qd.i32, (3,))

    @qd.kernel
    def first():
        out[0] = scale(2)

    first()  # parsed: the copies share the parsed source
    deep, shallow = copy.deepcopy(scale), copy.copy(scale)
    holder = copy.deepcopy({"update_stress": scale})  # what pydantic does with a model's attributes

    @qd.kernel
    def copies():
        out[1] = deep(4) + shallow(1)
        out[2] = holder["update_stress"](5)

    copies()
    assert out.to_numpy().tolist() == [6, 15, 15]


# ---- gap 5: an un-annotated func parameter given a vector is the func's own copy ---------------------------


@qd.func
def _bounce(vel, r):
    for i in qd.static(range(2)):
        vel[i] *= -r  # Genesis' boundary handling: changes the func's copy only
    return vel


def test_an_unannotated_vector_parameter_is_a_local_copy() -> None:
    out = qd.Vector.field(2, qd.f32, (2,))

    @qd.kernel
    def k(r: qd.f32):
        v = qd.Vector([1.0, 2.0])
        w = _bounce(v, r)
        out[0] = v
        out[1] = w

    k(0.5)
    assert out.to_numpy().tolist() == [[1.0, 2.0], [-0.5, -1.0]]


# ---- gap 6: a func called inside qd.static(...) runs as Python -------------------------------------------


@qd.func
def _square(n):
    return qd.ndrange(n, n)


@qd.data_oriented
class _Stencil:
    def __init__(self) -> None:
        self.x = qd.field(qd.i32, (3, 3))
        self.y = qd.field(qd.i32, (2, 2))

    @qd.func
    def stencil_range(self):  # Genesis' MPM solver
        return qd.ndrange(3, 3)

    @qd.kernel
    def number(self):
        for I in qd.static(qd.grouped(self.stencil_range())):
            self.x[I] = I[0] * 10 + I[1] + 1
        for i, j in qd.static(_square(2)):
            self.y[i, j] = i * 2 + j + 100


def test_a_func_called_inside_static_runs_as_python() -> None:
    s = _Stencil()
    s.number()
    assert s.x.to_numpy().tolist() == [[i * 10 + j + 1 for j in range(3)] for i in range(3)]
    assert s.y.to_numpy().tolist() == [[i * 2 + j + 100 for j in range(2)] for i in range(2)]


# ---- gap 7: qd.static(qd.grouped(...)) yields vectors ---------------------------------------------------------


def test_a_static_grouped_ndrange_yields_vectors() -> None:
    x = qd.field(qd.f32, (2, 2, 2))
    moved = qd.Vector.field(3, qd.i32, (8,))

    @qd.kernel
    def k(base: qd.types.vector(3, qd.i32)):
        n = 0
        for off in qd.static(qd.grouped(qd.ndrange(2, 2, 2))):
            x[off] = off.cast(qd.f32).sum() + 0.5 * off[0]  # a method, an index, a component
            moved[n] = base + off
            n += 1

    k(qd.Vector([10, 20, 30]))
    offsets = [(i, j, k_) for i in range(2) for j in range(2) for k_ in range(2)]
    want = np.zeros((2, 2, 2), np.float32)
    for o in offsets:
        want[o] = sum(o) + 0.5 * o[0]
    assert (x.to_numpy() == want).all()
    assert moved.to_numpy().tolist() == [[10 + i, 20 + j, 30 + k_] for i, j, k_ in offsets]
    assert [tuple(v.to_numpy()) for v in qd.grouped(qd.ndrange(2, 1))] == [(0, 0), (1, 0)]  # Python scope too


# ---- gap 8: a Python-scope ndarray passed on to a func's ndarray parameter ------------------------------------

_PLACEHOLDER = qd.ndarray(qd.f32, shape=())  # Genesis' array_class.PLACEHOLDER


@qd.func
def _solve(out: qd.types.ndarray(), out_bw: qd.types.ndarray(), backward: qd.template()):
    out[0] = 7.0
    if qd.static(backward):
        out_bw[None] = 1.0


@pytest.mark.parametrize("fastcache", [False, True])
def test_a_module_level_ndarray_can_be_passed_to_a_func_that_does_not_index_it(fastcache: bool) -> None:
    @qd.kernel(fastcache=fastcache)
    def k(a: qd.types.ndarray()):
        _solve(a, _PLACEHOLDER, False)

    a = qd.ndarray(qd.f32, shape=(2,))
    k(a)
    assert a.to_numpy().tolist() == [7.0, 0.0]


def test_indexing_a_module_level_ndarray_in_a_func_is_refused() -> None:
    @qd.kernel
    def k(a: qd.types.ndarray()):
        _solve(a, _PLACEHOLDER, True)

    with pytest.raises(QuadrantsCompilationError, match="captured from outside the kernel"):
        k(qd.ndarray(qd.f32, shape=(2,)))


# ---- gap 9: a slice next to a runtime index as an assignment target --------------------------------------------


def test_a_slice_next_to_a_runtime_index_can_be_assigned() -> None:
    out = qd.field(qd.f32, (3, 4))
    row = qd.field(qd.f32, (4,))

    @qd.kernel
    def k(n: qd.i32, r: qd.i32):
        m = qd.Matrix.zero(qd.f32, 3, 4)
        m[:, n] = qd.Vector([1.0, 2.0, 3.0])  # Genesis' SAP coupler: polygon_vertices[:, n] = v
        m[:, n] += qd.Vector([10.0, 10.0, 10.0])
        m[r, 1:] = qd.Vector([5.0, 6.0, 7.0])
        for i, j in qd.static(qd.ndrange(3, 4)):
            out[i, j] = m[i, j]
        for j in qd.static(range(4)):
            row[j] = m[r, j]

    k(2, 0)
    want = np.zeros((3, 4), np.float32)
    want[:, 2] = [11.0, 12.0, 13.0]
    want[0, 1:] = [5.0, 6.0, 7.0]
    assert (out.to_numpy() == want).all()
    assert row.to_numpy().tolist() == want[0].tolist()


# ---- gap 11 (test side): int(qd.cfg.arch) ----------------------------------------------------------------------


def test_int_of_the_arch_is_quadrants_number_for_it() -> None:
    host = 1 if platform.machine().lower() in ("aarch64", "arm64") else 0  # Quadrants' x64 / arm64
    assert int(qd.cpu) == host
    assert int(qd.cfg.arch) == {"cpu": host, "cuda": 4}[qd.cfg.arch.name]  # the session's backend
    assert int(qd.cuda) == 4
    with pytest.raises(TypeError, match="no number"):
        int(qd.opengl)


# ---- next layer (Genesis' MPM coupler, rigid render transforms): tuple and static-vector indices ----------------


def test_a_tuple_inside_an_index_is_flattened() -> None:
    grid = qd.field(qd.i32, (2, 3, 4, 2))

    @qd.kernel
    def k(f: qd.i32):
        for ii, jj, kk in qd.ndrange(3, 4, 2):
            I = (ii, jj)  # noqa: E741 - Genesis' `grid[f, I, i_b]`
            grid[f, I, kk] = ii * 100 + jj * 10 + kk

    k(1)
    want = np.zeros((2, 3, 4, 2), np.int32)
    for i in range(3):
        for j in range(4):
            for b in range(2):
                want[1, i, j, b] = i * 100 + j * 10 + b
    assert (grid.to_numpy() == want).all()


def test_a_matrix_indexed_by_a_static_grouped_vector() -> None:
    out = qd.field(qd.f32, (2, 2, 2))

    @qd.kernel
    def k(s: qd.f32):
        m = qd.Matrix([[1.0, 2.0], [3.0, 4.0]]) * s
        for J in qd.static(qd.grouped(qd.ndrange(2, 2))):
            m[J] += 0.5
            out[(1, *J)] = m[J]

    k(2.0)
    assert out.to_numpy()[1].tolist() == [[2.5, 4.5], [6.5, 8.5]]
