"""Small parts of real Quadrants' calling conventions: `qd.types.ndarray[dtype, ndim]` as an annotation, `*args`
only last in a func call (STARNOTLAST), the deprecation of plain dataclasses given to template parameters, the
ndarray classes (`qd.ScalarNdarray`, `qd.VectorNdarray`, `qd.MatrixNdarray`), and ndarrays refused as templates."""

from __future__ import annotations

import dataclasses
import warnings

import numpy as np
import pytest

import quadrants as qd


def test_types_ndarray_is_the_annotation_class() -> None:
    assert qd.types.ndarray is qd.types.NDArray
    assert qd.types.ndarray[qd.i32, 1] == qd.types.ndarray(dtype=qd.i32, ndim=1)

    @dataclasses.dataclass
    class S:
        a: qd.types.ndarray[qd.i32, 1]  # type: ignore[valid-type]
        p: qd.i32  # type: ignore[valid-type]

    @qd.kernel
    def k(s: S):
        s.a[1] += s.p

    a = qd.ndarray(qd.i32, shape=(4,))
    k(S(a, 5))
    np.testing.assert_array_equal(a.to_numpy(), [0, 5, 0, 0])


@qd.func
def set01(a: qd.types.NDArray[qd.i32, 1], b: qd.i32, c: qd.i32, d: qd.i32):
    a[0] = b
    a[1] = c + d


STAR = [3, 5]


@qd.kernel
def star_last(a: qd.types.NDArray[qd.i32, 1]):
    set01(a, 1, *STAR)


@qd.kernel
def star_then_arg(a: qd.types.NDArray[qd.i32, 1]):
    set01(a, *STAR, 3)


@qd.kernel
def star_then_keyword(a: qd.types.NDArray[qd.i32, 1]):
    set01(a, *STAR, d=3)


def test_star_args_must_come_last_in_a_func_call() -> None:
    a = qd.ndarray(qd.i32, shape=(4,))
    star_last(a)
    np.testing.assert_array_equal(a.to_numpy()[:2], [1, 8])
    for k in (star_then_arg, star_then_keyword):
        with pytest.raises(qd.QuadrantsSyntaxError, match=r"\* args can only be present as the last argument of a "
                           r"function \(error code: STARNOTLAST\)") as e:  # fmt: skip
            k(a)
        assert e.value.loc is not None and "*STAR" in e.value.loc.line_text


def test_a_plain_dataclass_given_to_a_template_parameter_is_deprecated() -> None:
    @dataclasses.dataclass(frozen=True)
    class Foo:
        x: object = None

    @qd.data_oriented
    @dataclasses.dataclass
    class Both:
        x: object = None

    @qd.kernel
    def run(foo: qd.Template):
        for i in range(4):
            foo.x[i] = float(i)

    x = qd.ndarray(qd.f32, shape=(4,))
    with pytest.warns(DeprecationWarning, match=r"Kernel '.*run' parameter 'foo': passing a @dataclasses.dataclass "
                      r"instance into a qd.Template-annotated kernel parameter .* `def run\(foo: Foo, ...\)`"):  # fmt: skip
        run(Foo(x=x))
    np.testing.assert_array_equal(x.to_numpy(), np.arange(4.0))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        run(Foo(x=x))  # once per specialization
        run(Both(x=x))  # a data_oriented dataclass is a supported template argument


def test_ndarrays_are_scalar_vector_or_matrix_ndarrays() -> None:
    a = qd.ndarray(qd.i32, shape=(3,))
    b = qd.ndarray(qd.types.vector(3, qd.i32), shape=(4, 4))
    c = qd.ndarray(qd.types.matrix(3, 4, float), shape=(2,))
    assert isinstance(a, qd.ScalarNdarray) and isinstance(b, qd.VectorNdarray) and isinstance(c, qd.MatrixNdarray)
    assert all(isinstance(x, qd.Ndarray) for x in (a, b, c))
    assert a.element_type == qd.i32
    assert b.element_type.element_type() == qd.i32 and b.element_type.shape() == [3]
    assert c.element_type.element_type() == qd.f32 and c.element_type.shape() == [3, 4]
    assert str(c.element_type) == "[Tensor (3, 4) f32]"

    @qd.kernel
    def bump(x: qd.types.ndarray(), y: qd.types.ndarray()):
        x[0] += 1
        y[0, 0][1] += 2

    for _ in range(2):  # the second call takes the fast path, which checks the class
        bump(a, b)
    assert a[0] == 2 and b[0, 0][1] == 4


def test_an_ndarray_given_to_a_template_parameter_is_refused() -> None:
    @qd.kernel
    def copy(src: qd.Template, dst: qd.Template):
        for i in range(4):
            dst[i] = src[i]

    x, y = qd.ndarray(qd.f32, shape=(4,)), qd.ndarray(qd.f32, shape=(4,))
    with pytest.raises(qd.QuadrantsRuntimeTypeError, match=r"Ndarray shouldn't be passed in via `qd.template\(\)`, "
                       r"please annotate your kernel using `qd.types.ndarray\(...\)` instead"):  # fmt: skip
        copy(x, y)


def test_a_tensor_parameter_may_be_none_and_tested_in_static() -> None:
    @qd.kernel
    def use(value: qd.Tensor) -> qd.i32:
        r = 0
        if qd.static(value is not None):
            r = value[0] + 5
        return r

    array = qd.ndarray(qd.i32, shape=(1,))
    array[0] = 3
    field = qd.field(qd.i32, shape=(1,))
    field[0] = 4
    assert (use(None), use(array), use(field), use(None)) == (0, 8, 9, 0)

    @qd.kernel
    def misuse(value: qd.Tensor) -> qd.i32:
        return qd.static(value + 1)

    with pytest.raises(qd.QuadrantsCompilationError, match="'value' is a runtime value"):
        misuse(array)


def test_a_return_left_out_by_qd_static_is_no_return() -> None:
    @qd.kernel
    def k(a: qd.i32, out: qd.types.NDArray[qd.i32, 1], ret: qd.Template) -> bool:
        out[0] = a
        if qd.static(ret):
            return True

    out = qd.ndarray(qd.i32, (2,))
    assert k(3, out, True) and out[0] == 3
    with pytest.raises(qd.QuadrantsSyntaxError, match="Kernel has a return type but does not have a return statement"):
        k(4, out, False)
    assert out[0] == 3  # not run


def test_exception_classes_are_in_quadrants_lang_exception() -> None:
    f = qd.field(qd.i32, shape=())

    @qd.kernel
    def kern():
        qd.atomic_cas(f, 0, 1)

    with pytest.raises(qd.lang.exception.QuadrantsCompilationError):
        kern()
    assert qd.lang.exception.QuadrantsSyntaxError is qd.QuadrantsSyntaxError
    assert qd.lang.exception.QuadrantsIndexError is qd.QuadrantsIndexError
