"""Plain Python functions and lambdas called with runtime values inside kernels are inlined like qd.funcs
(Quadrants runs them on its symbolic values); library functions keep the error."""

from __future__ import annotations

import math

import numpy as np
import pytest

import quadrants as qd
from quadrants.errors import QuadrantsSyntaxError


def _square_plus(x, k=1.0):  # type: ignore[no-untyped-def]
    return x * x + k


OPS = [lambda x: qd.sin(x) * x, lambda y: y**0.5 - 1 / y]


@pytest.mark.parametrize("which", [0, 1])
def test_lambdas_and_plain_functions_with_runtime_values(which: int) -> None:
    op = OPS[which]
    a = qd.ndarray(qd.f32, 3)
    out = qd.ndarray(qd.f32, 3)
    a.from_numpy(np.array([0.5, 1.0, 2.0], np.float32))

    @qd.kernel
    def k(a: qd.types.ndarray(), out: qd.types.ndarray()) -> None:
        for i in a:
            out[i] = op(a[i]) + _square_plus(a[i], k=2.0)

    k(a, out)
    ref = [math.sin(v) * v if which == 0 else v**0.5 - 1 / v for v in (0.5, 1.0, 2.0)]
    np.testing.assert_allclose(out.to_numpy(), [r + v * v + 2.0 for r, v in zip(ref, (0.5, 1.0, 2.0))], rtol=1e-6)


def test_a_lambda_is_differentiated_like_the_code_it_holds() -> None:
    x = qd.field(qd.f32, shape=2, needs_grad=True)
    y = qd.field(qd.f32, shape=(), needs_grad=True)
    f = lambda v: v * v * v  # noqa: E731
    x.from_numpy(np.array([1.0, 2.0], np.float32))

    @qd.kernel
    def k() -> None:
        for i in x:
            y[None] += f(x[i])

    with qd.ad.Tape(loss=y):
        k()
    np.testing.assert_allclose(x.grad.to_numpy(), [3.0, 12.0])


def test_a_library_function_with_runtime_values_is_still_refused() -> None:
    a = qd.ndarray(qd.f32, 2)

    @qd.kernel
    def k(a: qd.types.ndarray()) -> None:
        for i in a:
            a[i] = np.sin(a[i])

    with pytest.raises(QuadrantsSyntaxError, match="cannot call the Python function 'sin'"):
        k(a)


def test_calling_a_vector_indexes_it_and_block_local_is_a_hint() -> None:
    a = qd.field(qd.f32, shape=3)
    out = qd.field(qd.f32, shape=())

    @qd.kernel
    def k() -> None:
        qd.block_local(a)
        v = qd.Vector([1.0, 2.0, 3.0]) ** 2
        m = qd.Matrix([[1.0, 2.0], [3.0, 4.0]])
        out[None] = v(0) + v(2) + m(1, 0) + a[0]

    a.fill(0.5)
    k()
    assert out[None] == pytest.approx(1.0 + 9.0 + 3.0 + 0.5)
