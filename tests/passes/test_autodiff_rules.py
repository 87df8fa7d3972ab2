"""Reverse mode (`kernel.grad`, passes/autodiff): the rules Quadrants users rely on, one test each.

Expected gradients are worked out by hand in each test's comment (the chain rule on the kernel's formula) and
computed with numpy from the same inputs; tests/passes/test_autodiff_property.py checks the derivative table
against central differences.
"""

from __future__ import annotations

import numpy as np
import pytest

import quadrants as qd


def test_load_adds_atomically_into_the_grad_and_gradients_accumulate() -> None:
    x = qd.field(qd.f32, shape=(), needs_grad=True)
    loss = qd.field(qd.f32, shape=(), needs_grad=True)

    @qd.kernel
    def k() -> None:
        for i in range(100):  # every iteration reads x[None]: d loss / dx = sum_i 2 x = 200 x
            loss[None] += x[None] * x[None]

    x[None] = 1.5
    k()
    loss.grad[None] = 1.0
    k.grad()
    assert x.grad[None] == pytest.approx(300.0)
    k.grad()  # gradients accumulate; `kernel.grad` clears nothing
    assert x.grad[None] == pytest.approx(600.0)
    assert loss.grad[None] == 1.0  # `+=` leaves the output's gradient alone


def test_store_consumes_the_output_gradient() -> None:
    x = qd.field(qd.f64, shape=3, needs_grad=True)
    y = qd.field(qd.f64, shape=3, needs_grad=True)

    @qd.kernel
    def k() -> None:
        for i in x:
            y[i] = 3.0 * x[i]  # x_bar += 3 y_bar, then y_bar = 0

    k()
    y.grad.from_numpy(np.array([1.0, 2.0, 4.0]))
    k.grad()
    np.testing.assert_allclose(x.grad.to_numpy(), [3.0, 6.0, 12.0])
    np.testing.assert_allclose(y.grad.to_numpy(), [0.0, 0.0, 0.0])


def test_subtracting_and_non_differentiable_stores_are_replayed() -> None:
    x = qd.field(qd.f32, shape=4, needs_grad=True)
    y = qd.field(qd.f32, shape=4, needs_grad=True)
    count = qd.field(qd.i32, shape=4)

    @qd.kernel
    def k() -> None:
        for i in x:
            count[i] = i * 10  # no gradient: the adjoint replays it
            y[i] -= x[i] * x[i]  # x_bar -= 2 x y_bar

    x.from_numpy(np.arange(4, dtype=np.float32))
    k()
    count.fill(-1)
    y.grad.fill(1.0)
    k.grad()
    np.testing.assert_allclose(x.grad.to_numpy(), -2.0 * np.arange(4))
    np.testing.assert_array_equal(count.to_numpy(), [0, 10, 20, 30])
    np.testing.assert_allclose(y.grad.to_numpy(), np.ones(4))


def test_runtime_if_locals_and_a_value_defined_in_a_branch() -> None:
    x = qd.field(qd.f32, shape=6, needs_grad=True)
    loss = qd.field(qd.f32, shape=(), needs_grad=True)

    @qd.kernel
    def k() -> None:
        for i in x:
            t = x[i] * 2.0
            if t > 1.0:
                s = qd.sin(t)  # defined in the branch, needed by the sweep's mirrored branch
                t = s * s
            else:
                t = -t
            loss[None] += t

    xs = np.linspace(0.0, 1.5, 6).astype(np.float32)
    x.from_numpy(xs)
    k()
    loss.grad[None] = 1.0
    k.grad()
    t = 2.0 * xs.astype(np.float64)  # t > 1: d/dx sin(2x)^2 = 4 sin(2x) cos(2x); else d/dx (-2x) = -2
    want = np.where(t > 1.0, 4.0 * np.sin(t) * np.cos(t), -2.0)
    np.testing.assert_allclose(x.grad.to_numpy(), want, rtol=1e-5)


def test_top_level_loops_run_in_reverse_order() -> None:
    x = qd.field(qd.f32, shape=4, needs_grad=True)
    y = qd.field(qd.f32, shape=4, needs_grad=True)
    loss = qd.field(qd.f32, shape=(), needs_grad=True)

    @qd.kernel
    def k() -> None:
        for i in x:
            y[i] = 2.0 * x[i]
        for i in y:
            loss[None] += y[i] * y[i]  # loss = sum 4 x^2: x_bar = 8 x, only if the second loop goes first

    x.from_numpy(np.arange(4, dtype=np.float32))
    k()
    loss.grad[None] = 1.0
    k.grad()
    np.testing.assert_allclose(x.grad.to_numpy(), 8.0 * np.arange(4))


def test_static_loops_funcs_vectors_and_matrices() -> None:
    v = qd.Vector.field(3, qd.f64, shape=2, needs_grad=True)
    m = qd.Matrix.field(3, 3, qd.f64, shape=(), needs_grad=True)
    loss = qd.field(qd.f64, shape=(), needs_grad=True)

    @qd.func
    def sq(a):
        return a * a

    @qd.kernel
    def k() -> None:
        for i in v:
            w = m[None] @ v[i]
            for j in qd.static(range(3)):
                loss[None] += sq(w[j])  # loss = sum_i |M v_i|^2

    rng = np.random.default_rng(1)
    vs, ms = rng.normal(size=(2, 3)), rng.normal(size=(3, 3))
    v.from_numpy(vs)
    m.from_numpy(ms)
    k()
    loss.grad[None] = 1.0
    k.grad()
    w = vs @ ms.T  # d/dv_i = 2 M^T M v_i, d/dM = 2 sum_i (M v_i) v_i^T
    np.testing.assert_allclose(v.grad.to_numpy(), 2.0 * w @ ms, rtol=1e-10)
    np.testing.assert_allclose(m.grad.to_numpy(), 2.0 * w.T @ vs, rtol=1e-10)


def test_ndarray_arguments_and_a_serial_kernel() -> None:
    a = qd.ndarray(qd.f32, 3, needs_grad=True)
    b = qd.ndarray(qd.f32, 3)  # no grad: read, not differentiated
    out = qd.ndarray(qd.f32, (), needs_grad=True)

    @qd.kernel
    def k(a: qd.types.ndarray(), b: qd.types.ndarray(), out: qd.types.ndarray()) -> None:
        out[None] = a[0] * b[0] + a[1] * a[2]  # a kernel without loops: one serial body

    a.from_numpy(np.array([1.0, 2.0, 3.0], np.float32))
    b.from_numpy(np.array([5.0, 6.0, 7.0], np.float32))
    k(a, b, out)
    out.grad.fill(2.0)
    k.grad(a, b, out)
    np.testing.assert_allclose(a.grad.to_numpy(), [10.0, 6.0, 4.0])  # 2 * (b0, a2, a1)
    assert out.grad.to_numpy() == 0.0


def test_data_oriented_kernel_grad() -> None:
    @qd.data_oriented
    class Sim:
        def __init__(self) -> None:
            self.x = qd.field(qd.f32, shape=3, needs_grad=True)
            self.loss = qd.field(qd.f32, shape=(), needs_grad=True)

        @qd.kernel
        def step(self, scale: qd.f32) -> None:
            for i in self.x:
                self.loss[None] += scale * qd.exp(self.x[i])

    sim = Sim()
    sim.x.from_numpy(np.array([0.0, 1.0, 2.0], np.float32))
    sim.step(0.5)
    sim.loss.grad[None] = 1.0
    sim.step.grad(0.5)
    np.testing.assert_allclose(sim.x.grad.to_numpy(), 0.5 * np.exp([0.0, 1.0, 2.0]), rtol=1e-6)


def test_zero_gradient_ops_and_int_casts() -> None:
    x = qd.field(qd.f32, shape=(), needs_grad=True)
    loss = qd.field(qd.f32, shape=(), needs_grad=True)

    @qd.kernel
    def k() -> None:
        loss[None] = qd.floor(x[None]) + qd.cast(qd.cast(x[None], qd.i32), qd.f32) + x[None] % 1.0 + x[None]

    x[None] = 2.5
    k()
    loss.grad[None] = 1.0
    k.grad()
    assert x.grad[None] == 2.0  # floor and int casts have none; x % 1.0 = x - floor(x) has 1 (as in 1.3.3)


def test_the_adjoint_text_and_key_say_reverse() -> None:
    from quadrants.driver.build import build_ir_text

    x = qd.field(qd.f32, shape=2, needs_grad=True)

    @qd.kernel
    def k() -> None:
        for i in x:
            x[i] = x[i] * 2.0

    spec = k.specialize((), {}, qd.cfg)
    config = qd.cfg
    _, primal = build_ir_text(k.source, "k", spec.specs, (), config)
    _, adjoint = build_ir_text(k.source, "k", spec.specs, (), config, "reverse")
    assert primal.startswith("kernel k()") and adjoint.startswith("kernel k [reverse]()")
    assert k.grad.request(spec, config).signature_text()[0].endswith(";autodiff=reverse")
    assert not k.request(spec, config).signature_text()[0].endswith("reverse")


# ---- errors at file:line:col ---------------------------------------------------------------------------


def _fails(kernel: object, pattern: str, line_text: str) -> None:
    with pytest.raises(qd.QuadrantsCompilationError) as e:
        kernel.grad()  # type: ignore[attr-defined]
    text = str(e.value)
    assert pattern in text and "test_autodiff_rules.py" in text and line_text in text, text


def test_mixed_top_level_is_refused() -> None:
    x = qd.field(qd.f32, shape=2, needs_grad=True)

    @qd.kernel
    def k() -> None:
        x[0] = 1.0
        for i in x:
            x[i] += 1.0

    _fails(k, "Mixed usage of for-loops and statements without looping", "x[0] = 1.0")


def test_inner_runtime_loop_while_break_continue_are_refused() -> None:
    x = qd.field(qd.f32, shape=2, needs_grad=True)

    @qd.kernel
    def inner() -> None:
        for i in x:
            for j in range(i):
                x[i] += 1.0

    @qd.kernel
    def loop_while() -> None:
        for i in x:
            while x[i] < 1.0:
                x[i] += 1.0

    @qd.kernel
    def loop_break() -> None:
        for i in x:
            for j in qd.static(range(2)):
                if x[i] > 1.0:
                    break

    _fails(inner, "Cannot use non static range in Backwards mode", "for j in range(i):")
    _fails(loop_while, "WhileStmt is not supported in AutoDiff.", "while x[i] < 1.0:")
    with pytest.raises(qd.QuadrantsCompilationError):
        loop_break.grad()


def test_an_inner_ndrange_loop_that_carries_no_local_needs_no_adstack() -> None:
    """Without the adstack an inner `qd.ndrange` loop is differentiated where no local of the enclosing code
    crosses its iterations (as Quadrants takes it); one that carries a local is refused (Quadrants 1.3.3 gives a
    wrong gradient there: 0.00195 for d(x^8)/dx at 0.5), and a `range()` loop is refused as there."""
    m = qd.Matrix.field(2, 2, qd.f32, 3, needs_grad=True)
    n = qd.Matrix.field(2, 2, qd.f32, 3, needs_grad=True)
    loss = qd.field(qd.f32, (), needs_grad=True)

    @qd.kernel
    def scaled() -> None:
        for i in range(3):
            for j, k in qd.ndrange(2, 2):
                m[i][j, k] = (j + 1) * (k + 1) * n[i][j, k] * n[i][j, k]
                loss[None] += m[i][j, k]

    n.from_numpy(np.arange(12, dtype=np.float32).reshape(3, 2, 2))
    scaled()
    loss.grad[None] = 1.0
    scaled.grad()
    jk = np.array([[1, 2], [2, 4]], np.float32)
    np.testing.assert_allclose(n.grad.to_numpy(), 2 * jk * n.to_numpy(), rtol=1e-6)

    x = qd.field(qd.f32, 2, needs_grad=True)
    y = qd.field(qd.f32, (), needs_grad=True)

    @qd.kernel
    def carried() -> None:
        for i in x:
            v = x[i]
            for _ in qd.ndrange(3):
                v = v * v
            y[None] += v

    _fails(carried, "Cannot use non static range in Backwards mode", "for _ in qd.ndrange(3):")


def test_atomic_max_on_differentiable_data_is_refused() -> None:
    x = qd.field(qd.f32, shape=2, needs_grad=True)
    y = qd.field(qd.f32, shape=(), needs_grad=True)

    @qd.kernel
    def k() -> None:
        for i in x:
            qd.atomic_max(y[None], x[i])

    _fails(k, "atomic max on data that has a gradient", "qd.atomic_max(y[None], x[i])")


def test_a_kernel_that_uses_a_grad_itself_is_not_differentiated() -> None:
    a = qd.ndarray(qd.f32, 4, needs_grad=True)
    b = qd.ndarray(qd.f32, (), needs_grad=True)

    @qd.kernel
    def k(x: qd.types.ndarray(), b: qd.types.ndarray()) -> None:
        for i in x:
            b[None] += x.grad[i]

    a.grad.fill(2.0)
    k(a, b)  # reading a grad in an ordinary kernel is fine
    assert b.to_numpy() == 8.0
    with pytest.raises(RuntimeError, match=r"test_autodiff_rules.py:\d+:\d+: Cannot automatically differentiate "
                       "through a grad tensor"):  # fmt: skip
        k.grad(a, b)


# ---- dynamic inner loops (ad_stack_experimental_enabled) -----------------------------------------------


def test_independent_inner_loops_with_ad_stack_experimental_enabled() -> None:
    from tests.conftest import qd_init

    qd_init(log_level="warn", ad_stack_experimental_enabled=True)
    a = qd.field(qd.f64, shape=5, needs_grad=True)
    n = qd.field(qd.i32, shape=5)
    loss = qd.field(qd.f64, shape=(), needs_grad=True)

    @qd.kernel
    def k() -> None:
        for i in a:
            for j in range(n[i]):  # no local carried between iterations: each iteration is its own adjoint
                t = a[i] * j
                if t > 2.0:
                    u = qd.sin(t)  # a branch value the sweep needs, inside the loop
                    loss[None] += u * u
                else:
                    loss[None] += t

    xs = np.linspace(0.5, 2.5, 5)
    a.from_numpy(xs)
    n.from_numpy(np.array([1, 2, 3, 4, 5], np.int32))
    k()
    loss.grad[None] = 1.0
    k.grad()
    want = np.zeros(5)  # d/da of sum_j [t > 2: sin(a j)^2 else a j] = sum_j j (2 sin(t) cos(t) if t > 2 else 1)
    for i in range(5):
        for j in range(i + 1):
            t = xs[i] * j
            want[i] += j * (2.0 * np.sin(t) * np.cos(t) if t > 2.0 else 1.0)
    np.testing.assert_allclose(a.grad.to_numpy(), want, rtol=1e-12)


def test_an_inner_loop_that_only_accumulates_into_a_local() -> None:
    from tests.conftest import qd_init

    qd_init(log_level="warn", ad_stack_experimental_enabled=True)
    a = qd.field(qd.f64, shape=4, needs_grad=True)
    p = qd.field(qd.f64, shape=4, needs_grad=True)

    @qd.kernel
    def k() -> None:
        for i in p:
            s = 0.0
            for j in range(i + 1):
                s += a[j] * a[j]  # s's value is needed by no iteration: no adstack
                s -= 0.5 * a[j]
            p[i] = s * s

    xs = np.array([0.5, -1.0, 2.0, 1.5])
    a.from_numpy(xs)
    k()
    p.grad.fill(1.0)
    k.grad()
    want = np.zeros(4)  # p_i = s_i^2, s_i = sum_{j<=i} (a_j^2 - a_j / 2): d p_i / d a_j = 2 s_i (2 a_j - 1/2)
    for i in range(4):
        s = sum(xs[j] ** 2 - 0.5 * xs[j] for j in range(i + 1))
        for j in range(i + 1):
            want[j] += 2.0 * s * (2.0 * xs[j] - 0.5)
    np.testing.assert_allclose(a.grad.to_numpy(), want, rtol=1e-12)
    np.testing.assert_allclose(p.grad.to_numpy(), np.zeros(4))


def test_random_numbers_are_refused() -> None:
    x = qd.field(qd.f32, shape=(), needs_grad=True)
    loss = qd.field(qd.f32, shape=(), needs_grad=True)

    @qd.kernel
    def k() -> None:
        loss[None] = x[None] * qd.random()

    with pytest.raises(RuntimeError, match="RandStmt not supported"):
        k.grad()


def test_a_needs_grad_false_parameter_gets_no_gradient() -> None:
    x = qd.ndarray(qd.f32, 3, needs_grad=True)
    y = qd.ndarray(qd.f32, 3, needs_grad=True)

    @qd.kernel
    def k(x: qd.types.ndarray(needs_grad=False), y: qd.types.ndarray()) -> None:
        for i in x:
            y[i] = x[i] * y[i]

    x.fill(2.0)
    y.fill(3.0)
    k(x, y)
    y.grad.fill(1.0)
    k.grad(x, y)
    np.testing.assert_allclose(x.grad.to_numpy(), np.zeros(3))  # the parameter says: no gradient


# ---- cross-iteration read-after-write in a top-level loop (passes/autodiff/cross_iter.py) ---------------


def test_cross_iteration_read_after_write_in_a_top_level_loop_is_refused_at_the_load() -> None:
    x = qd.field(qd.f32, shape=(), needs_grad=True)
    out = qd.field(qd.f32, shape=(4, 2), needs_grad=True)

    @qd.kernel
    def chained() -> None:
        for i in range(1, 4):
            out[i, 0] = out[i - 1, 0] + x[None]  # iteration i reads what iteration i - 1 wrote

    @qd.kernel
    def allowed() -> None:
        for i in range(4):
            out[i, 1] = x[None] * 3.0
            out[i, 0] = out[i, 1] * 2.0  # the same i, a sibling component: no chain between iterations
            out[i, 1] = out[i, 1] + out[3, 0] * 0.0  # out[3, 0]'s index does not depend on i

    with pytest.raises(RuntimeError) as e:  # Quadrants' error type and words (passes/autodiff/cross_iter.py)
        chained.grad()
    text = str(e.value)
    assert "Cross-iteration read-after-write" in text and "test_autodiff_rules.py" in text, text
    x[None] = 1.0
    allowed()
    out.grad.fill(0.0)
    for i in range(4):
        out.grad[i, 0] = 1.0
    allowed.grad()
    assert x.grad[None] == pytest.approx(4 * 6.0)
