"""Kernel-language constructs found in Genesis' kernels, checked against numpy (and Quadrants 1.3.3 when
written): each was a compile error or a wrong result here before."""

from __future__ import annotations

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
