"""Errors carry Quadrants' words first (programs and their tests match them), then ours, at the located line:
unsupported statements, nested defs, `break` in the parallel loop, assigning a kernel argument, a nested
`qd.ndrange` / `qd.static`, an unrollable `qd.static(...)`, a non-ndarray for an ndarray parameter."""

from __future__ import annotations

from typing import Any

import pytest

import quadrants as qd
from tests.helpers import define


@pytest.mark.parametrize(("body", "words"), [
    ("raise Exception()", 'Unsupported node "Raise"'),
    ("def bar():\n                pass", "Function definition is not allowed in 'qd.kernel'"),
    ("for i in range(3):\n                break", "Cannot break in the outermost loop"),
    ("a = 1", 'Kernel argument "a" is immutable in the kernel'),
    ("a += 1", 'Kernel argument "a" is immutable in the kernel'),
    ("for i in qd.ndrange(qd.ndrange(1)):\n                pass", "an ndrange cannot be nested"),
    ("for i in qd.static(qd.static(range(1))):\n                pass", "qd.static cannot be nested"),
])  # fmt: skip
def test_kernel_errors_use_quadrants_words(body: str, words: str) -> None:
    ns = define(f"""
        @qd.kernel
        def k(a: qd.i32):
            {body}
    """)
    with pytest.raises(qd.QuadrantsSyntaxError, match=words) as e:
        ns["k"](1)
    assert any(line.strip() in str(e.value) for line in body.splitlines())  # the located source line


def test_a_def_inside_a_func_names_the_func() -> None:
    ns = define("""
        @qd.func
        def f():
            def bar():
                pass

        @qd.kernel
        def k():
            f()
    """)
    with pytest.raises(qd.QuadrantsSyntaxError, match="Function definition is not allowed in 'qd.func'"):
        ns["k"]()


def test_unrolling_a_struct_for_is_a_located_error() -> None:
    val = qd.field(qd.i32)
    qd.root.dense(qd.ij, (1, 1)).place(val)
    ns = define("""
        @qd.kernel
        def k():
            for I in qd.static(qd.grouped(val)):
                pass
    """, val=val)
    with pytest.raises(qd.QuadrantsCompilationError, match="cannot unroll this") as e:
        ns["k"]()
    assert "qd.static(qd.grouped(val))" in str(e.value)


def test_a_scalar_for_an_ndarray_parameter() -> None:
    ns = define("""
        @qd.kernel
        def k(a: qd.types.ndarray()):
            pass
    """)
    with pytest.raises(qd.QuadrantsRuntimeTypeError, match="Invalid type for argument a, got 1.2"):
        ns["k"](1.2)


def test_a_loop_name_on_a_nested_loop_warns(capfd: pytest.CaptureFixture[str]) -> None:
    ns = define("""
        @qd.kernel
        def k(a: qd.types.NDArray[qd.i32, 1]):
            qd.loop_config(name="outer")
            for _ in range(2):
                qd.loop_config(name="nested_inner")
                for i in range(4):
                    a[i] += 1
            for j in qd.static(range(2)):
                qd.loop_config(name="unrolled_top")
                for i in range(4):
                    a[i] += 1
    """)
    import numpy as np

    a = np.zeros(4, np.int32)
    capfd.readouterr()
    ns["k"](a)
    err = capfd.readouterr().err
    assert "nested_inner" in err and "nested inside another for-loop" in err
    assert "outer" not in err.replace("nested inside another", "") and "unrolled_top" not in err
    assert a.tolist() == [4, 4, 4, 4]


@pytest.mark.parametrize("make", [
    lambda **kw: qd.field(qd.f32, **kw),
    lambda **kw: qd.Vector.field(3, qd.f32, **kw),
])  # fmt: skip
@pytest.mark.parametrize(("kw", "words"), [
    ({"shape": 3, "order": "ij"}, r"The dimensionality of shape and order must be the same \(1 != 2\)"),
    ({"shape": None, "order": "i"}, "shape cannot be None when order is set"),
    ({"shape": (3, 4, 3), "order": "iji"}, "The axes in order must be different"),
    ({"shape": (3, 4, 3), "order": "ijl"}, "Invalid axis l"),
])  # fmt: skip
def test_a_bad_field_order_is_a_compile_error_in_quadrants_words(make: Any, kw: dict, words: str) -> None:
    with pytest.raises(qd.QuadrantsSyntaxError, match=words):
        make(**kw)


def test_a_method_kernel_of_a_plain_class_is_a_syntax_error() -> None:
    class Plain:
        @qd.kernel
        def k(self) -> qd.i32:
            return 1

    with pytest.raises(qd.QuadrantsSyntaxError, match="must be an instance of a @qd.data_oriented class"):
        Plain().k()


@pytest.mark.parametrize("shape", [0, (3, 0), (-1,)])
def test_a_field_dimension_must_be_positive(shape: Any) -> None:
    with pytest.raises(qd.QuadrantsRuntimeError, match="Every dimension of a Quadrants field should be positive"):
        qd.field(qd.f32, shape=shape)
    with pytest.raises(qd.QuadrantsRuntimeError, match="should be positive"):
        qd.Vector.field(2, qd.f32, shape=shape)


@pytest.mark.parametrize("word", ["is", "is not"])
def test_identity_is_refused_outside_static_and_python_inside_it(word: str) -> None:
    """As in Quadrants: `a is None` in a kernel is an error naming the operator; `qd.static(a is None)` is
    Python's identity on the compile-time value."""
    ns = define(f"""
        @qd.kernel
        def bad(a: qd.template()) -> qd.i32:
            return a {word} None

        @qd.kernel
        def good(a: qd.template()) -> qd.i32:
            r = 0
            if qd.static(a {word} None):
                r = 1
            return r
    """)
    with pytest.raises(qd.QuadrantsSyntaxError, match=f'Operator "{word}" in Quadrants scope is not supported'):
        ns["bad"](None)
    assert ns["good"](None) == (word == "is") and ns["good"](3) == (word == "is not")


@pytest.mark.parametrize(("body", "words"), [
    ("i = 0\n            for i in range(3):\n                pass",
     "Variable 'i' is already declared in the outer scope and cannot be used as loop variable"),
    ("for i in range(3):\n                for i in range(2):\n                    pass", "Variable 'i' is already declared"),
    ("for a in x:\n                pass", "Variable 'a' is already declared"),
    ("for i in range(3, 7, 2):\n                pass", "Range should have 1 or 2 arguments, found 3"),
    ("t = 5", 'Kernel argument "t" is immutable in the kernel'),
])  # fmt: skip
def test_loop_indices_are_new_and_template_arguments_immutable(body: str, words: str) -> None:
    x = qd.field(qd.f32, shape=4)
    ns = define(f"""
        @qd.kernel
        def k(a: qd.i32, t: qd.template()):
            {body}
    """, x=x)  # fmt: skip
    with pytest.raises(qd.QuadrantsSyntaxError, match=words):
        ns["k"](1, 2)


def test_a_loop_index_may_reuse_the_name_of_a_finished_loop_or_a_static_one() -> None:
    """Only a name the function still has is refused: sibling loops, a static loop before, a func's own loop."""
    ns = define("""
        @qd.func
        def tri(n: qd.i32) -> qd.i32:
            s = 0
            for i in range(n):
                s += i
            return s

        @qd.kernel
        def k(t: qd.template()) -> qd.i32:
            s = 0
            for i in qd.static(range(t)):
                s += i
            for i in range(2):
                s += tri(4)
            for i in range(3):
                s += i
            return s
    """)
    assert ns["k"](3) == (0 + 1 + 2) + 2 * 6 + (0 + 1 + 2)
