"""Dense SNode trees (lang/snode.py): building, layout, index lowering through nested levels, struct-for,
Python-scope access, builders, offsets and gradient companions. Oracle: numpy models of the same index
arithmetic, and the layout rules of the module docstring worked out by hand."""

from __future__ import annotations

import numpy as np
import pytest

import quadrants as qd
from quadrants.lang import snode
from tests.helpers import define


def test_aos_cell_layout_by_hand() -> None:
    # Cell of dense(qd.i, 4): a f32 at byte 0, b f64 aligned to 8 -> byte 8, cell 16 bytes (aligned to 8);
    # c vec3 f32 after b: byte 16, 12 bytes -> cell 32 (rounded up to 8).
    a, b, c = qd.field(qd.f32), qd.field(qd.f64), qd.Vector.field(3, qd.f32)
    level = qd.root.dense(qd.i, 4)
    level.place(a, b, c)
    assert level._cell_size_bytes == 32
    size, places = snode.layout(level.parent())
    got = {id(n.field): p for n, p in places}
    assert size == 4 * 32
    assert got[id(a)] == snode.Placement(0, (4,), (((1, 0, 32),),))
    assert got[id(b)] == snode.Placement(8, (4,), (((1, 0, 32),),))
    assert got[id(c)] == snode.Placement(16, (4,), (((1, 0, 32),),))


def test_aos_fields_interleave_in_memory() -> None:
    a, b = qd.field(qd.i32), qd.field(qd.i32)
    qd.root.dense(qd.i, 5).place(a, b)
    ns = define(
        """
        @qd.kernel
        def k():
            for i in a:
                a[i] = i + 1
                b[i] = -(i + 1)
        """,
        a=a, b=b,
    )
    ns["k"]()
    raw = qd.lang.program.get().fields.materialize(a._region)[a._offset : a._offset + 40].view(np.int32)
    assert raw.tolist() == [1, -1, 2, -2, 3, -3, 4, -4, 5, -5]  # one cell = (a, b)


def _nested_model(shape0: tuple[int, int], shape1: tuple[int, int]) -> np.ndarray:
    """The flat position of element (i, j) in dense(ij, shape0).dense(ij, shape1), one 4-byte scalar per cell."""
    n0, m0 = shape0
    n1, m1 = shape1
    pos = np.zeros((n0 * n1, m0 * m1), dtype=np.int64)
    for i in range(n0 * n1):
        for j in range(m0 * m1):
            outer = (i // n1) * m0 + j // m1
            inner = (i % n1) * m1 + j % m1
            pos[i, j] = outer * (n1 * m1) + inner
    return pos


@pytest.mark.parametrize("shape0,shape1", [((2, 3), (2, 2)), ((3, 1), (4, 5)), ((1, 1), (3, 7))])
def test_nested_dense_index_lowering(shape0: tuple[int, int], shape1: tuple[int, int]) -> None:
    y = qd.field(qd.i32)
    qd.root.dense(qd.ij, shape0).dense(qd.ij, shape1).place(y)
    assert y.shape == (shape0[0] * shape1[0], shape0[1] * shape1[1])
    ns = define(
        """
        @qd.kernel
        def k():
            for i, j in y:
                y[i, j] = i * 1000 + j
        """,
        y=y,
    )
    ns["k"]()
    want = np.add.outer(np.arange(y.shape[0]) * 1000, np.arange(y.shape[1]))
    assert (y.to_numpy() == want).all()
    raw = qd.lang.program.get().fields.materialize(y._region)[y._offset :][: 4 * want.size].view(np.int32)
    model = np.zeros(want.size, dtype=np.int64)
    model[_nested_model(shape0, shape1).ravel()] = want.ravel()
    assert (raw == model).all()  # the cells sit where the nested layout puts them


def test_python_scope_reads_and_writes_nested() -> None:
    y, v = qd.field(qd.f32), qd.Vector.field(2, qd.f32)
    qd.root.dense(qd.ij, (2, 2)).dense(qd.j, 3).place(y, v)
    assert y.shape == (2, 6)
    data = np.arange(12, dtype=np.float32).reshape(2, 6)
    y.from_numpy(data)
    v[1, 4] = [5, 6]
    ns = define(
        """
        @qd.kernel
        def k() -> qd.f32:
            s = 0.0
            for I in qd.grouped(y):
                s += y[I] * 2
            return s + v[1, 4][1]
        """,
        y=y, v=v,
    )
    assert ns["k"]() == pytest.approx(2 * data.sum() + 6)
    assert y[1, 5] == 11 and list(v[1, 4]) == [5, 6]
    y.fill(3)
    assert (y.to_numpy() == 3).all() and v.to_numpy()[1, 4].tolist() == [5, 6]


def test_inspection_api() -> None:
    x, y = qd.field(qd.f32), qd.field(qd.i32)
    qd.root.dense(qd.j, 4).place(x)
    b = qd.root.dense(qd.ij, (2, 3))
    c = b.dense(qd.ij, (2, 2))
    c.place(y)
    assert x.shape == (4,)  # only the axes a field's path uses count
    assert y.shape == (4, 6) and y.snode.shape == (4, 6)
    assert y.snode.parent() is c and c.shape == (4, 6) and y.snode.parent(2) is b and b.shape == (2, 3)
    assert y.snode.parent(3) == qd.root
    assert len({x.snode.id, y.snode.id, b.id, c.id}) == 4
    z = qd.field(qd.f32, shape=(3, 4))
    assert z.snode.parent().shape == (3, 4) and z.snode.parent(2) == qd.root
    w = qd.field(qd.f32)
    qd.root.dense(qd.axes(0, 2), (2, 5)).place(w)
    assert w.shape == (2, 5)
    assert qd.ijk == [qd.i, qd.j, qd.k]
    u = qd.field(qd.f32)
    qd.root.dense(qd.ij, (3,)).place(u)  # one extent for two axes: both get it, as in Quadrants
    assert u.shape == (3, 3)
    with pytest.raises(ValueError, match="give one extent per axis"):
        qd.root.dense(qd.ijk, (3, 4))


def test_fields_builder_finalize_and_destroy() -> None:
    fb = qd.FieldsBuilder()
    a = qd.field(qd.i32)
    fb.dense(qd.i, 8).place(a)
    tree = fb.finalize()
    ns = define(
        """
        @qd.kernel
        def k():
            for i in a:
                a[i] = i * i
        """,
        a=a,
    )
    ns["k"]()
    assert a.to_numpy().tolist() == [i * i for i in range(8)]
    with pytest.raises(qd.QuadrantsRuntimeError, match="finalized"):
        fb.dense(qd.i, 2)
    tree.destroy()
    assert tree.destroyed
    with pytest.raises(qd.QuadrantsRuntimeError, match="destroyed"):
        a.to_numpy()


def test_root_starts_a_new_tree_after_first_use() -> None:
    a, b = qd.field(qd.i32), qd.field(qd.i32)
    qd.root.dense(qd.i, 3).place(a)
    a[0] = 1  # first use finalizes qd.root's tree
    qd.root.dense(qd.i, 2).place(b)
    b[1] = 7
    assert a.to_numpy().tolist() == [1, 0, 0] and b.to_numpy().tolist() == [0, 7]
    assert a.snode.parent(2) is not b.snode.parent(2)


def test_place_offset() -> None:
    x = qd.field(qd.i32)
    qd.root.dense(qd.ij, (2, 3)).dense(qd.i, 2).place(x, offset=(-2, 5))
    assert x.shape == (4, 3)
    ns = define(
        """
        @qd.kernel
        def k():
            for i, j in x:
                x[i, j] = i * 10 + j
        """,
        x=x,
    )
    ns["k"]()
    assert x[-2, 5] == -15 and x[1, 7] == 17
    want = np.add.outer(np.arange(-2, 2) * 10, np.arange(5, 8))
    assert (x.to_numpy() == want).all()


def test_unplaced_field_is_a_clear_error() -> None:
    x = qd.field(qd.f32)
    with pytest.raises(qd.QuadrantsRuntimeError, match="not placed"):
        x.to_numpy()
    placed = qd.field(qd.f32, shape=3)
    with pytest.raises(qd.QuadrantsRuntimeError, match="cannot be placed"):
        qd.root.dense(qd.i, 3).place(placed)


def test_grad_companions_in_one_cell() -> None:
    x = qd.field(qd.f32, needs_grad=True)
    y = qd.field(qd.f32)
    level = qd.root.dense(qd.i, 4)
    level.place(x, x.grad, y)
    level.lazy_grad()  # y.grad: finalize puts it in the same cell
    ns = define(
        """
        @qd.kernel
        def k():
            for i in x:
                x[i] = i
                x.grad[i] = 10 * i
                y[i] = 100 * i
                y.grad[i] = 1000 * i
        """,
        x=x, y=y,
    )
    ns["k"]()
    assert y.grad.snode.parent() is level and level._cell_size_bytes == 16
    for f, scale in ((x, 1), (x.grad, 10), (y, 100), (y.grad, 1000)):
        assert f.to_numpy().tolist() == [scale * i for i in range(4)]


def test_lazy_grad_places_beside_primal() -> None:
    x = qd.field(qd.f32)
    n = qd.field(qd.i32)
    qd.root.dense(qd.i, 3).place(x, n)
    qd.root.lazy_grad()
    x.grad[2] = 4.0
    assert getattr(n, "grad", None) is None  # integers get no gradient
    assert x.grad.snode.parent() is x.snode.parent() and x.grad.to_numpy().tolist() == [0, 0, 4]


def test_layout_is_in_the_ir_text() -> None:
    a, b = qd.field(qd.f32), qd.field(qd.f32)
    qd.root.dense(qd.i, 4).dense(qd.i, 2).place(a)
    qd.root.dense(qd.i, 8).place(b)  # same tree, another level
    from tests.golden_support import GoldenCase, ir_text

    src = """
        @qd.kernel
        def k():
            for i in f:
                f[i] = 1.0
        """
    ta = ir_text(GoldenCase(define(src, f=a)["k"], []))
    tb = ir_text(GoldenCase(define(src, f=b)["k"], []))
    assert "terms ((" in ta and ta != tb
