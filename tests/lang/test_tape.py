"""`qd.ad.Tape`: records the kernels called in its block and runs their adjoints in reverse order on exit."""

from __future__ import annotations

import numpy as np
import pytest

import quadrants as qd


def test_tape_over_two_kernels_with_a_field_loss() -> None:
    x = qd.field(qd.f32, shape=3, needs_grad=True)
    y = qd.field(qd.f32, shape=3, needs_grad=True)
    loss = qd.field(qd.f32, shape=(), needs_grad=True)

    @qd.kernel
    def square() -> None:
        for i in x:
            y[i] = x[i] * x[i]

    @qd.kernel
    def total(scale: qd.f32) -> None:
        for i in y:
            loss[None] += scale * y[i]

    x.from_numpy(np.array([1.0, 2.0, 3.0], np.float32))
    x.grad.fill(7.0)  # cleared on entry (clear_gradients=True)
    loss[None] = 5.0  # zeroed on entry
    with qd.ad.Tape(loss=loss):
        square()
        total(scale=0.5)  # keyword arguments are recorded too
    assert loss[None] == pytest.approx(7.0)  # 0.5 * (1 + 4 + 9)
    np.testing.assert_allclose(x.grad.to_numpy(), [1.0, 2.0, 3.0])  # d/dx 0.5 x^2 = x
    assert loss.grad[None] == 1.0


def test_tape_with_an_ndarray_loss_and_kernel_arguments() -> None:
    a = qd.ndarray(qd.f32, 4, needs_grad=True)
    loss = qd.ndarray(qd.f32, (), needs_grad=True)

    @qd.kernel
    def k(a: qd.types.ndarray(), loss: qd.types.ndarray()) -> None:
        for i in a:
            loss[None] += qd.sin(a[i])

    a.from_numpy(np.linspace(0.0, 1.0, 4).astype(np.float32))
    with qd.ad.Tape(loss=loss):
        k(a, loss)
    np.testing.assert_allclose(a.grad.to_numpy(), np.cos(np.linspace(0.0, 1.0, 4)), rtol=1e-6)


def test_tape_refuses_a_loss_without_grad_and_a_second_entry() -> None:
    plain = qd.field(qd.f32, shape=())
    with pytest.raises(RuntimeError, match="Gradients of loss are not allocated"):
        with qd.ad.Tape(loss=plain):
            pass
    loss = qd.field(qd.f32, shape=(), needs_grad=True)
    tape = qd.ad.Tape(loss=loss)
    with tape:
        pass
    with pytest.raises(AssertionError, match="entered only once"):
        with tape:
            pass
