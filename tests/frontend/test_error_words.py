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
