"""Python lists, tuples and dicts whose items are assigned in a kernel (frontend/seqvars.py): as in Quadrants,
their items are local variables, so `verts[1] = verts[2]` works under a runtime `if`, and a name given a new list
inside a runtime loop carries it to the next iteration. A name bound to a Python object outside a runtime block
cannot be rebound inside it (it could not follow the condition): that is an error, not a silent wrong value."""

from __future__ import annotations

import ast
import textwrap

import numpy as np
import pytest

import quadrants as qd
from quadrants.errors import QuadrantsCompilationError
from quadrants.frontend import seqvars
from quadrants.frontend.source import FunctionSource


def test_items_swap_under_a_runtime_condition() -> None:
    # the shape of the implicit-FEM example: a triangle's vertices reordered when it faces the wrong way
    tris = qd.Vector.field(3, qd.i32, shape=4)
    out = qd.Vector.field(3, qd.i32, shape=4)
    flip = qd.field(qd.i32, shape=4)

    @qd.kernel
    def orient():
        for c in tris:
            verts = [tris[c][j] for j in range(3)]
            if flip[c]:
                tmp = verts[1]
                verts[1] = verts[2]
                verts[2] = tmp
            out[c] = qd.Vector([verts[0], verts[1], verts[2]])

    t = np.arange(12, dtype=np.int32).reshape(4, 3)
    f = np.array([1, 0, 0, 1], dtype=np.int32)
    tris.from_numpy(t)
    flip.from_numpy(f)
    orient()
    want = t.copy()
    want[f == 1] = want[f == 1][:, [0, 2, 1]]
    np.testing.assert_array_equal(out.to_numpy(), want)
    np.testing.assert_array_equal(tris.to_numpy(), t)  # the list holds copies: the field is untouched


def test_items_keep_their_types_and_take_every_kind_of_update(caplog: pytest.LogCaptureFixture) -> None:
    out = qd.field(qd.f32, shape=8)

    @qd.kernel
    def k(c: qd.i32):
        lst = [c, 2]
        if c == 0:
            lst[1] = 5
        out[0] = lst[1]
        ints = [1, 2]
        ints[0] = 2.7  # an i32 variable: truncated, as in Quadrants
        out[1] = ints[0]
        mixed = [qd.Vector([1, 2]), 3]
        mixed[0] = qd.Vector([5, 6])
        mixed[0][1] = 9
        mixed[1] += 4
        out[2] = mixed[0][0] * 10 + mixed[0][1] + mixed[1] * 100
        t = (1, 2)
        t[-2] = 5
        d = {"x": 1, "y": 2.5}
        d["y"] = 7.5
        out[3] = t[0] + d["y"]
        for j in range(4):
            lst[0] += j
        out[4] = lst[0]
        m = [[1, 2], [3, 4]]
        m[1][0] = 8
        m[0] = [m[1][1], m[0][0]]
        out[5] = m[0][0] * 100 + m[0][1] * 10 + m[1][0]
        qd.atomic_add(lst[1], 2)
        out[6] = lst[1] + len(m) * 1000

    k(0)
    assert "local variable 'ints[0]' of type i32 truncates it" in caplog.text
    np.testing.assert_allclose(out.to_numpy()[:7], [5, 2, 59 + 700, 12.5, 6, 418, 7 + 2000])
    k(3)
    np.testing.assert_allclose(out.to_numpy()[[0, 4, 6]], [2, 9, 4 + 2000])


def test_a_list_given_a_new_list_in_a_runtime_loop_or_if() -> None:
    @qd.kernel
    def fib(n: qd.i32) -> qd.f32:
        pair = [0.0, 1.0]
        for _ in range(n):
            pair = [pair[1], pair[0] + pair[1]]
        return pair[1]

    @qd.kernel
    def pick(c: qd.i32) -> qd.i32:
        lst = [1, 2]
        if c:
            lst = [3, 4]
        else:
            lst = (lst[1], lst[0])
        return lst[0] * 10 + lst[1]

    @qd.kernel
    def rebound(n: qd.i32) -> qd.i32:
        lst = [1, 2]
        lst = [n, n, n]  # the same level: Python's rebinding, to another length
        return lst[0] + lst[2] + len(lst)

    assert [fib(n) for n in range(6)] == [1, 1, 2, 3, 5, 8]
    assert pick(1) == 34 and pick(0) == 21
    assert rebound(4) == 11


def test_lists_that_are_not_assigned_through_stay_python_objects() -> None:
    a = qd.field(qd.f32, shape=3)
    b = qd.field(qd.f32, shape=3)

    @qd.kernel
    def k(x: qd.f32):
        fields = [a, b]
        vals = [x, x * 2]
        vals.append(4.5)  # a Python list: append works and is seen by later reads
        for i in qd.static(range(2)):
            fields[i][0] = vals[i + 1]

    k(1.5)
    assert a[0] == 3.0 and b[0] == 4.5

    src = textwrap.dedent("""
        def f(x):
            once = [x, x]
            twice = [x]
            twice = [x, x]
            through = [x]
            through[0] = 1
            nested = [[x]]
            nested[0][0] += 1
            grown = [x]
            grown.append(x)
            grown[0] = 2
            qd.atomic_add(hit[0], 1)
            def inner():
                hidden = [1]
                hidden[0] = 2
    """)
    tree = ast.parse(src).body[0]
    assert isinstance(tree, ast.FunctionDef)
    source = FunctionSource(fn=lambda: None, name="f", filename="<test>", first_line=1, lines=src.splitlines(),
                            indent=0, tree=tree)  # fmt: skip
    assert seqvars.mutable_names(source) == {"twice", "through", "nested", "hit"}


def test_misuse_is_reported_where_it_happens() -> None:
    @qd.kernel
    def runtime_index(i: qd.i32) -> qd.i32:
        lst = [1, 2]
        lst[i] = 3
        return lst[0]

    with pytest.raises(QuadrantsCompilationError, match=r"compile-time key; this index is a runtime value") as e:
        runtime_index(0)
    assert "lst[i] = 3" in str(e.value)

    @qd.kernel
    def other_length(c: qd.i32) -> qd.i32:
        lst = [1, 2]
        if c:
            lst = [1, 2, 3]
        return lst[0]

    with pytest.raises(qd.QuadrantsTypeError, match=r"cannot store a list of 3 items into a list of 2 variables"):
        other_length(1)

    @qd.kernel
    def out_of_range() -> qd.i32:
        lst = [1, 2]
        lst[2] = 3
        return lst[0]

    with pytest.raises(QuadrantsCompilationError, match=r"index 2 is out of this list of 2 items"):
        out_of_range()

    f = qd.field(qd.f32, shape=2)
    g = qd.field(qd.f32, shape=2)

    @qd.kernel
    def choose_field(c: qd.i32):
        target = f
        if c:
            target = g  # a field cannot be chosen at run time: this used to bind `target` to g for every c
        target[0] = 1.0

    with pytest.raises(QuadrantsCompilationError, match=r"'target' is bound to a compile-time ScalarField outside "
                                                        r"this runtime if/loop") as e:  # fmt: skip
        choose_field(0)
    assert "target = g" in str(e.value)
