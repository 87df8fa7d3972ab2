"""Fields, qd.tensor / qd.Tensor."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import quadrants as qd
from tests.conftest import qd_init

Nd = qd.types.NDArray


def test_field_api() -> None:
    f = qd.field(qd.f32, shape=(3, 4))
    assert f.shape == (3, 4) and f.dtype is qd.f32
    np.testing.assert_array_equal(f.to_numpy(), np.zeros((3, 4)))
    f.fill(2)
    f[1, 2] = 5
    assert f[1, 2] == 5.0 and f[0, 0] == 2.0
    src = np.arange(12, dtype=np.float32).reshape(3, 4)
    f.from_numpy(src)
    np.testing.assert_array_equal(f.to_numpy(), src)
    with pytest.raises(ValueError, match="shape"):
        f.from_numpy(np.zeros(5))
    v = qd.Vector.field(3, qd.f32, shape=(5,))
    assert v.shape == (5,) and v.to_numpy().shape == (5, 3) and v.n == 3
    m = qd.Matrix.field(2, 2, qd.i32, shape=(5,))
    assert m.to_numpy().shape == (5, 2, 2)
    v[2] = [1, 2, 3]
    np.testing.assert_array_equal(v[2].to_numpy(), [1, 2, 3])


def test_kernels_use_fields_from_the_enclosing_scope() -> None:
    x = qd.field(qd.f32, shape=8)
    pos = qd.Vector.field(3, qd.f32, shape=(8,))
    total = qd.field(qd.f32, shape=())

    @qd.kernel
    def fill():
        for i in x:
            x[i] = i * 0.5
            pos[i] = qd.Vector([i, 2 * i, 3 * i])

    @qd.kernel
    def reduce():
        for i in range(x.shape[0]):
            total[None] += x[i] + pos[i].z

    fill()
    reduce()
    np.testing.assert_array_equal(x.to_numpy(), np.arange(8) * 0.5)
    np.testing.assert_array_equal(pos.to_numpy()[:, 1], 2 * np.arange(8))
    assert total[None] == pytest.approx((np.arange(8) * 0.5).sum() + 3 * np.arange(8).sum())


def test_a_field_in_a_captured_list_or_dict_is_written_through_its_item() -> None:
    listed = [qd.field(qd.i32, shape=4) for _ in range(2)]
    named = {"v": qd.Vector.field(2, qd.f32, shape=4)}

    @qd.kernel
    def k():
        for i in range(4):
            listed[0][i] = i
            listed[1][i] += listed[0][i] * 2
            named["v"][i][1] = i + 0.5

    k()
    k()
    np.testing.assert_array_equal(listed[0].to_numpy(), np.arange(4))
    np.testing.assert_array_equal(listed[1].to_numpy(), np.arange(4) * 4)  # accumulated over both calls
    np.testing.assert_array_equal(named["v"].to_numpy()[:, 1], np.arange(4) + 0.5)


def test_fields_as_template_arguments_specialize_per_field() -> None:
    a = qd.field(qd.i32, shape=(4, 5))
    b = qd.field(qd.i32, shape=(2, 3))

    @qd.kernel
    def k(f: qd.template(), v: qd.i32):
        for i, j in f:
            f[i, j] = v + i * 10 + j

    k(a, 1)
    k(b, 2)
    i, j = np.indices((4, 5))
    np.testing.assert_array_equal(a.to_numpy(), 1 + i * 10 + j)
    i, j = np.indices((2, 3))
    np.testing.assert_array_equal(b.to_numpy(), 2 + i * 10 + j)
    assert len(k._launchers) == 2


def test_fields_live_in_regions_one_after_another() -> None:
    from quadrants.lang.program import get

    a = qd.field(qd.f32, shape=10)
    b = qd.field(qd.f32, shape=10)
    assert a._region == b._region and b._offset >= a._offset + 40
    a.fill(1)  # first use: the region is allocated and closed
    c = qd.field(qd.f32, shape=10)
    assert c._region == a._region + 1
    assert len(get().fields.regions) >= 2


def test_fields_are_gone_after_reset() -> None:
    f = qd.field(qd.f32, shape=3)
    qd.reset()
    qd_init(log_level="warn")
    with pytest.raises(qd.QuadrantsRuntimeError, match="reset"):
        f.to_numpy()


def test_tensor_annotation_takes_ndarrays_and_fields() -> None:
    @qd.kernel
    def k(t: qd.Tensor):
        for i in range(t.shape[0]):
            t[i] = i * 2

    for t in (qd.tensor(qd.f32, (4,)), qd.tensor(qd.f32, (4,), backend=qd.Backend.FIELD), qd.ndarray(qd.f32, 4),
              qd.field(qd.f32, 4)):  # fmt: skip
        k(t)
        np.testing.assert_array_equal(t.to_numpy(), [0, 2, 4, 6])
    assert isinstance(qd.tensor(qd.f32, 3), qd.Tensor)
    assert qd.tensor(qd.i32, (2, 2), backend=qd.Backend.FIELD).backend is qd.Backend.FIELD


def test_vector_tensors() -> None:
    t = qd.Vector.tensor(3, qd.f32, (4,))

    @qd.kernel
    def k(t: qd.Tensor):
        for i in range(t.shape[0]):
            t[i] = qd.Vector([i, i, i])

    k(t)
    np.testing.assert_array_equal(t.to_numpy()[:, 0], np.arange(4))


def test_an_element_of_a_vector_field_writes_through() -> None:
    f = qd.Vector.field(3, qd.i32, shape=2)
    f[0][2] = 7
    g = qd.Matrix.field(2, 2, qd.f32, shape=(2,))
    g[1][1, 0] = 2.5
    assert f[0][2] == 7 and g[1][1, 0] == 2.5
    np.testing.assert_array_equal(f.to_numpy(), [[0, 0, 7], [0, 0, 0]])


def test_python_scope_field_access_is_whole_elements_as_in_quadrants() -> None:
    f = qd.field(qd.i32, shape=(1, 2, 3))
    with pytest.raises(AssertionError, match="Slicing is not supported on qd.field"):
        f[0, 0] = 1
    with pytest.raises(TypeError, match="illegal element of type: slice.*slicing a qd.field is not supported"):
        qd.field(qd.i32, shape=(2, 2))[0, :]
    with pytest.raises(NotImplementedError, match="Struct for is only available in Quadrants scope"):
        for _ in qd.field(int, shape=3):
            pass
    with pytest.raises(TypeError, match="expected a qd.field"):
        qd.field(qd.f32, shape=(2, 3)).copy_from(np.zeros((2, 3)))
    f[0, 1, 2] = 5
    g = qd.field(qd.i32, shape=2)
    g[np.int32(1)] = 3
    assert f[0, 1, 2] == 5 and g[1] == 3


def test_field_offsets_move_the_index_domain_in_kernels_and_python_scope() -> None:
    """`qd.field(..., offset=...)`: `x[offset]` is the first element, loops over the field run over its domain,
    `to_numpy()` gives the storage; as in Quadrants (the offset was ignored: kernels wrote past the field)."""
    x = qd.field(qd.f32, shape=(3, 2), offset=(-1, 5))
    v = qd.Vector.field(2, qd.i32, shape=4, offset=10)
    s = qd.types.struct(a=qd.i32).field(shape=2, offset=7)

    @qd.kernel
    def fill() -> qd.f32:
        for i, j in x:
            x[i, j] = i * 10 + j
        for i in v:
            v[i] = qd.Vector([i, i * 2])
        for i in s:
            s[i].a = i
        v[11][1] = 99
        total = 0.0
        for I in qd.grouped(x):
            total += x[I]
        return total

    assert fill() == 33.0
    assert x.to_numpy().tolist() == [[-5, -4], [5, 6], [15, 16]] and x.shape == (3, 2)
    assert x[-1, 5] == -5 and x[1, 6] == 16
    assert v.to_numpy().tolist() == [[10, 20], [11, 99], [12, 24], [13, 26]]
    assert s.a.to_numpy().tolist() == [7, 8] and s[8].a == 8
    x[0, 5] = 7
    assert x.to_numpy()[1].tolist() == [7, 6]
    with pytest.raises(qd.QuadrantsIndexError, match="domain"):
        x[2, 5]


def test_needs_grad_allocates_companions() -> None:
    """As in Quadrants, `needs_grad=True` gives a field or ndarray a zeroed `.grad` of its type and shape (and
    `needs_dual` a `.dual`); kernels read and write them like any tensor (Genesis allocates such ndarrays on
    every run). `kernel.grad` itself is tested in tests/passes/test_autodiff_rules.py."""
    f = qd.field(qd.f32, 4, needs_grad=True)
    a = qd.ndarray(qd.f32, 4, needs_grad=True)
    v = qd.Vector.field(3, qd.f32, 4, needs_dual=True)
    assert not hasattr(qd.field(qd.f32, 4), "grad") and not hasattr(v, "grad")
    assert (f.grad.shape, a.grad.shape, v.dual.shape, v.dual.n) == ((4,), (4,), (4,), 3)

    @qd.kernel
    def seed(x: qd.types.NDArray[qd.f32, 1], gx: qd.types.NDArray[qd.f32, 1]):
        for i in range(4):
            x[i] = i
            gx[i] = 10 * i
            f.grad[i] = x[i] + 1
            v.dual[i][2] = 5.0

    seed(a, a.grad)
    assert a.to_numpy().tolist() == [0, 1, 2, 3] and a.grad.to_numpy().tolist() == [0, 10, 20, 30]
    assert f.grad.to_numpy().tolist() == [1, 2, 3, 4] and f.to_numpy().tolist() == [0, 0, 0, 0]
    assert v.dual.to_numpy()[:, 2].tolist() == [5] * 4 and v.to_numpy().sum() == 0


@pytest.mark.parametrize("index", [3, -1, 7, -4])
def test_python_scope_index_outside_the_field_is_an_assertion_error(index: int) -> None:
    """A Python-scope read or write outside a field raises `QuadrantsIndexError`, which is an AssertionError
    (what Quadrants 1.3.3 raises under debug=True) and an IndexError; a negative index is outside the field too
    (numpy alone would take x[-1] as the last element: that read and write went to element 2)."""
    x = qd.field(qd.i32, shape=3)
    x.fill(5)
    for access in (lambda: x[index], lambda: x.__setitem__(index, 1)):
        with pytest.raises(AssertionError, match=rf"indices \({index},\): outside the field's domain") as e:
            access()
        assert isinstance(e.value, IndexError) and isinstance(e.value, qd.QuadrantsIndexError)
    assert x.to_numpy().tolist() == [5, 5, 5]
    m = qd.Matrix.field(2, 2, qd.f32, shape=(2, 3))
    with pytest.raises(qd.QuadrantsIndexError):
        m[1, index]


@pytest.mark.parametrize(
    ("make", "words"),
    [(lambda: qd.field(qd.f32, shape=3, offset=(3, 4)), "The dimensionality of shape and offset must be the same"),
     (lambda: qd.Matrix.field(2, 2, qd.i32, shape=(4, 2, 2), offset=(1, 1)), "The dimensionality of shape and offset"),
     (lambda: qd.Vector.field(3, qd.f32, shape=None, offset=(3,)), "shape cannot be None when offset is set"),
     (lambda: qd.field(qd.f32, shape=None, offset=(3, 4)), "shape cannot be None when offset is set"),
     (lambda: qd.types.struct(a=qd.i32).field(shape=None, offset=2), "shape cannot be None when offset is set")],
)  # fmt: skip
def test_bad_field_offsets_are_compilation_errors(make: Any, words: str) -> None:
    """An offset that does not fit the shape: Quadrants' error type and words."""
    with pytest.raises(qd.QuadrantsCompilationError, match=words):
        make()


@pytest.mark.parametrize("layout", [(3,), (3, 1), (1, 3)])
def test_vector_fields_take_their_values_as_a_vector_column_or_row(layout: tuple[int, ...]) -> None:
    """`from_numpy` of a vector field (and a one-column matrix field) takes each element's n values as a flat
    vector, a column or a row; `to_numpy(keep_dims=True)` gives a column, as in Quadrants."""
    src = np.arange(12, dtype=np.int32).reshape((4,) + layout)
    expect = np.arange(12).reshape(4, 3).tolist()
    for f in (qd.Vector.field(3, qd.i32, shape=4), qd.Matrix.field(3, 1, qd.i32, shape=4)):
        f.from_numpy(src)
        assert f.to_numpy().tolist() == expect and f[1].to_numpy().ravel().tolist() == [3, 4, 5]
        assert f.to_numpy(keep_dims=True).shape == (4, 3, 1)
    with pytest.raises(ValueError, match="Mismatch shape"):  # a matrix's rows and columns are not interchangeable
        qd.Matrix.field(2, 3, qd.i32, shape=2).from_numpy(np.zeros((2, 3, 2), np.int32))
