"""`@qd.real_func`: compiled once per signature as a function of its own and called, as in Quadrants.

Every expected value here was measured on real Quadrants 1.3.3 with the same kernels.
"""

from __future__ import annotations

import numpy as np
import pytest

import quadrants as qd
from tests.conftest import qd_init

Nd = qd.types.NDArray


def _ir_text(kernel) -> str:  # type: ignore[no-untyped-def]
    return next(iter(kernel._launchers.values())).compiled.ir_text  # type: ignore[no-any-return]


def _calls_functions(kernel) -> bool:  # type: ignore[no-untyped-def]
    """Whether the kernel's code calls real functions (rather than inlining them)."""
    text = _ir_text(kernel)
    return "\nfunc " in text and "call " in text


# ---- recursion -------------------------------------------------------------------------------------------


def test_recursion_runs_at_run_time() -> None:
    qd_init()

    @qd.real_func
    def sum_to(n: qd.i32) -> qd.i32:
        if n == 0:
            return 0
        return sum_to(n - 1) + n

    @qd.kernel
    def k(n: qd.i32) -> qd.i32:
        return sum_to(n)

    assert k(100) == 5050
    assert k(0) == 0
    text = _ir_text(k)
    assert text.count("\nfunc ") == 1  # one function for the one signature, calling itself
    assert text.count("call ") == 2  # the kernel calls it, and it calls itself


def test_recursion_over_a_template_field_and_deep_recursion() -> None:
    qd_init()
    f = qd.field(qd.i32, shape=100)
    f.from_numpy(np.arange(100, dtype=np.int32))

    @qd.real_func
    def span(a: qd.template(), lo: qd.i32, hi: qd.i32) -> qd.i32:
        if lo == hi:
            return a[lo]
        mid = (lo + hi) // 2
        return span(a, lo, mid) + span(a, mid + 1, hi)

    @qd.real_func
    def depth(n: qd.i32, acc: qd.i64) -> qd.i64:
        if n == 0:
            return acc
        return depth(n - 1, acc + n)

    @qd.kernel
    def k() -> qd.i32:
        return span(f, 0, 99)

    @qd.kernel
    def deep(n: qd.i32) -> qd.i64:
        return depth(n, 0)

    assert k() == 4950
    assert deep(1000) == 500500


def test_recursive_real_func_in_a_parallel_loop() -> None:
    qd_init()

    @qd.real_func
    def fib(n: qd.i32) -> qd.i32:
        if n < 2:
            return n
        return fib(n - 1) + fib(n - 2)

    @qd.kernel
    def fibs(a: Nd[qd.i32, 1]):
        for i in range(a.shape[0]):
            a[i] = fib(i)

    a = np.zeros(15, np.int32)
    fibs(a)
    assert a.tolist() == [0, 1, 1, 2, 3, 5, 8, 13, 21, 34, 55, 89, 144, 233, 377]


# ---- returns anywhere, break, continue -----------------------------------------------------------------


def test_returns_inside_loops_and_nested_ifs() -> None:
    qd_init()

    @qd.real_func
    def first_over(a: Nd[qd.f32, 1], t: qd.f32) -> qd.i32:
        i = 0
        while i < a.shape[0]:
            if a[i] > t:
                return i
            i += 1
        return -1

    @qd.real_func
    def partial_sum(a: qd.i32) -> qd.i32:
        s = 0
        for i in range(100):
            if i == a + 1:
                return s
            s = s + i
        return s

    @qd.real_func
    def in_for() -> qd.i32:
        for _ in range(10):
            return 42

    @qd.kernel
    def k_first(a: Nd[qd.f32, 1], t: qd.f32) -> qd.i32:
        return first_over(a, t)

    @qd.kernel
    def k_sum(a: qd.i32) -> qd.i32:
        return partial_sum(a) + in_for() * 1000

    arr = np.array([0.5, 1.5, 3.0, 7.0], np.float32)
    assert [k_first(arr, 1.0), k_first(arr, 5.0), k_first(arr, 9.0)] == [1, 3, -1]
    assert k_sum(10) == 55 + 42000
    assert k_sum(200) == 4950 + 42000


def test_several_returns_and_their_casts() -> None:
    qd_init()
    x = qd.field(qd.i32, shape=())

    @qd.real_func
    def sign(v: qd.f32) -> qd.i32:
        if v > 0:
            return 1
        elif v < 0:
            return -1
        return 0

    @qd.real_func
    def step(val: qd.i32) -> qd.i32:
        if x[None] > 10:
            if x[None] > 20:
                return 1
            x[None] += 1
        x[None] += val
        return 0

    @qd.kernel
    def k() -> qd.types.vector(3, qd.i32):
        a = step(15) + step(10) * 10 + step(100) * 100
        return qd.Vector([sign(2.5) + a * 10, sign(-0.5), sign(0.0)])

    x[None] = 0
    assert k().to_numpy().tolist() == [1001, -1, 0]
    assert x[None] == 26


def test_break_and_continue_in_a_real_func_loop() -> None:
    qd_init()

    @qd.real_func
    def count_until(n: qd.i32, stop: qd.i32) -> qd.i32:
        c = 0
        for i in range(n):
            if i == stop:
                break
            if i % 3 == 0:
                continue
            c += i
        return c

    @qd.kernel
    def k(n: qd.i32, stop: qd.i32) -> qd.i32:
        return count_until(n, stop)

    assert [k(20, 10), k(20, 100)] == [27, 127]


# ---- parameters and results ----------------------------------------------------------------------------


def test_vector_and_matrix_parameters_and_results() -> None:
    qd_init()

    @qd.real_func
    def scale(v: qd.math.vec3, s: qd.f32) -> qd.math.vec3:
        return v * s

    @qd.real_func
    def trace_plus(m: qd.math.mat2, v: qd.math.vec2) -> qd.f32:
        return m[0, 0] + m[1, 1] + v[0] * 10 + v[1] * 100

    @qd.real_func
    def identity2() -> qd.math.mat2:
        return qd.math.mat2(1, 2, 3, 4)

    @qd.kernel
    def k(s: qd.f32) -> qd.math.vec3:
        w = scale(qd.math.vec3(1, 2, 3), s)
        return w + trace_plus(identity2(), qd.math.vec2(1, 2))

    assert k(2.0).to_numpy().tolist() == [217.0, 219.0, 221.0]
    assert _calls_functions(k)


def test_tuple_results_scalar_casts_and_small_types() -> None:
    qd_init()

    @qd.real_func
    def divmod_rf(a: qd.i32, b: qd.i32) -> tuple[qd.i32, qd.i32]:
        return a // b, a % b

    @qd.real_func
    def add_f(a: qd.f32, b: qd.f32) -> qd.f32:
        return a + b

    @qd.real_func
    def u8_add(a: qd.u8, b: qd.u8) -> qd.u8:
        return a + b

    @qd.real_func
    def half(a: qd.f16) -> qd.f16:
        return a * 0.5

    @qd.real_func
    def is_pos(a: qd.f32) -> qd.u1:
        return a > 0

    @qd.kernel
    def k_divmod(a: qd.i32, b: qd.i32) -> qd.i32:
        q, r = divmod_rf(a, b)
        return q * 1000 + r

    @qd.kernel
    def k_types() -> qd.f32:
        r = qd.f32(u8_add(200, 100)) + qd.f32(half(3.0)) + add_f(1, 2.7)
        if is_pos(-1.0):
            r += 1000
        return r

    assert [k_divmod(17, 5), k_divmod(-17, 5)] == [3002, -3997]
    assert k_types() == pytest.approx(45.5 + 3.7)
    assert _calls_functions(k_divmod) and _calls_functions(k_types)


def test_ndarray_parameters_write_through() -> None:
    qd_init()

    @qd.real_func
    def put(a: Nd[qd.f32, 1], i: qd.i32, v: qd.f32):
        a[i] = v

    @qd.kernel
    def k(a: Nd[qd.f32, 1]):
        for i in range(a.shape[0]):
            put(a, i, i * 0.5)

    b = np.zeros(5, np.float32)
    k(b)
    assert b.tolist() == [0.0, 0.5, 1.0, 1.5, 2.0]
    assert _calls_functions(k)


def test_writes_through_a_recursive_real_func_reach_a_strided_numpy_array() -> None:
    """The kernel's ABI knows that the real function (through its recursion) writes the ndarray: a strided array
    is copied back, a read-only one refused."""
    qd_init()

    @qd.real_func
    def fill_down(a: Nd[qd.f32, 1], i: qd.i32):
        if i >= 0:
            a[i] = i * 2.0
            fill_down(a, i - 1)

    @qd.kernel
    def k(a: Nd[qd.f32, 1]):
        fill_down(a, a.shape[0] - 1)

    base = np.zeros(10, np.float32)
    k(base[::2])
    assert base.tolist() == [0.0, 0, 2.0, 0, 4.0, 0, 6.0, 0, 8.0, 0]
    frozen = np.zeros(3, np.float32)
    frozen.setflags(write=False)
    with pytest.raises(qd.QuadrantsRuntimeTypeError, match="read-only"):
        k(frozen)


def test_one_real_func_called_from_two_kernels_and_from_a_parallel_loop() -> None:
    qd_init()
    x = qd.field(qd.i32, shape=())

    @qd.real_func
    def bump(val: qd.i32):
        x[None] += val  # stays atomic: a real function may run on many threads

    @qd.kernel
    def many(n: qd.i32):
        for _ in range(n):
            bump(1)

    @qd.kernel
    def twice():
        bump(40)
        bump(2)

    x[None] = 0
    many(1000)
    twice()
    assert x[None] == 1042
    assert _calls_functions(many) and _calls_functions(twice)


def test_real_funcs_and_inlined_funcs_call_each_other() -> None:
    qd_init()

    @qd.func
    def sq(v):
        return v * v

    @qd.real_func
    def sum_sq(n: qd.i32) -> qd.i32:
        if n == 0:
            return 0
        return sq(n) + sum_sq(n - 1)

    @qd.func
    def via_func(n: qd.i32) -> qd.i32:
        return sum_sq(n) + 1

    @qd.kernel
    def k(n: qd.i32) -> qd.i32:
        return via_func(n)

    assert k(10) == 386


def test_data_oriented_methods() -> None:
    qd_init()

    @qd.data_oriented
    class Grid:
        def __init__(self, n: int) -> None:
            self.val = qd.field(qd.f32, shape=(n, n))

        @qd.real_func
        def inc(self, i: qd.i32, j: qd.i32):
            self.val[i, j] += i * j

        @qd.real_func
        def mul(self, i: qd.i32, j: qd.i32) -> qd.i32:
            return i * j

        @qd.kernel
        def fill(self):
            for i, j in self.val:
                self.inc(i, j)
                self.val[i, j] += self.mul(i, j)

    g = Grid(8)
    g.fill()
    assert float(g.val.to_numpy().sum()) == 1568.0
    assert _calls_functions(g.fill.kernel)


def test_template_values_pick_the_function() -> None:
    qd_init()

    @qd.real_func
    def times(k: qd.template(), v: qd.i32) -> qd.i32:
        return v * k

    @qd.kernel
    def run(v: qd.i32) -> qd.i32:
        return times(2, v) + times(3, v) + times(2, v + 1)

    assert run(5) == 10 + 15 + 12
    assert _ir_text(run).count("\nfunc ") == 2


def test_ref_parameters_write_the_callers_locations() -> None:
    """`qd.ref` passes a local or an element by address to a real function; a `qd.func` takes it by value, as
    Quadrants 1.3.3 does."""
    qd_init()

    @qd.real_func
    def set7(a: qd.ref(qd.f32)):
        a = 7

    @qd.real_func
    def double(a: qd.ref(qd.f32)):
        a += a

    @qd.real_func
    def swap_plus(a: qd.ref(qd.i32), b: qd.ref(qd.i32), k: qd.i32) -> qd.i32:
        t = a
        a = b + k
        b = t + k
        return a * b

    @qd.func
    def inlined(a: qd.ref(qd.i32)):
        a += 1

    @qd.kernel
    def k(x: Nd[qd.i32, 1]) -> qd.f32:
        a = 5.0
        set7(a)
        c = 5.0
        double(c)
        p = 1
        q = 2
        r = swap_plus(p, q, 10)
        swap_plus(x[0], x[1], 1)
        inlined(x[2])
        inlined(p)
        return a * 1000 + c + p * 0.01 + q * 0.0001 + r

    x = np.array([3, 4, 5], np.int32)
    assert k(x) == pytest.approx(7142.1211)
    assert x.tolist() == [5, 4, 5]

    @qd.kernel
    def bad() -> qd.f32:
        set7(1.5)
        return 0.0

    with pytest.raises(qd.QuadrantsTypeError, match="takes a scalar local variable or element"):
        bad()


# ---- checks inside a real function ------------------------------------------------------------------------


def test_a_failed_check_inside_a_real_func_stops_the_kernel() -> None:
    qd_init(debug=True)

    @qd.real_func
    def get(a: Nd[qd.i32, 1], i: qd.i32) -> qd.i32:
        assert i >= 0, "negative index"
        return a[i]

    @qd.kernel
    def k(a: Nd[qd.i32, 1], i: qd.i32) -> qd.i32:
        return get(a, i)

    a = np.arange(4, dtype=np.int32)
    assert k(a, 3) == 3
    with pytest.raises(qd.QuadrantsAssertionError, match="negative index"):
        k(a, -1)
    with pytest.raises(IndexError):  # Quadrants 1.3.3 does not check this one (it reads past the end)
        k(a, 4)
    assert _calls_functions(k)


# ---- errors ------------------------------------------------------------------------------------------------


def test_errors() -> None:
    qd_init()
    with pytest.raises(qd.QuadrantsSyntaxError, match="must be type annotated"):

        @qd.real_func
        def unannotated(a, b: qd.i32) -> qd.i32:
            return a + b

    @qd.real_func
    def no_return_annotation(a: qd.i32, b: qd.i32):
        return a + b

    @qd.kernel
    def k1():
        no_return_annotation(30, 2)

    with pytest.raises(qd.QuadrantsCompilationError, match="return value must be annotated"):
        k1()

    @qd.real_func
    def tmpl(t: qd.template()) -> qd.i32:
        return t

    @qd.kernel
    def k2(x: qd.i32) -> qd.i32:
        return tmpl(x)

    with pytest.raises(qd.QuadrantsTypeError, match="compile-time value"):
        k2(1)

    @qd.real_func
    def vec_arg(v: qd.math.vec3) -> qd.f32:
        return v[0]

    @qd.kernel
    def k3() -> qd.f32:
        return vec_arg(qd.math.vec2(1, 2))

    with pytest.raises(qd.QuadrantsTypeError, match="shape"):
        k3()


def test_the_kernel_text_holds_the_callee() -> None:
    """The offline key is made of the kernel's IR text: it holds the real functions' code, so two kernels of the
    same text whose real functions differ do not share an entry."""
    qd_init()

    def make(sign: int):  # type: ignore[no-untyped-def]
        @qd.real_func
        def g(n: qd.i32) -> qd.i32:
            if n == 0:
                return 0
            return g(n - 1) + n * sign

        @qd.kernel
        def k(n: qd.i32) -> qd.i32:
            return g(n)

        return k

    a, b = make(1), make(-1)
    assert a(10) == 55 and b(10) == -55
    ta, tb = _ir_text(a), _ir_text(b)
    assert "\nfunc " in ta and "call " in ta and ta != tb


def test_real_functions_take_and_return_structs_by_value() -> None:
    """Struct parameters and results of a real function pass as their leaf members (integers wrap, as in
    Quadrants); the callee's changes to its parameter stay in the callee."""
    inner = qd.types.struct(v=qd.math.vec3, k=qd.i16)
    outer = qd.types.struct(a=qd.f32, b=inner)

    @qd.real_func
    def make(t: qd.f32) -> outer:
        return outer(a=t, b=inner(v=qd.math.vec3(100, 0.5, 3), k=65537))

    @qd.real_func
    def total(s: outer) -> qd.f32:
        r = s.a + s.b.v.sum() + s.b.k
        s.a = 1000.0
        return r

    @qd.real_func
    def pair() -> tuple[qd.i32, inner]:
        return 7, inner(k=3)

    @qd.kernel
    def k() -> qd.types.vector(4, qd.f32):
        s = make(1.5)
        n, p = pair()
        return qd.Vector([total(s), s.a, n, p.k])

    assert k().to_numpy().tolist() == [1.5 + 103.5 + 1, 1.5, 7, 3]
