"""Pickling ndarrays (`Ndarray.__reduce__`): a copy of the elements with dtype, shape and element shape, as in
Quadrants; and `dtype.to_string()`."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import quadrants as qd

ALL = [qd.f16, qd.f32, qd.f64, qd.i8, qd.i16, qd.i32, qd.i64, qd.u1, qd.u8, qd.u16, qd.u32, qd.u64]


@pytest.mark.parametrize("dtype", ALL, ids=str)
def test_scalar_ndarrays_round_trip(dtype) -> None:  # noqa: ANN001
    a = qd.ndarray(dtype, (2, 3))
    a[1, 2] = 1
    a[0, 0] = 1
    b = pickle.loads(pickle.dumps(a))
    assert b is not a and type(b) is type(a) and b.dtype is dtype and b.shape == (2, 3)
    np.testing.assert_array_equal(b.to_numpy(), a.to_numpy())
    assert dtype.to_string() == str(dtype)


def test_vector_and_matrix_ndarrays_keep_their_element_type_and_are_copies() -> None:
    m = qd.Matrix.ndarray(2, 3, qd.f32, shape=(4,))
    m[2] = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]
    v = qd.Vector.ndarray(3, qd.i32, shape=(2, 2))
    v[1, 0] = [7, 8, 9]
    m2, v2 = pickle.loads(pickle.dumps((m, v)))
    assert isinstance(m2, qd.MatrixNdarray) and m2.element_shape == (2, 3) and m2.shape == (4,)
    assert isinstance(v2, qd.VectorNdarray) and v2.element_shape == (3,) and v2.dtype is qd.i32
    np.testing.assert_array_equal(m2.to_numpy(), m.to_numpy())
    np.testing.assert_array_equal(v2.to_numpy(), v.to_numpy())
    m2[2] = [[0.0] * 3] * 2
    assert m[2][1, 2] == 6.0  # the copy owns its memory

    @qd.kernel
    def bump(x: qd.types.NDArray[qd.math.ivec3, 2]):
        for I in qd.grouped(x):
            x[I] += 1

    bump(v2)  # an unpickled ndarray is an ordinary kernel argument
    assert list(v2[1, 0]) == [8, 9, 10]


def test_a_damaged_pickle_is_refused_by_name() -> None:
    from quadrants.runtime.ndarray import _unpickle

    with pytest.raises(ValueError, match="version"):
        _unpickle({"version": 99})
    with pytest.raises(ValueError, match="Unknown dtype"):
        _unpickle({"version": 1, "dtype": "nope", "shape": (1,), "element_shape": (), "data": np.zeros(1)})
