"""`@qd.ad.grad_replaced` / `@qd.ad.grad_for` / `@qd.ad.no_grad`, and `Tape(grad_check=...)`."""

from __future__ import annotations

import numpy as np
import pytest

import quadrants as qd


def _setup():  # type: ignore[no-untyped-def]
    x = qd.field(qd.f32, shape=8, needs_grad=True)
    total = qd.field(qd.f32, shape=(), needs_grad=True)
    x.from_numpy(np.arange(8, dtype=np.float32))

    @qd.kernel
    def scaled_sum(mul: qd.f32) -> None:
        for i in x:
            total[None] += x[i] * mul

    return x, total, scaled_sum


def test_a_tape_records_a_grad_replaced_function_once_and_runs_its_gradient() -> None:
    x, total, scaled_sum = _setup()
    calls = []

    def indirect(mul: float) -> None:  # the kernels a grad_replaced function calls are not recorded
        scaled_sum(mul)

    @qd.ad.grad_replaced
    def forward(mul: float) -> None:
        indirect(mul)
        indirect(mul)

    @qd.ad.grad_for(forward)
    def backward(mul: float) -> None:
        calls.append(mul)
        scaled_sum.grad(mul)

    with qd.ad.Tape(loss=total) as tape:
        forward(3.0)
    assert [f for f, _ in tape.calls] == [forward]
    assert calls == [3.0]
    assert total[None] == pytest.approx(2 * 3.0 * 28)
    np.testing.assert_allclose(x.grad.to_numpy(), 3.0)  # backward ran the adjoint once, not twice

    x.grad.fill(0)
    total.grad[None] = 1.0
    forward.grad(5.0)  # without a tape: the user's gradient function, directly
    np.testing.assert_allclose(x.grad.to_numpy(), 5.0)


def test_no_grad_functions_contribute_nothing() -> None:
    x, total, scaled_sum = _setup()

    @qd.ad.no_grad
    def untracked(mul: float) -> None:
        scaled_sum(mul)

    with qd.ad.Tape(loss=total):
        untracked(4.0)
        scaled_sum(2.0)
    np.testing.assert_allclose(x.grad.to_numpy(), 2.0)
    total.grad[None] = 1.0
    untracked.grad(4.0)
    np.testing.assert_allclose(x.grad.to_numpy(), 2.0)


def test_grad_for_refuses_a_kernel_or_an_undecorated_primal() -> None:
    _, _, scaled_sum = _setup()
    with pytest.raises(RuntimeError, match="must be a \\*\\*python\\*\\* function"):
        qd.ad.grad_for(scaled_sum)(lambda mul: None)

    def plain(mul: float) -> None:
        pass

    with pytest.raises(RuntimeError, match="must be decorated by qd.ad.grad_replaced"):
        qd.ad.grad_for(plain)(lambda mul: None)


def test_grad_check_passes_on_right_gradients_and_fails_on_wrong_ones() -> None:
    qd.init(arch=qd.cpu, default_fp=qd.f64, log_level="warn")
    x = qd.field(qd.f64, shape=(2, 2), needs_grad=True)
    v = qd.Vector.field(3, qd.f64, shape=2, needs_grad=True)
    loss = qd.field(qd.f64, shape=(), needs_grad=True)
    x.from_numpy(np.array([[0.1, 0.2], [0.3, 0.4]]))
    v.from_numpy(np.arange(6, dtype=np.float64).reshape(2, 3) * 0.1)

    @qd.kernel
    def f() -> None:
        for i, j in x:
            loss[None] += qd.cos(x[i, j]) * v[i][j]

    with qd.ad.Tape(loss, grad_check=[x, v]):
        f()

    @qd.ad.grad_replaced
    def g() -> None:
        f()

    @qd.ad.grad_for(g)
    def g_grad() -> None:  # a wrong gradient: twice the right one
        f.grad()
        f.grad()

    with pytest.raises(AssertionError, match="Grad check failed"):
        with qd.ad.Tape(loss, grad_check=[x]):
            g()
    np.testing.assert_allclose(x.to_numpy(), [[0.1, 0.2], [0.3, 0.4]])  # the state is restored


def test_grad_check_needs_an_f64_loss() -> None:
    x = qd.field(qd.f32, shape=2, needs_grad=True)
    loss = qd.field(qd.f32, shape=(), needs_grad=True)

    @qd.kernel
    def f() -> None:
        for i in x:
            loss[None] += x[i]

    with pytest.raises(AssertionError, match="Only f64"):
        with qd.ad.Tape(loss, grad_check=[x]):
            f()


def test_place_x_grad_of_a_field_without_needs_grad_then_grad_check() -> None:
    qd.init(arch=qd.cpu, default_fp=qd.f64, log_level="warn")
    x = qd.field(qd.f64)
    y = qd.field(qd.f64)
    other = qd.field(qd.f64)
    qd.root.place(x, x.grad, y, y.grad, other)  # `.grad` made on demand, placed where the program says

    @qd.kernel
    def f() -> None:
        for i in qd.grouped(x):
            y[i] = qd.exp(x[i]) * x[i]

    x[None] = 0.3
    with qd.ad.Tape(loss=y, grad_check=[x]):
        f()
    assert x.grad[None] == pytest.approx(np.exp(0.3) * 1.3)
    assert not hasattr(other, "grad")  # a companion nobody placed does not exist
