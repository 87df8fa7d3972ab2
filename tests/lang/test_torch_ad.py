"""Torch interop of autodiff: a tensor that requires grad passes its `.grad` to adjoints (created as zeros when
it has none), a one-element tensor can be a Tape's loss, and a kernel pair makes a `torch.autograd.Function`."""

from __future__ import annotations

import numpy as np
import pytest

import quadrants as qd

torch = pytest.importorskip("torch")


@qd.kernel
def _cube_sum(x: qd.types.ndarray(), y: qd.types.ndarray()) -> None:
    for i in x:
        y[0] += x[i] * x[i] * x[i]


def test_a_torch_loss_on_a_tape() -> None:
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    loss = torch.tensor([5.0], requires_grad=True)
    with qd.ad.Tape(loss=loss):
        _cube_sum(x, loss)
    assert loss.item() == pytest.approx(36.0)  # zeroed on entry
    np.testing.assert_allclose(x.grad.numpy(), [3.0, 12.0, 27.0])
    assert loss.grad.item() == 1.0


def test_tape_refuses_torch_losses_it_cannot_use() -> None:
    x = torch.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="must be a tensor only contains one element"):
        with qd.ad.Tape(loss=torch.ones(2, requires_grad=True)):
            pass
    with pytest.raises(RuntimeError, match="please set requires_grad=True"):
        with qd.ad.Tape(loss=torch.ones(1)):
            _cube_sum(x, torch.ones(1))


def test_kernels_as_a_torch_autograd_function() -> None:
    class Cube(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):  # type: ignore[no-untyped-def]
            y = torch.zeros(1, dtype=x.dtype, requires_grad=True)
            _cube_sum(x, y)
            ctx.save_for_backward(x, y)
            return y

        @staticmethod
        def backward(ctx, g):  # type: ignore[no-untyped-def]
            x, y = ctx.saved_tensors
            x.grad.fill_(0)  # made by the forward call (x requires grad)
            y.grad = g
            _cube_sum.grad(x, y)
            out = x.grad.clone()
            x.grad.zero_()  # torch accumulates what backward returns into x.grad itself
            return out

    x = torch.tensor([0.5, -1.0, 2.0], dtype=torch.float64, requires_grad=True)
    (Cube.apply(x) * 2.0).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 6.0 * x.detach().numpy() ** 2)


def test_a_needs_grad_false_parameter_passes_no_grad() -> None:
    @qd.kernel
    def k(x: qd.types.ndarray(needs_grad=False), y: qd.types.ndarray()) -> None:
        for i in x:
            y[0] += x[i] * 2.0

    x = torch.ones(3, requires_grad=True)
    y = torch.zeros(1, requires_grad=True)
    k(x, y)
    assert x.grad is not None and y.grad is not None  # made for every tensor that requires grad
    y.grad.fill_(1.0)
    k.grad(x, y)
    assert torch.all(x.grad == 0)  # but not passed to the adjoint
