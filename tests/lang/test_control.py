"""Control flow, locals, loops and compile-time constructs, checked against plain Python/numpy."""

from __future__ import annotations

import numpy as np
import pytest

import quadrants as qd
from tests.conftest import qd_init

Nd = qd.types.NDArray


def test_if_elif_else_and_ternary() -> None:
    @qd.kernel
    def k(x: Nd[qd.i32, 1], out: Nd[qd.i32, 1]):
        for i in range(x.shape[0]):
            v = x[i]
            if v < 0:
                out[i] = -1
            elif v == 0:
                out[i] = 0
            else:
                out[i] = 1 if v < 10 else 2

    x = np.array([-5, 0, 3, 10, 99, -1], np.int32)
    out = np.zeros_like(x)
    k(x, out)
    np.testing.assert_array_equal(out, [-1, 0, 1, 2, 2, -1])


def test_while_break_continue_in_serial_loops() -> None:
    @qd.kernel
    def collatz(n: Nd[qd.i32, 1], steps: Nd[qd.i32, 1]):
        for i in range(n.shape[0]):
            x = n[i]
            c = 0
            while x != 1:
                if x % 2 == 0:
                    x = x // 2
                else:
                    x = 3 * x + 1
                c += 1
            steps[i] = c

    def py(x: int) -> int:
        c = 0
        while x != 1:
            x = x // 2 if x % 2 == 0 else 3 * x + 1
            c += 1
        return c

    n = np.arange(1, 200, dtype=np.int32)
    steps = np.zeros_like(n)
    collatz(n, steps)
    np.testing.assert_array_equal(steps, [py(int(v)) for v in n])


def test_nested_loops_with_break_and_continue() -> None:
    @qd.kernel
    def first_multiple(a: Nd[qd.i32, 2], out: Nd[qd.i32, 1], m: qd.i32):
        for i in range(a.shape[0]):
            out[i] = -1
            for j in range(a.shape[1]):
                if a[i, j] % m != 0:
                    continue
                out[i] = j
                break

    a = np.random.default_rng(0).integers(1, 50, (40, 30)).astype(np.int32)
    out = np.zeros(40, np.int32)
    first_multiple(a, out, 7)
    want = [next((j for j in range(30) if a[i, j] % 7 == 0), -1) for i in range(40)]
    np.testing.assert_array_equal(out, want)


def test_short_circuit_and_or_return_operands() -> None:
    @qd.kernel
    def k(x: qd.i32, y: qd.i32) -> tuple[qd.i32, qd.i32, qd.i32]:
        return x and y, x or y, not x

    for x, y in [(2, 3), (0, 3), (2, 0), (0, 0)]:
        assert k(x, y) == (x and y, x or y, int(not x))


def test_and_or_do_not_evaluate_the_right_side_when_decided() -> None:
    @qd.kernel
    def k(a: Nd[qd.i32, 1], flag: qd.i32) -> qd.i32:
        r = flag and qd.atomic_add(a[0], 1)
        s = flag or qd.atomic_add(a[1], 1)
        return r + s

    a = np.zeros(2, np.int32)
    k(a, 0)
    np.testing.assert_array_equal(a, [0, 1])
    k(a, 5)
    np.testing.assert_array_equal(a, [1, 1])


def test_chained_comparisons() -> None:
    @qd.kernel
    def k(a: qd.f32, b: qd.f32, c: qd.f32) -> qd.i32:
        return a < b < c

    assert k(1, 2, 3) == 1 and k(1, 3, 2) == 0 and k(3, 2, 1) == 0


def test_local_type_is_fixed_by_first_assignment() -> None:
    @qd.kernel
    def k(y: qd.f32) -> qd.f32:
        x = 1
        x = y
        return x

    assert k(2.7) == 2.0
    assert k(-2.7) == -2.0


def test_variables_are_block_scoped() -> None:
    @qd.kernel
    def k(c: qd.i32) -> qd.i32:
        if c > 0:
            z = 1
        return z  # noqa: F821

    with pytest.raises(qd.QuadrantsNameError, match='"z" is not defined'):
        k(1)


def test_ndrange_with_bounds_and_grouped() -> None:
    @qd.kernel
    def fill(a: Nd[qd.i32, 2]):
        for i, j in qd.ndrange((1, a.shape[0] - 1), (2, a.shape[1])):
            a[i, j] = i * 100 + j

    @qd.kernel
    def count_even(a: Nd[qd.i32, 2]) -> qd.i32:
        c = 0
        for I in qd.grouped(qd.ndrange(a.shape[0], a.shape[1])):
            if a[I] % 2 == 0:
                c += 1
        return c

    a = np.zeros((6, 5), np.int32)
    fill(a)
    want = np.zeros((6, 5), np.int32)
    for i in range(1, 5):
        for j in range(2, 5):
            want[i, j] = i * 100 + j
    np.testing.assert_array_equal(a, want)
    assert count_even(a) == int((a % 2 == 0).sum())


def test_loop_over_ndarray_index_space() -> None:
    @qd.kernel
    def k(a: Nd[qd.f32, 3]):
        for i, j, l in a:
            a[i, j, l] = i + 10 * j + 100 * l

    a = np.zeros((3, 4, 5), np.float32)
    k(a)
    i, j, l = np.indices(a.shape)
    np.testing.assert_array_equal(a, i + 10 * j + 100 * l)


def test_empty_and_reversed_ranges_run_no_iterations() -> None:
    @qd.kernel
    def k(a: Nd[qd.i32, 1], lo: qd.i32, hi: qd.i32):
        for i in range(lo, hi):
            a[0] += 1
        for i, j in qd.ndrange((lo, hi), (lo, hi)):
            a[1] += 1

    a = np.zeros(2, np.int32)
    k(a, 5, 3)
    np.testing.assert_array_equal(a, [0, 0])
    k(a, 2, 5)
    np.testing.assert_array_equal(a, [3, 9])


def test_static_if_and_static_for_unrolling() -> None:
    @qd.kernel
    def k(a: Nd[qd.f32, 1], mode: qd.template()):
        for i in range(a.shape[0]):
            if qd.static(mode == "square"):
                a[i] = a[i] * a[i]
            else:
                acc = 0.0
                for p in qd.static(range(4)):
                    acc += a[i] ** p
                a[i] = acc

    x = np.arange(5, dtype=np.float32)
    a = x.copy()
    k(a, "square")
    np.testing.assert_allclose(a, x * x)
    a = x.copy()
    k(a, "poly")
    np.testing.assert_allclose(a, 1 + x + x**2 + x**3)


def test_static_expressions_see_templates_and_globals() -> None:
    scale = 3

    @qd.kernel
    def k(n: qd.template()) -> qd.i32:
        s = 0
        for i in qd.static(range(n)):
            s += qd.static(i * scale)
        return s

    assert k(4) == 3 * (0 + 1 + 2 + 3)
    assert k(2) == 3


def test_template_specializes_by_value() -> None:
    @qd.kernel
    def k(n: qd.template(), x: qd.i32) -> qd.i32:
        return x * n

    assert k(3, 5) == 15 and k(4, 5) == 20 and k(3, 6) == 18
    assert len(k._launchers) == 2


def test_print_in_kernel(capfd: pytest.CaptureFixture[str]) -> None:
    @qd.kernel
    def k(x: qd.f32, n: qd.i32, d: qd.f64):
        print("x =", x, "n =", n, d)
        print(f"f {n}", n < 0, sep="|")

    k(1.5, -3, 2.25)
    out = capfd.readouterr().out
    assert "x = 1.500000 n = -3 2.250000000000\n" in out
    assert "f -3|1\n" in out


def test_assert_in_debug_mode() -> None:
    qd_init(debug=True, log_level="warn")

    @qd.kernel
    def k(x: qd.i32):
        assert x > 0, "x must be positive"

    k(1)
    with pytest.raises(qd.QuadrantsAssertionError, match="x must be positive"):
        k(-1)


@pytest.mark.parametrize("shape", [(1001, 37), (3, 100_003), (200_003, 2), (17, 13, 11)])
def test_parallel_multidimensional_loops_visit_each_cell_once(shape) -> None:
    @qd.kernel
    def k2(a: Nd[qd.i32, 2]):
        for i, j in qd.ndrange(a.shape[0], a.shape[1]):
            a[i, j] += i * 7 + j + 1

    @qd.kernel
    def k3(a: Nd[qd.i32, 3]):
        for I in qd.grouped(a):
            a[I] += I[0] * 7 + I[1] * 3 + I[2] + 1

    a = np.zeros(shape, np.int32)
    (k2 if len(shape) == 2 else k3)(a)
    idx = np.indices(shape)
    want = idx[0] * 7 + idx[1] + 1 if len(shape) == 2 else idx[0] * 7 + idx[1] * 3 + idx[2] + 1
    np.testing.assert_array_equal(a, want)


def test_serial_multidimensional_loop_with_break_and_continue() -> None:
    @qd.kernel
    def k(a: Nd[qd.i32, 2], stop: qd.i32) -> qd.i32:
        n = 0
        for _ in range(1):
            for i, j in qd.ndrange(a.shape[0], a.shape[1]):
                if j % 2 == 1:
                    continue
                if a[i, j] == stop:
                    break
                n += 1
        return n

    a = np.arange(60, dtype=np.int32).reshape(6, 10)
    flat = [(v, j) for v, j in zip(a.ravel(), np.tile(np.arange(10), 6))]
    want = 0
    for v, j in flat:
        if j % 2 == 1:
            continue
        if v == 34:
            break
        want += 1
    assert k(a, 34) == want


def test_loop_config_serialize_runs_the_next_top_level_loop_in_order() -> None:
    qd_init()

    @qd.kernel
    def first_above(a: Nd[qd.i32, 1], limit: qd.i32) -> qd.i32:
        found = -1
        qd.loop_config(serialize=True)
        for i in range(a.shape[0]):  # a serial loop: `break` and an order-dependent result are allowed
            if a[i] > limit:
                found = i
                break
        return found

    @qd.kernel
    def prefix(a: Nd[qd.i32, 1]):
        qd.loop_config(serialize=True, block_dim=64)
        for i in range(1, a.shape[0]):
            a[i] += a[i - 1]
        for i in range(a.shape[0]):  # parallel again
            a[i] *= 2

    a = np.array([1, 5, 20, 30, 2], np.int32)
    assert first_above(a, 10) == 2 and first_above(a, 100) == -1
    b = np.ones(5000, np.int32)
    prefix(b)
    np.testing.assert_array_equal(b, 2 * np.arange(1, 5001))


def test_loop_config_rejects_unknown_settings() -> None:
    qd_init()

    @qd.kernel
    def k(a: Nd[qd.i32, 1]):
        qd.loop_config(serialise=True)
        for i in range(a.shape[0]):
            a[i] = i

    with pytest.raises(qd.QuadrantsCompilationError, match="no setting 'serialise'"):
        k(np.zeros(2, np.int32))


@pytest.mark.parametrize("pick_static", [False, True])
def test_a_static_conditional_chooses_the_loop(pick_static: bool) -> None:
    qd_init()

    @qd.kernel
    def k(a: Nd[qd.i32, 2], n: qd.i32):
        for b in range(2):
            for i in range(n) if qd.static(pick_static) else qd.static(range(4)):
                a[b, i] += 1 + i

    @qd.kernel
    def breaks(n: qd.i32) -> qd.i32:
        c = 0
        for b in range(1):
            for i in qd.static(range(3)) if qd.static(pick_static) else range(n):
                c += 1
                if i >= 1:
                    break
        return c

    a = np.zeros((2, 6), np.int32)
    k(a, 2)
    want = np.zeros((2, 6), np.int32)
    want[:, : (2 if pick_static else 4)] = np.arange(1, 7)[: (2 if pick_static else 4)]
    np.testing.assert_array_equal(a, want)
    if pick_static:  # the static side really is static: no break there
        with pytest.raises(qd.QuadrantsCompilationError, match="You are trying to `break` a static `for` loop"):
            breaks(5)
    else:
        assert breaks(5) == 2


def test_break_and_continue_in_static_for_loops_under_static_conditions() -> None:
    x = qd.field(qd.i32, 5)
    y = qd.field(qd.i32, 5)
    w = qd.field(qd.i32, (3, 5))

    @qd.kernel
    def k():
        for i in qd.static(range(5)):
            x[i] = 1
            if qd.static(i == 2):
                break
        for i in qd.static(range(5)):
            if qd.static(i == 2):
                continue
            y[i] = 1
        for j in range(3):
            for i in qd.static(range(5)):
                if qd.static(i == 3):
                    break
                w[j, i] = 1

    @qd.kernel
    def runtime_condition(n: qd.i32):
        for i in qd.static(range(5)):
            if i < n:
                break

    k()
    np.testing.assert_array_equal(x.to_numpy(), [1, 1, 1, 0, 0])
    np.testing.assert_array_equal(y.to_numpy(), [1, 1, 0, 1, 1])
    assert w.to_numpy().sum() == 9
    with pytest.raises(qd.QuadrantsSyntaxError, match="inside a non-static `if`"):
        runtime_condition(2)


def test_ndrange_arguments_are_checked_with_quadrants_words() -> None:
    @qd.kernel
    def three():
        for _ in qd.ndrange((1, 2, 3)):
            pass

    @qd.kernel
    def floats():
        for _ in qd.ndrange((1.1, 10.5)):
            pass

    @qd.kernel
    def static_floats():
        for _ in qd.static(qd.ndrange(0.1, 0.2)):
            pass

    gen = (n for n in range(3))

    @qd.kernel
    def generator():
        for _ in qd.grouped(qd.ndrange(*gen)):
            pass

    a, b = np.int64(1), np.int32(4)

    @qd.kernel
    def numpy_ints() -> qd.i32:
        s = 0
        for i in qd.ndrange((a, b)):
            s += i
        return s

    with pytest.raises(qd.QuadrantsSyntaxError, match=r"should be a scalar or a tuple/list like \(begin, end\)"):
        three()
    for k in (floats, static_floats):
        with pytest.raises(qd.QuadrantsTypeError, match=r"should be an integer scalar or a tuple/list of \(int, int\)"):
            k()
    with pytest.raises(ValueError, match="generator"):
        generator()
    assert numpy_ints() == 1 + 2 + 3


def test_grouped_empty_ndrange_runs_once_with_an_empty_index() -> None:
    val = qd.field(qd.i32, shape=())

    @qd.kernel
    def k(a: Nd[qd.f32, 0]):
        for I in qd.grouped(qd.ndrange()):
            val[I] = 42
            a[I] += 1.5

    a = qd.ndarray(qd.f32, shape=())
    k(a)
    k(a)
    assert val[None] == 42 and a[None] == 3.0


def test_a_loop_index_rebound_in_the_loop_body_is_a_variable_for_the_rest_of_the_iteration() -> None:
    """`i = qd.cast(i, ...)` / `m = m + 4` directly in a loop's body (Quadrants' ndrange indices are variables):
    later reads see the new value, the next iteration starts from the loop's own index. Under an `if` it is an
    error with its location, since the new binding would end with the block."""

    @qd.kernel
    def k(out: Nd[qd.i32, 1], acc: Nd[qd.f32, 1]):
        for i in qd.ndrange(4):
            i = i + 1
            out[i] = i * 10
        for j in range(2):
            for m in qd.ndrange(2):
                m = m + 5
                out[m + j * 2] += 1
            j = qd.cast(j, qd.f32) * 0.5
            acc[0] += j

    out = np.zeros(9, np.int32)
    acc = np.zeros(1, np.float32)
    k(out, acc)
    want = np.zeros(9, np.int32)
    for i in range(4):
        want[i + 1] = (i + 1) * 10
    for j in range(2):
        for m in range(2):
            want[m + 5 + j * 2] += 1
    np.testing.assert_array_equal(out, want)
    assert acc[0] == 0.5

    @qd.kernel
    def under_if(out: Nd[qd.i32, 1]):
        for i in qd.ndrange(4):
            if out[i] > 0:
                i = 0
            out[i] = 1

    with pytest.raises(qd.QuadrantsCompilationError, match="cannot assign to loop index 'i'"):
        under_if(out)
