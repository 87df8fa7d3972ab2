"""Python forms kernels accept as Quadrants does: the walrus, `and`/`or` of vectors, `qd.floor(x, int)`, 0-d numpy
arrays as values, a data_oriented object's plain Python methods; and the errors Quadrants gives for a numpy array
of more dimensions, a variable rebound by `qd.static`, a static element assignment and a run-time
`qd.static_assert` condition."""

from __future__ import annotations

import numpy as np
import pytest

import quadrants as qd
from quadrants.errors import QuadrantsCompilationError, QuadrantsTypeError


def test_the_walrus_assigns_and_is_its_value() -> None:
    @qd.kernel
    def k(n: qd.i32) -> qd.i32:
        s = 2 + (a := 5)
        for i in range(n):
            if (j := i * 3) > 4:
                s += j + a
        return s

    assert k(4) == 7 + (6 + 5) + (9 + 5)


def test_and_or_of_vectors_are_element_by_element_zero_or_one() -> None:
    v4 = qd.types.vector(4, qd.i32)

    @qd.kernel
    def both(x: qd.i32) -> v4:
        return qd.Vector([2, 2, 0, 0]) * x and qd.Vector([1, 0, 3, 0])

    @qd.kernel
    def either(x: qd.i32) -> v4:
        return qd.Vector([2, 2, 0, 0]) * x or qd.Vector([1, 0, 3, 0])

    assert both(1).to_list() == [1, 0, 0, 0] and both(0).to_list() == [0, 0, 0, 0]
    assert either(1).to_list() == [1, 1, 1, 0] and either(0).to_list() == [1, 0, 1, 0]


def test_rounding_to_python_int_and_float_types() -> None:
    @qd.kernel
    def k(x: qd.f32) -> qd.types.vector(3, qd.f64):
        return qd.Vector([qd.floor(x, int), qd.ceil(x, int) * 1.0, qd.round(x, float)], qd.f64)

    assert k(1.5).to_list() == [1.0, 2.0, 2.0] and k(-1.5).to_list() == [-2.0, -1.0, -2.0]


def test_a_zero_dimensional_numpy_array_is_its_value_and_others_are_refused() -> None:
    three = np.array(3, dtype=np.int32)

    @qd.kernel
    def k(x: qd.i32) -> qd.i32:
        a = three
        return a * x + np.array(1, dtype=np.int32)

    assert k(5) == 16

    @qd.kernel
    def bad():
        a = np.array([1, 2])  # noqa: F841

    with pytest.raises(QuadrantsTypeError, match="Only 0-dimensional numpy array .* shape \\(2,\\)"):
        bad()


def test_plain_python_methods_of_a_data_oriented_object_run_on_it() -> None:
    @qd.data_oriented
    class Model:
        def __init__(self) -> None:
            self.out = qd.field(qd.f32, 3)
            self.scale = 10

        def scaled(self, x):  # type: ignore[no-untyped-def]
            return x * self.scale

        @qd.kernel
        def run(self, y: qd.f32):
            add = qd.static(self.scaled)
            self.out[0] = self.scaled(2)  # compile time: 20
            self.out[1] = add(3)
            self.out[2] = self.scaled(y)  # a run-time value: inlined

    m = Model()
    m.run(0.5)
    assert m.out.to_numpy().tolist() == [20.0, 30.0, 5.0]


def test_static_rebinding_errors_and_static_assert_of_a_runtime_condition() -> None:
    @qd.kernel
    def rebind():
        a = 1
        a = qd.static(2)  # noqa: F841

    @qd.kernel
    def element():
        a = qd.static([1, 2, 3])
        a[0] = qd.static(2)

    @qd.kernel
    def runtime_static_assert(x: qd.i32):
        qd.static_assert(x > 0, "positive")

    with pytest.raises(QuadrantsCompilationError, match="Recreating variables is not allowed: 'a'"):
        rebind()
    with pytest.raises(QuadrantsCompilationError, match="Static assign cannot be used on elements in arrays"):
        element()
    with pytest.raises(QuadrantsTypeError, match="Static assert with non-static condition"):
        runtime_static_assert(1)


def test_annotated_reassignments_follow_quadrants_rules() -> None:
    @qd.kernel
    def retyped():
        d: qd.i32 = 2
        d: qd.f32 = 2.0  # noqa: F841

    @qd.kernel
    def same_type() -> qd.i32:
        d: qd.i32 = 2
        d: qd.i32 = d + 3
        return d

    @qd.kernel
    def argument(a: qd.i32):
        a: qd.i32 = 1  # noqa: F841

    with pytest.raises(QuadrantsCompilationError, match="'d' is i32: it cannot be annotated again as f32"):
        retyped()
    assert same_type() == 5
    with pytest.raises(QuadrantsCompilationError, match='Kernel argument "a" is immutable'):
        argument(5)


def test_experimental_real_func_is_real_func_with_a_deprecation() -> None:
    with pytest.warns(DeprecationWarning, match="Use qd.real_func instead"):

        @qd.experimental.real_func
        def tri(a: qd.i32) -> qd.i32:
            s = 0
            for i in range(a + 1):
                s += i
            return s

    @qd.kernel
    def k(a: qd.i32) -> qd.i32:
        return tri(a)

    assert k(10) == 55


def test_a_pyfunc_is_a_func_in_kernels_and_python_outside() -> None:
    @qd.pyfunc
    def poly(x):  # type: ignore[no-untyped-def]
        return x * x + 2 * x

    @qd.kernel
    def k(x: qd.f32) -> qd.f32:
        return poly(x)

    assert poly(3) == 15 and poly(np.float64(0.5)) == 1.25  # plain Python
    assert k(3.0) == 15.0 and k(0.5) == 1.25
    with pytest.raises(QuadrantsCompilationError, match="can only be called from a kernel"):
        qd.func(lambda x: x)(1)
