"""Gradient storage: `.grad` companions of fields and ndarrays, in kernels and in Python scope, `lazy_grad`,
`clear_all_gradients`, and Quadrants' error for non-real dtypes."""

from __future__ import annotations

import numpy as np
import pytest

import quadrants as qd


def test_field_grad_in_kernel_and_python() -> None:
    x = qd.field(qd.f32, shape=4, needs_grad=True)
    v = qd.Vector.field(3, qd.f64, shape=2, needs_grad=True)
    m = qd.Matrix.field(2, 2, qd.f32, shape=(), needs_grad=True)

    @qd.kernel
    def k() -> None:
        for i in x:
            x.grad[i] = x[i] * 2.0 + 1.0
        for j in v:
            v.grad[j] = v[j] + qd.Vector([1.0, 2.0, 3.0])
        m.grad[None] = m[None] * 3.0

    x.from_numpy(np.arange(4, dtype=np.float32))
    v.fill(1.0)
    m.from_numpy(np.eye(2, dtype=np.float32))
    k()
    np.testing.assert_allclose(x.grad.to_numpy(), np.arange(4) * 2.0 + 1.0)
    np.testing.assert_allclose(v.grad.to_numpy(), [[2.0, 3.0, 4.0]] * 2)
    np.testing.assert_allclose(m.grad.to_numpy(), np.eye(2) * 3.0)
    x.grad.from_numpy(np.full(4, 5.0, dtype=np.float32))
    assert x.grad[2] == 5.0


def test_ndarray_grad_is_a_hidden_argument() -> None:
    a = qd.ndarray(qd.f32, 4, needs_grad=True)
    b = qd.Vector.ndarray(3, qd.f64, 2, needs_grad=True)

    @qd.kernel
    def k(a: qd.types.ndarray(), b: qd.types.ndarray()) -> None:
        for i in a:
            a.grad[i] += a[i] + i
        for j in b:
            b.grad[j] = b[j] * 2.0 + 1.0

    a.from_numpy(np.arange(4, dtype=np.float32))
    k(a, b)
    k(a, b)  # the fast path passes the grad too
    np.testing.assert_allclose(a.grad.to_numpy(), 2 * (np.arange(4) * 2.0))
    np.testing.assert_allclose(b.grad.to_numpy(), np.ones((2, 3)))


def test_ndarray_without_grad_is_refused_at_its_use() -> None:
    c = qd.ndarray(qd.f32, 4)

    @qd.kernel
    def k(a: qd.types.ndarray()) -> None:
        for i in a:
            a.grad[i] = 1.0

    with pytest.raises(qd.QuadrantsCompilationError, match=r"(?s)test_grad_storage.py.*needs_grad=True"):
        k(c)


def test_lazy_grad_and_clear_all_gradients() -> None:
    x = qd.field(qd.f32, shape=3, needs_grad=True)
    y = qd.Vector.field(2, qd.f32, shape=3)
    n = qd.field(qd.i32, shape=3)
    qd.root.lazy_grad()
    assert y.grad.shape == (3,) and y.grad.to_numpy().shape == (3, 2)
    assert not hasattr(n, "grad")  # integers have no gradient
    assert not hasattr(x.grad, "grad")  # a companion gets none of its own
    x.grad.fill(2.0)
    y.grad.fill(3.0)
    qd.ad.clear_all_gradients()
    assert not x.grad.to_numpy().any() and not y.grad.to_numpy().any()


def test_ndarray_grads_are_not_cleared() -> None:
    a = qd.ndarray(qd.f32, 2, needs_grad=True)
    a.grad.fill(1.0)
    qd.ad.clear_all_gradients()
    np.testing.assert_allclose(a.grad.to_numpy(), [1.0, 1.0])  # as in Quadrants: fields only


def test_struct_field_members_have_grads() -> None:
    s = qd.Struct.field({"a": qd.f32, "b": qd.math.vec2}, shape=2, needs_grad=True)

    @qd.kernel
    def k() -> None:
        for i in s:
            s.a.grad[i] = 1.0 + i
            s.b.grad[i] = qd.Vector([2.0, 3.0])

    k()
    np.testing.assert_allclose(s.a.grad.to_numpy(), [1.0, 2.0])
    np.testing.assert_allclose(s.grad.b.to_numpy(), [[2.0, 3.0]] * 2)


@pytest.mark.parametrize("dtype", [qd.i32, qd.u8])
def test_non_real_dtype_is_refused(dtype: object) -> None:
    with pytest.raises(qd.QuadrantsRuntimeError, match="is not supported for field with `needs_grad=True`"):
        qd.field(dtype, shape=3, needs_grad=True)
    with pytest.raises(qd.QuadrantsRuntimeError, match="is not supported for field with"):
        qd.Vector.field(2, dtype, shape=3, needs_dual=True)
    for needs in ({"needs_grad": True}, {"needs_dual": True}):  # any integer member of a struct field refuses it
        with pytest.raises(qd.QuadrantsRuntimeError, match=f"{dtype} is not supported for field with"):
            qd.Struct.field({"v": qd.types.vector(3, qd.f32), "n": qd.types.vector(2, dtype)}, shape=2, **needs)
    s = qd.Struct.field({"v": qd.types.vector(3, qd.f32), "m": qd.f64}, shape=2, needs_grad=True)
    assert s.grad.m.shape == (2,)


def test_non_real_ndarray_is_refused() -> None:
    with pytest.raises(qd.QuadrantsRuntimeError, match="i32 is not supported for ndarray with `needs_grad=True`"):
        qd.ndarray(qd.i32, shape=3, needs_grad=True)


@pytest.mark.parametrize("backend", [qd.Backend.NDARRAY, qd.Backend.FIELD])
def test_tensor_with_needs_grad(backend: object) -> None:
    t = qd.tensor(qd.f32, (3,), backend=backend, needs_grad=True)

    @qd.kernel
    def k(t: qd.Tensor) -> None:
        for i in range(3):
            t.grad[i] = 2.0 * i

    k(t)
    np.testing.assert_allclose(t.grad.to_numpy(), [0.0, 2.0, 4.0])


def test_a_kernel_that_reads_no_grad_specializes_as_without_grads() -> None:
    """Only an adjoint, or a kernel whose source reads a `.grad`, takes ndarrays' grads as hidden arguments: a
    plain kernel given a needs_grad ndarray has the signature a manifest writes (Genesis' precompiled start missed
    7 kernels when every grad was passed)."""

    @qd.kernel
    def k(a: qd.types.NDArray[qd.f32, 1]):
        for i in range(a.shape[0]):
            a[i] += 1.0

    with_grad, plain = qd.ndarray(qd.f32, 4, needs_grad=True), qd.ndarray(qd.f32, 4)
    k(with_grad)
    k(plain)
    assert len(k._launchers) == 1
    assert with_grad.to_numpy().tolist() == [1.0] * 4 and with_grad.grad.to_numpy().tolist() == [0.0] * 4
