"""`qd.Vector.tensor` / `qd.Matrix.tensor` of integers with needs_grad on the ndarray backend: refused by name."""

from __future__ import annotations

import pytest

import quadrants as qd


@pytest.mark.parametrize("make", [lambda: qd.Vector.tensor(3, qd.i32, shape=(2,), backend=qd.Backend.NDARRAY,
                                                           needs_grad=True),
                                  lambda: qd.Matrix.tensor(2, 2, qd.i32, shape=(3,), backend=qd.Backend.NDARRAY,
                                                           needs_grad=True)])  # fmt: skip
def test_integer_vector_tensors_have_no_gradient(make) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(qd.QuadrantsRuntimeError, match="needs_grad"):
        make()
    assert qd.Vector.tensor(3, qd.f32, shape=(2,), backend=qd.Backend.NDARRAY, needs_grad=True).grad is not None
