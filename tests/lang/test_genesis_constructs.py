"""Kernel-language constructs found in Genesis' kernels, checked against numpy (and Quadrants 1.3.3 when
written): each was a compile error or a wrong result here before."""

from __future__ import annotations

import functools

import numpy as np

import quadrants as qd


def test_a_conditional_expression_of_tuples_is_a_vector_index() -> None:
    f = qd.field(qd.i32, (4, 4))
    f.from_numpy(np.arange(16, dtype=np.int32).reshape(4, 4) * 3)

    @qd.kernel
    def pair(a: qd.types.NDArray[qd.i32, 2], i: qd.i32, j: qd.i32) -> tuple[qd.i32, qd.i32, qd.i32]:
        t = (j, i) if i > j else (i, j)  # Genesis: collision_pair_idx[(i_gb, i_ga) if i_ga > i_gb else ...]
        return a[(j, i) if i > j else (i, j)], f[(j, i) if i > j else (i, j)], t[0] * 10 + t[1]

    a = np.arange(16, dtype=np.int32).reshape(4, 4)
    assert pair(a, 1, 3) == (7, 21, 13)
    assert pair(a, 3, 1) == (7, 21, 13)


def test_a_runtime_index_next_to_a_slice_picks_a_row_or_column() -> None:
    @qd.kernel
    def lines(k: qd.i32) -> tuple[qd.math.vec3, qd.math.vec2]:
        rot = qd.Matrix([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]])
        return rot[:, k] + rot[k, :] * 10, rot[k, 1:]  # Genesis: axis_0 = rot[:, axis_idx]

    m = np.arange(1, 10, dtype=np.float32).reshape(3, 3)
    for k in range(3):
        v, w = lines(k)
        np.testing.assert_array_equal(v.to_numpy(), m[:, k] + m[k, :] * 10)
        np.testing.assert_array_equal(w.to_numpy(), m[k, 1:])


def test_method_calls_on_runtime_vectors_keep_a_kernel_fastcache_pure() -> None:
    import warnings

    @qd.kernel(fastcache=True)
    def portal(v: qd.types.NDArray[qd.math.vec3, 1]) -> qd.math.vec3:
        # Genesis' mpr_portal_dir: an assignment's value was probed for qd.static() and its calls were taken
        # for compile-time calls of unknown Python functions, which turned fastcache off
        a = v[2] - v[0]
        b = v[1] - v[0]
        d = a.cross(b).normalized()
        return d

    v = qd.ndarray(qd.math.vec3, (3,))
    v.from_numpy(np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0]], np.float32))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = portal(v)
    assert not [w for w in caught if "PURE.VIOLATION" in str(w.message)]
    np.testing.assert_allclose(out.to_numpy(), [0, 0, -1])


def test_a_property_of_a_data_oriented_template_argument_is_evaluated_on_the_instance() -> None:
    """Genesis' inverse kinematics loops to `rigid_entity.n_qs`, a property of its data_oriented entity: Quadrants
    reads it on the instance at compile time (it was read on the class: a `property` object as a loop bound)."""

    @qd.data_oriented
    class Entity:
        def __init__(self, n: int) -> None:
            self._n = n
            self.x = qd.ndarray(qd.i32, (8,))

        @property
        def n(self) -> int:
            return self._n * 2

        @functools.cached_property
        def first(self) -> int:
            return self._n + 100

    @qd.kernel
    def fill(e: qd.template()):
        for _ in range(1):
            for i in range(e.n):
                e.x[i] = i + qd.static(e.n) + e.first

    a, b = Entity(3), Entity(2)
    fill(a)
    fill(b)
    assert a.x.to_numpy().tolist() == [109, 110, 111, 112, 113, 114, 0, 0]  # as real Quadrants 1.3.3 gives
    assert b.x.to_numpy().tolist() == [106, 107, 108, 109, 0, 0, 0, 0]
