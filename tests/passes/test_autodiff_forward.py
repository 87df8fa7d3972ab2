"""Forward mode (`qd.ad.FwdMode`, passes/autodiff/forward.py): tangents checked against central differences
in float64 and against closed forms, through locals, runtime `if`s, dynamic loops and `while`; the dual
kernel's IR says `[forward]`; unsupported atomics are refused at their line."""

from __future__ import annotations

import math

import numpy as np
import pytest

import quadrants as qd
from quadrants.errors import QuadrantsCompilationError


def _central_difference(run, x, seed, loss, eps=1e-6):  # type: ignore[no-untyped-def]
    """d loss / d x along `seed`, by rerunning `run` (which recomputes `loss` from `x`) at x +- eps * seed."""
    base = x.to_numpy()
    out = []
    for sign in (1.0, -1.0):
        x.from_numpy(base + sign * eps * seed)
        loss.fill(0)
        run()
        out.append(loss.to_numpy())
    x.from_numpy(base)
    return (out[0] - out[1]) / (2 * eps)


def test_forward_mode_matches_central_differences_through_locals_ifs_and_loops() -> None:
    qd.init(arch=qd.cpu, default_fp=qd.f64, log_level="warn")
    n = 6
    x = qd.field(qd.f64, shape=n, needs_dual=True)
    reps = qd.field(qd.i32, shape=n)
    y = qd.field(qd.f64, shape=n, needs_dual=True)

    @qd.kernel
    def k() -> None:
        for i in range(n):
            acc = qd.sin(x[i]) * x[i]
            for _ in range(reps[i]):  # a dynamic loop carrying `acc`: no adstack needed forward
                acc = acc * 0.5 + qd.exp(-x[i] * acc)
            if acc > 0.6:
                acc = qd.sqrt(acc) / (1.0 + x[i] * x[i])
            else:
                acc = qd.atan2(acc, x[i] + 2.0) - qd.cast(qd.cast(acc, qd.f32), qd.f64)
            j = 0
            while j < 2:
                acc += qd.tanh(acc) * x[i]
                j += 1
            y[i] = qd.max(acc, x[i] - 10.0) ** 1.5

    rng = np.random.default_rng(7)
    x.from_numpy(rng.uniform(0.2, 1.5, n))
    reps.from_numpy(np.arange(n, dtype=np.int32))
    seed = rng.uniform(-1.0, 1.0, n)
    with qd.ad.FwdMode(loss=y, param=x, seed=list(seed)):
        k()
    tangent = y.dual.to_numpy()
    expected = _central_difference(k, x, seed, y)
    np.testing.assert_allclose(tangent, expected, rtol=1e-5, atol=1e-8)
    assert np.all(x.dual.to_numpy() == 0)  # the seed is cleared on exit


def test_forward_mode_keeps_the_primal_effects_and_accumulates_with_atomics() -> None:
    x = qd.field(qd.f32, shape=5)
    loss = qd.field(qd.f32, shape=())
    qd.root.lazy_dual()
    x.from_numpy(np.arange(5, dtype=np.float32))

    @qd.kernel
    def k() -> None:
        for i in x:
            loss[None] += x[i] ** 2 - 3 * x[i]

    with qd.ad.FwdMode(loss=loss, param=x, seed=[1.0] * 5):
        k()
    assert loss[None] == pytest.approx(sum(i * i - 3 * i for i in range(5)))  # the primal ran
    assert loss.dual[None] == pytest.approx(sum(2 * i - 3 for i in range(5)))


def test_dual_kernel_is_its_own_compilation_and_says_forward() -> None:
    qd.init(arch=qd.cpu, offline_cache=False, log_level="warn")
    x = qd.field(qd.f32, shape=(), needs_dual=True)
    y = qd.field(qd.f32, shape=(), needs_dual=True)

    @qd.kernel
    def k() -> None:
        y[None] = qd.cos(x[None])

    x[None] = 0.5
    k()
    assert y.dual[None] == 0.0  # a call outside FwdMode runs the primal kernel: no tangent written
    with qd.ad.FwdMode(loss=y, param=x):  # a 0-D param: the seed defaults to 1
        k()
    assert y.dual[None] == pytest.approx(-math.sin(0.5))
    from quadrants.ir.printer import format_kernel
    from tests.conftest import kernel_ir

    text = format_kernel(kernel_ir(k.dual))
    assert text.startswith("kernel") and "[forward]" in text.splitlines()[0]
    assert "[forward]" not in format_kernel(kernel_ir(k)).splitlines()[0]


def test_forward_mode_refuses_atomic_max_on_data_with_a_dual() -> None:
    x = qd.field(qd.f32, shape=3, needs_dual=True)
    y = qd.field(qd.f32, shape=(), needs_dual=True)

    @qd.kernel
    def k() -> None:
        for i in x:
            qd.atomic_max(y[None], x[i])

    with pytest.raises(QuadrantsCompilationError, match="atomic max") as e:
        with qd.ad.FwdMode(loss=y, param=x, seed=[1.0, 0.0, 0.0]):
            k()
    assert "test_autodiff_forward.py" in str(e.value)


def test_fwd_mode_checks_its_arguments() -> None:
    x = qd.field(qd.f32, shape=3, needs_dual=True)
    y = qd.field(qd.f32, shape=(), needs_dual=True)
    with pytest.raises(RuntimeError, match="`seed` is not set"):
        with qd.ad.FwdMode(loss=y, param=x):
            pass
    with pytest.raises(AssertionError):
        with qd.ad.FwdMode(loss=y, param=x, seed=[1.0]):
            pass
    z = qd.field(qd.f32, shape=3)
    with pytest.raises(RuntimeError, match="has no dual"):
        with qd.ad.FwdMode(loss=y, param=z, seed=[1.0] * 3):
            pass


def test_the_gradient_of_float_mod_in_both_modes() -> None:
    """x % y = x - y floor(x / y): d/dx = 1, d/dy = -floor(x / y) (it was zero in reverse mode)."""
    qd.init(arch=qd.cpu, default_fp=qd.f64, log_level="warn")
    x = qd.field(qd.f64, shape=3, needs_grad=True, needs_dual=True)
    d = qd.field(qd.f64, shape=3, needs_grad=True, needs_dual=True)
    y = qd.field(qd.f64, shape=3, needs_grad=True, needs_dual=True)

    @qd.kernel
    def k() -> None:
        for i in x:
            y[i] = x[i] % d[i]

    xs, ds = np.array([5.5, -2.3, 7.1]), np.array([3.0, 2.0, -2.5])
    x.from_numpy(xs)
    d.from_numpy(ds)
    k()
    y.grad.fill(1.0)
    k.grad()
    np.testing.assert_allclose(x.grad.to_numpy(), 1.0)
    np.testing.assert_allclose(d.grad.to_numpy(), -np.floor(xs / ds))
    with qd.ad.FwdMode(loss=y, param=d, seed=[1.0, 1.0, 1.0]):
        k()
    np.testing.assert_allclose(y.dual.to_numpy(), -np.floor(xs / ds))


def test_forward_mode_refuses_a_real_function_fed_a_tangent() -> None:
    x = qd.field(qd.f32, shape=(), needs_dual=True)
    y = qd.field(qd.f32, shape=(), needs_dual=True)

    @qd.real_func
    def twice(v: qd.f32) -> qd.f32:
        return v * 2.0

    @qd.kernel
    def k() -> None:
        y[None] = twice(x[None])

    with pytest.raises(QuadrantsCompilationError, match="real_func call cannot be differentiated"):
        with qd.ad.FwdMode(loss=y, param=x):
            k()
