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
