"""`qd.stop_grad(x)` in a kernel: loads of `x` in that block and the blocks nested in it give no gradient;
other loops, and the primal, are untouched. Reading `x.grad` of a field without one is a named error."""

from __future__ import annotations

import numpy as np
import pytest

import quadrants as qd


def test_stop_grad_is_scoped_to_the_block_it_is_called_in() -> None:
    n = 6
    x = qd.field(qd.f32, shape=n, needs_grad=True)
    w = qd.field(qd.f32, shape=n, needs_grad=True)
    loss = qd.field(qd.f32, shape=(), needs_grad=True)
    x.from_numpy(np.arange(n, dtype=np.float32))
    w.fill(2.0)

    @qd.kernel
    def f() -> None:
        for i in range(n):
            qd.stop_grad(x)
            if i % 2 == 0:  # nested: stopped too
                loss[None] += x[i] ** 2 * w[i]
        for i in range(n):  # another loop: x has its gradient here
            loss[None] += x[i] * 3.0

    with qd.ad.Tape(loss=loss):
        f()
    xs = np.arange(n, dtype=np.float32)
    assert loss[None] == pytest.approx(float(np.sum((xs**2 * 2.0)[::2]) + np.sum(xs * 3.0)))
    np.testing.assert_allclose(x.grad.to_numpy(), 3.0)  # only the second loop's
    np.testing.assert_allclose(w.grad.to_numpy(), np.where(np.arange(n) % 2 == 0, xs**2, 0.0))  # w not stopped


def test_stop_grad_takes_a_field() -> None:
    a = qd.ndarray(qd.f32, 2, needs_grad=True)

    @qd.kernel
    def f(a: qd.types.ndarray()) -> None:
        for i in a:
            qd.stop_grad(a)

    with pytest.raises(qd.QuadrantsSyntaxError, match="takes a field"):
        f(a)


def test_reading_the_grad_of_a_field_without_one_names_it() -> None:
    x = qd.field(qd.f32, shape=())
    y = qd.field(qd.f32, shape=(), needs_grad=True)

    @qd.kernel
    def f(x: qd.template()) -> None:
        y[None] = x.grad[None] * 2.0

    with pytest.raises(qd.QuadrantsCompilationError, match=r"Gradient x\.grad has not been placed, check whether "
                                                           r"`needs_grad=True`"):  # fmt: skip
        f(x)
