"""Slices of local vectors and matrices as assignment targets (`T[:3, :3] = R`, `T[:3, 3] = t`), as Genesis
builds its 4x4 transforms; values checked against numpy (and, when written, Quadrants 1.3.3)."""

from __future__ import annotations

import numpy as np
import pytest

import quadrants as qd


def test_slices_assign_blocks_columns_rows_and_vector_ranges() -> None:
    @qd.kernel
    def build(out: qd.types.NDArray[qd.f32, 2], v_out: qd.types.NDArray[qd.f32, 1]):
        T = qd.Matrix.identity(qd.f32, 4)
        T[:3, :3] = qd.Matrix([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]])
        T[:3, 3] = qd.Vector([10.0, 11.0, 12.0])
        T[3, 1:3] = qd.Vector([13.0, 14.0])
        v = qd.Vector([1.0, 2.0, 3.0, 4.0])
        v[1:3] = qd.Vector([20.0, 30.0])
        v[2:] += qd.Vector([1.0, 1.0])
        T[3, 0] += v[1] + v[2]
        for i, j in qd.static(qd.ndrange(4, 4)):
            out[i, j] = T[i, j]
        for i in qd.static(range(4)):
            v_out[i] = v[i]

    out, v_out = np.zeros((4, 4), np.float32), np.zeros(4, np.float32)
    build(out, v_out)
    want = np.eye(4, dtype=np.float32)
    want[:3, :3] = np.arange(1, 10).reshape(3, 3)
    want[:3, 3] = [10, 11, 12]
    want[3, 1:3] = [13, 14]
    want[3, 0] = 51
    np.testing.assert_array_equal(out, want)
    np.testing.assert_array_equal(v_out, [1, 20, 31, 5])


def test_a_slice_target_takes_only_a_value_of_its_shape() -> None:
    @qd.kernel
    def bad() -> qd.f32:
        T = qd.Matrix.identity(qd.f32, 4)
        T[:3, 3] = qd.Vector([1.0, 2.0])
        return T[0, 3]

    with pytest.raises(qd.QuadrantsTypeError, match=r"cannot assign .\[Tensor \(2\) f32\]. to .\[Tensor \(3\) f32\]"):
        bad()
