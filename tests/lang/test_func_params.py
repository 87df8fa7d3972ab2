"""How `qd.func` / `qd.real_func` parameters take their arguments, by annotation, as in Quadrants: a vector or
matrix is a copy of the argument (its shape checked, its element type kept), an ndarray must have the annotated
element type, and `qd.ref(dtype)` passes a real func's argument by reference (a plain func gets a copy)."""

from __future__ import annotations

import numpy as np
import pytest

import quadrants as qd

vec3 = qd.types.vector(3, qd.f32)


@qd.func
def set_first(a: vec3):
    a[0] = 100
    return a


def test_a_vector_parameter_is_a_copy_the_func_may_assign() -> None:
    @qd.kernel
    def k() -> vec3:
        x = qd.Vector([3.0, 4.0, 5.0])
        x[0] = 20
        y = set_first(x)
        return x + y

    np.testing.assert_allclose(k(), [120.0, 8.0, 10.0])


def test_a_kernel_vector_argument_given_to_a_vector_parameter_is_copied() -> None:
    @qd.kernel
    def k(v: vec3) -> vec3:
        w = set_first(v)
        return v + w

    np.testing.assert_allclose(k([1.0, 2.0, 3.0]), [101.0, 4.0, 6.0])


def test_a_matrix_parameter_copy_keeps_the_arguments_element_type() -> None:
    @qd.func
    def corner_sum(a: qd.types.matrix(2, 2, qd.i32)) -> qd.f32:
        a[0, 0] = 0.25  # the copy is f32 like the argument: no truncation
        return a[0, 1] + a[1, 0] + a[0, 0]

    @qd.kernel
    def k() -> qd.f32:
        return corner_sum(qd.Matrix([[1.7, 2.5], [3.0, 4.0]]))

    assert k() == 5.75  # not truncated to i32 (Quadrants gives 5.75 too)


@qd.kernel
def short_vector():
    set_first(qd.Vector([3, 4]))


@qd.kernel
def a_matrix():
    set_first(qd.Matrix([[1, 2], [3, 4]]))


@qd.kernel
def a_scalar():
    set_first(1.0)


@qd.kernel
def a_list():
    set_first([1.0, 2.0, 3.0])


@pytest.mark.parametrize(
    "kernel, message",
    [
        (short_vector, r"is expected to be a Matrix with n 3, but got 2\."),
        (a_matrix, r"is expected to be a Matrix with ndim 1, but got 2\."),
        (a_scalar, r"is expected to be a Matrix, but got <class 'float'>\."),
        (a_list, r"is expected to be a Matrix, but got <class 'list'>\."),
    ],
)
def test_a_vector_parameter_checks_the_arguments_shape(kernel: object, message: str) -> None:
    with pytest.raises(qd.QuadrantsSyntaxError, match=r"Argument a of type vector\(3, f32\) " + message) as e:
        kernel()  # type: ignore[operator]
    assert e.value.loc is not None and e.value.loc.line_text.strip().startswith("set_first(")


def test_a_func_ndarray_parameter_checks_the_element_type() -> None:
    @qd.func
    def fill2(a: qd.types.ndarray(dtype=qd.math.vec2, ndim=1)):
        a[0] = [100, 100]

    @qd.func
    def fill_i32(a: qd.types.ndarray(dtype=qd.i32, ndim=1)):
        a[0] = 1

    @qd.kernel
    def k2(x: qd.types.ndarray(ndim=1)):
        fill2(x)

    @qd.kernel
    def k_i32(x: qd.types.ndarray(ndim=1)):
        fill_i32(x)

    arr = qd.ndarray(vec3, shape=(4,))
    with pytest.raises(qd.QuadrantsCompilationError, match=r"Invalid value for argument a - required element type: "
                       r"VectorType\[2, f32\], but \[Tensor \(3\) f32\] is provided"):  # fmt: skip
        k2(arr)
    with pytest.raises(qd.QuadrantsCompilationError, match=r"Expect element type i32 for argument a, but get f32"):
        k_i32(qd.ndarray(qd.f32, shape=(4,)))
    ok = qd.ndarray(qd.math.vec2, shape=(4,))
    k2(ok)
    np.testing.assert_allclose(ok.to_numpy()[0], [100.0, 100.0])


def test_ref_passes_a_real_funcs_argument_by_reference() -> None:
    @qd.real_func
    def set7(a: qd.ref(qd.f32)):
        a = 7

    @qd.real_func
    def double(a: qd.ref(qd.f32)):
        a += a

    @qd.kernel
    def k(x: qd.types.ndarray()) -> qd.types.vector(3, qd.f32):
        a = 5.0
        set7(a)
        b = 5.0
        double(b)
        v = qd.Vector([1.0, 2.0])
        double(v[1])
        double(x[1])
        return qd.Vector([a, b, v[1]])

    x = np.full(3, 1.5, np.float32)
    np.testing.assert_allclose(k(x), [7.0, 10.0, 4.0])
    np.testing.assert_allclose(x, [1.5, 3.0, 1.5])


def test_ref_on_a_plain_func_is_a_copy() -> None:
    @qd.func
    def set7(a: qd.ref(qd.f32)):
        a = 7

    @qd.kernel
    def k() -> qd.f32:
        a = 5.0
        set7(a)
        return a

    assert k() == 5.0


def test_ref_needs_a_variable_of_its_type() -> None:
    @qd.real_func
    def bump(a: qd.ref(qd.f32)):
        a += 1

    @qd.kernel
    def constant():
        bump(1.0)

    @qd.kernel
    def other_type():
        a = 3
        bump(a)

    with pytest.raises(qd.QuadrantsTypeError, match="is ref\\(f32\\): it takes a scalar local variable or element"):
        constant()
    with pytest.raises(qd.QuadrantsTypeError, match="of type f32, not a i32 location"):
        other_type()
