"""`@qd.func`: inlining, arguments, returns, recursion, templates."""

from __future__ import annotations

import numpy as np
import pytest

import quadrants as qd
from tests.conftest import qd_init

Nd = qd.types.NDArray


@qd.func
def clamp01(x: qd.f32) -> qd.f32:
    return min(max(x, 0.0), 1.0)


@qd.func
def divmod_(a, b):
    return a // b, a % b


@qd.func
def bump(a: Nd[qd.i32, 1], i: qd.i32):
    a[i] += 1


def test_func_arguments_are_passed_by_value() -> None:
    @qd.func
    def inc(x):
        x += 1
        return x

    @qd.kernel
    def k(v: qd.i32) -> tuple[qd.i32, qd.i32]:
        y = v
        z = inc(y)
        return y, z

    assert k(5) == (5, 6)


def test_annotated_params_cast_and_ndarray_params_alias() -> None:
    @qd.kernel
    def k(x: Nd[qd.f32, 1], a: Nd[qd.i32, 1]):
        for i in range(x.shape[0]):
            x[i] = clamp01(x[i])
            bump(a, i)

    x = np.array([-1.0, 0.5, 3.0], np.float32)
    a = np.zeros(3, np.int32)
    k(x, a)
    np.testing.assert_array_equal(x, [0.0, 0.5, 1.0])
    np.testing.assert_array_equal(a, [1, 1, 1])


def test_tuple_returns_unpack() -> None:
    @qd.kernel
    def k(a: qd.i32, b: qd.i32) -> tuple[qd.i32, qd.i32]:
        q, r = divmod_(a, b)
        return q, r

    assert k(-7, 2) == (-4, 1)


def test_nested_funcs_and_templates() -> None:
    @qd.func
    def power(x, n: qd.template()):
        r = 1.0
        for _ in qd.static(range(n)):
            r *= x
        return r

    @qd.func
    def poly(x):
        return power(x, 3) + power(x, 2)

    @qd.kernel
    def k(x: qd.f32) -> qd.f32:
        return poly(x)

    assert k(2.0) == 12.0


def test_recursion_is_a_compile_error() -> None:
    @qd.func
    def fact(n):
        return n * fact(n - 1)

    @qd.kernel
    def k(n: qd.i32) -> qd.i32:
        return fact(n)

    with pytest.raises(qd.QuadrantsCompilationError, match="recursion"):
        k(3)
    with pytest.raises(qd.QuadrantsCompilationError, match="recursion"):
        k(3)  # raised again at every call


def test_return_inside_runtime_if_is_an_error() -> None:
    @qd.func
    def f(x):
        if x > 0:
            return 1
        return 0

    @qd.kernel
    def k(x: qd.i32) -> qd.i32:
        return f(x)

    with pytest.raises(qd.QuadrantsSyntaxError, match="return inside a runtime if"):
        k(1)


def test_calling_a_func_from_python_is_an_error() -> None:
    with pytest.raises(qd.QuadrantsSyntaxError):
        clamp01(0.5)


def test_loops_in_funcs_called_at_top_level_are_parallel() -> None:
    @qd.func
    def fill(o: Nd[qd.i32, 1], c: Nd[qd.i32, 1]):
        for i in range(o.shape[0]):
            o[qd.atomic_add(c[0], 1)] = i

    @qd.kernel
    def k(o: Nd[qd.i32, 1], c: Nd[qd.i32, 1]):
        fill(o, c)

    from quadrants.ir import nodes as ir
    from tests.conftest import kernel_ir

    qd_init(log_level="warn", offline_cache=False)
    o, c = np.zeros(100_000, np.int32), np.zeros(1, np.int32)
    k(o, c)
    np.testing.assert_array_equal(np.sort(o), np.arange(100_000))
    loops = [s for s in kernel_ir(k).body.stmts if isinstance(s, ir.RangeFor)]
    assert loops and loops[0].parallel


# ---- template parameters are references (as in Quadrants) ----------------------------------------------------


@qd.func
def add_one(ret: qd.template()):
    ret += 1.0


@qd.func
def scale_set(v: qd.template(), k: qd.i32):
    v[k] = 7.0
    v = v * 2.0


@qd.func
def add_one_copy(r):
    r += 1.0


def test_template_param_given_a_local_writes_the_callers_variable() -> None:
    @qd.kernel
    def k(n: qd.i32) -> qd.f32:
        ret = 0.0
        for _ in range(n):
            add_one(ret)
        return ret

    @qd.kernel
    def copied() -> qd.f32:
        ret = 0.0
        add_one_copy(ret)  # an unannotated parameter is a copy
        return ret

    assert k(3) == 3.0
    assert copied() == 0.0


def test_template_param_given_a_vector_is_assigned_through() -> None:
    @qd.kernel
    def k(i: qd.i32) -> qd.math.vec3:
        v = qd.math.vec3(1.0, 2.0, 3.0)
        scale_set(v, i)
        return v

    np.testing.assert_allclose(k(1).to_numpy(), [2.0, 14.0, 6.0])


def test_template_param_given_elements_writes_memory() -> None:
    @qd.func
    def swap(a: qd.template(), b: qd.template()):
        t = a
        a = b
        b = t

    @qd.kernel
    def k(x: Nd[qd.f32, 1], v: Nd[qd.math.vec2, 1]):
        for i in range(x.shape[0]):
            add_one(x[i])
            swap(v[i][0], v[i][1])

    @qd.kernel
    def comp(i: qd.i32) -> qd.math.vec3:
        w = qd.math.vec3(0.0)
        add_one(w.y)
        add_one(w[i])  # a runtime index: the element it selects
        return w

    x = np.arange(4, dtype=np.float32)
    v = np.stack([np.arange(4), -np.arange(4)], axis=1).astype(np.float32)
    k(x, v)
    np.testing.assert_allclose(x, np.arange(4) + 1.0)
    np.testing.assert_allclose(v, np.stack([-np.arange(4), np.arange(4)], axis=1))
    np.testing.assert_allclose(comp(2).to_numpy(), [0.0, 1.0, 1.0])


def test_template_reference_through_nested_funcs_and_keywords() -> None:
    @qd.func
    def twice(r: qd.template()):
        add_one(ret=r)
        add_one(r)

    @qd.kernel
    def k() -> qd.i32:
        c = 0
        twice(c)
        return c

    assert k() == 2


def test_template_reference_in_a_parallel_loop_is_atomic() -> None:
    @qd.kernel
    def count(x: Nd[qd.f32, 1]) -> qd.f32:
        total = 0.0
        for i in range(x.shape[0]):
            add_one(total)
        return total

    assert count(np.zeros(10_000, np.float32)) == 10_000.0


def test_template_param_given_a_value_cannot_be_assigned() -> None:
    @qd.kernel
    def k(x: Nd[qd.f32, 1]):
        for i in range(x.shape[0]):
            add_one(x[i] * 2.0)

    with pytest.raises(qd.QuadrantsSyntaxError, match="cannot assign to template parameter") as e:
        k(np.zeros(2, np.float32))
    assert "ret += 1.0" in str(e.value)


def test_a_declared_return_needs_a_return_statement() -> None:
    """Quadrants' words for a kernel or qd.func that declares a result but never returns one."""

    @qd.kernel
    def k() -> qd.i32:
        pass

    @qd.func
    def f() -> qd.i32:
        pass

    @qd.kernel
    def calls_f() -> qd.i32:
        return f()

    with pytest.raises(qd.QuadrantsSyntaxError, match="Kernel has a return type but does not have a return statement"):
        k()
    with pytest.raises(qd.QuadrantsSyntaxError, match="Function has a return type but does not have a return stat"):
        calls_f()


def test_a_func_ndarray_parameter_indexes_a_kernel_argument_only() -> None:
    # an ndarray that is no kernel argument may be passed (tests/lang/test_genesis_lang_gaps.py), not indexed,
    # as in Quadrants 1.3.3, which also reports it at the index
    weight = qd.ndarray(qd.f32, 4)

    @qd.func
    def first(w: qd.types.NDArray[qd.f32, 1]) -> qd.f32:
        return w[0]

    @qd.kernel
    def k() -> qd.f32:
        return first(weight)

    with pytest.raises(qd.QuadrantsCompilationError, match="'w' is an ndarray captured from outside the kernel"):
        k()


def test_real_func_needs_annotated_parameters_and_return_value() -> None:
    """qd.real_func keeps Quadrants' rules for real functions (tests/lang/test_real_func.py tests the rest)."""
    with pytest.raises(qd.QuadrantsSyntaxError, match="must be type annotated"):

        @qd.real_func
        def add(a, b: qd.i32) -> qd.i32:
            return a + b

    @qd.real_func
    def unannotated(a: qd.i32, b: qd.i32):
        return a + b

    @qd.real_func
    def annotated(a: qd.i32, b: qd.i32) -> qd.i32:
        return a + b

    @qd.kernel
    def run():
        unannotated(30, 2)

    @qd.kernel
    def run_annotated() -> qd.i32:
        return annotated(30, 2)

    with pytest.raises(qd.QuadrantsCompilationError, match="return value must be annotated"):
        run()
    assert run_annotated() == 32


def test_requires_top_level_funcs_run_at_the_top_level_and_refuse_nesting() -> None:
    """`@qd.func(requires_top_level=True)`: its loops stay parallel top-level loops; a call under a runtime
    for/if/while (also through another func) is a compile error naming the func, a qd.static loop is fine."""

    @qd.func(requires_top_level=True)
    def bump(x: qd.template(), n):
        for i in range(n):
            x[i] = x[i] + 1

    @qd.func
    def helper(x: qd.template(), n):
        bump(x, n)

    @qd.kernel
    def ok(x: qd.types.NDArray[qd.i32, 1], n: qd.i32):
        for _ in qd.static(range(2)):
            helper(x, n)

    @qd.kernel
    def nested_if(x: qd.types.NDArray[qd.i32, 1], n: qd.i32):
        if n > 0:
            helper(x, n)

    @qd.kernel
    def nested_while(x: qd.types.NDArray[qd.i32, 1], n: qd.i32):
        k = n
        while k > 0:
            bump(x, n)
            k -= 1

    x = np.zeros(8, np.int32)
    ok(x, 8)
    np.testing.assert_array_equal(x, 2)
    for k in (nested_if, nested_while):
        with pytest.raises(qd.QuadrantsSyntaxError, match=r"bump' is declared with requires_top_level=True"):
            k(x, 8)


def test_a_func_and_a_real_func_declared_to_return_none_return_nothing() -> None:
    """`-> None` under `from __future__ import annotations` (this module) is the string "None": no result, as
    without the future import (it was taken for a result type, and the body for one lacking its return)."""

    @qd.func
    def add_one(a: Nd[qd.i32, 1]) -> None:
        a[0] += 1

    @qd.real_func
    def add_ten(a: Nd[qd.i32, 1]) -> None:
        a[1] += 10

    @qd.kernel
    def k(a: Nd[qd.i32, 1]) -> None:
        add_one(a)
        add_ten(a)

    a = qd.ndarray(qd.i32, (2,))
    k(a)
    assert a.to_numpy().tolist() == [1, 10]
