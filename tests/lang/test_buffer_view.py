"""qd.BufferView: host-side windows of 1-D ndarrays and their use in kernels and funcs (runtime/buffer_view.py,
frontend/views.py). Values checked against what real Quadrants 1.3.3 gives for the same programs."""

from __future__ import annotations

import numpy as np
import pytest

import quadrants as qd
from quadrants import BufferView

N = 32


def _zeros(dtype=qd.f32):  # noqa: ANN001, ANN202
    a = qd.ndarray(dtype, shape=(N,))
    a.fill(0)
    return a


def test_slicing_a_1d_ndarray_gives_a_view_with_python_bounds() -> None:
    a = _zeros()
    v = a[-8:]
    assert isinstance(v, BufferView) and (v.offset, v.size, v.shape) == (24, 8, (8,)) and v.get_ndarray() is a
    w = v[2:100]  # clipped to the view, as a Python slice is
    assert (w.offset, w.size) == (26, 6)
    assert (v.subview(1, 3).offset, v.subview(1, 3).size) == (25, 3)


@pytest.mark.parametrize(
    "make, err, words",
    [
        (lambda a: a[::2], ValueError, "step=1"),
        (lambda a: BufferView(a, 30, 4), ValueError, "out of range"),
        (lambda a: BufferView(a, -1, 2), ValueError, "out of range"),
        (lambda a: a[:8].subview(4, 8), ValueError, "subview out of range"),
        (lambda a: a[:8][0], TypeError, "slice"),
        (lambda a: BufferView(a[:8], 0, 1), TypeError, "subview"),
    ],
)
def test_bad_views_are_refused_by_name(make, err, words) -> None:  # noqa: ANN001
    with pytest.raises(err, match=words):
        make(_zeros())


def test_a_2d_ndarray_cannot_be_sliced_into_a_view() -> None:
    with pytest.raises(TypeError, match="1D"):
        qd.ndarray(qd.f32, (4, 4))[:2]


def test_a_kernel_writes_only_inside_the_view_and_reuses_its_code_for_other_offsets() -> None:
    a = _zeros()

    @qd.kernel
    def fill(v: BufferView[qd.f32], x: qd.f32):
        for i in range(v.size):
            v[i] += x + i

    fill(a[4:8], 1.0)
    compiles = qd.stats()["compiles"]
    fill(a[20:22], 10.0)
    fill(_zeros()[0:32], 0.0)  # another ndarray, the whole of it
    assert qd.stats()["compiles"] == compiles  # offset, size and ndarray are runtime arguments
    want = np.zeros(N, np.float32)
    want[4:8] = [1, 2, 3, 4]
    want[20:22] = [10, 11]
    np.testing.assert_array_equal(a.to_numpy(), want)


def test_views_made_inside_kernels_and_passed_to_funcs() -> None:
    a = _zeros(qd.i32)

    @qd.func
    def put(v: BufferView, k: qd.i32, x: qd.i32):
        v[k] = x

    @qd.kernel
    def k(arr: qd.types.ndarray(qd.i32, ndim=1), off: qd.i32):
        whole = BufferView(arr, off, 10)  # [off, off + 10)
        sub = whole.subview(2, 5)  # [off + 2, off + 7)
        tail = sub[-2:]  # the last two of sub
        for i in range(sub.size):
            put(sub, i, 1)
        for i in range(tail.size):
            tail[i] += 10
        arr[0] = whole.offset + 100 * sub.size

    k(a, 3)
    want = np.zeros(N, np.int32)
    want[5:10] = 1
    want[8:10] += 10
    want[0] = 3 + 500
    np.testing.assert_array_equal(a.to_numpy(), want)


def test_vector_and_matrix_elements_through_a_view() -> None:
    v = qd.Vector.ndarray(3, qd.f32, (N,))
    m = qd.Matrix.ndarray(2, 2, qd.f32, (N,))

    @qd.kernel
    def k(a: BufferView, b: BufferView[qd.types.matrix(2, 2, qd.f32)]):
        for i in range(a.size):
            a[i][1] = 2.0
            a[i] += 1.0
        for i in range(b.size):
            b[i][0, 1] = a[i][1] * 10.0

    k(v[3:5], m[3:5])
    out_v, out_m = v.to_numpy(), m.to_numpy()
    assert out_v[3:5].tolist() == [[1, 3, 1]] * 2 and not out_v[:3].any() and not out_v[5:].any()
    assert out_m[3:5, 0, 1].tolist() == [30, 30] and out_m.sum() == 60


def test_a_view_parameter_refuses_other_arguments_and_other_dtypes() -> None:
    @qd.kernel
    def k(v: BufferView[qd.f32]):
        for i in range(v.size):
            v[i] = 0.0

    with pytest.raises(qd.QuadrantsRuntimeTypeError, match="expects a BufferView"):
        k(_zeros())
    with pytest.raises(Exception, match="dtype|i32|f32"):
        k(_zeros(qd.i32)[:4])


def test_a_slice_with_a_step_in_a_kernel_is_a_syntax_error() -> None:
    @qd.kernel
    def k(v: BufferView[qd.f32]):
        w = v[::2]
        w[0] = 1.0

    with pytest.raises(qd.QuadrantsSyntaxError, match="explicit step"):
        k(_zeros()[:8])


def test_debug_mode_checks_name_the_view_the_kernel_and_the_funcs() -> None:
    from tests.conftest import qd_init

    qd_init(debug=True)
    a = _zeros()

    @qd.func
    def write(v: BufferView[qd.f32], k: qd.i32):
        v[k] = 1.0

    @qd.kernel
    def k(v: BufferView[qd.f32], at: qd.i32):
        for i in range(1):
            write(v, at + i)

    k(a[8:24], 15)  # the last element: no error
    for bad in (16, -1):
        with pytest.raises(qd.QuadrantsAssertionError) as e:
            k(a[8:24], bad)
        msg = str(e.value)
        assert f"BufferView Out Of Range: kernel[k] tid=n/a, got index {bad} (offset=8, size=16)." in msg
        assert "Callstack:\nk (" in msg and "\n  write (" in msg
    assert a.to_numpy()[23] == 1.0 and a.to_numpy().sum() == 1.0  # nothing written by the failed launches

    @qd.kernel
    def sub(v: BufferView[qd.f32], o: qd.i32):
        w = v.subview(o, 4)
        w[0] = 2.0

    @qd.kernel
    def make(x: qd.types.ndarray(qd.f32, ndim=1), o: qd.i32):
        w = BufferView(x, o, 8)
        w[0] = 3.0

    with pytest.raises(qd.QuadrantsAssertionError, match=r"subview Out Of Range: kernel\[sub\] .* subview offset=14, "
                                                         r"subview size=4, parent size=16"):  # fmt: skip
        sub(a[8:24], 14)
    with pytest.raises(qd.QuadrantsAssertionError, match="construction out of range: offset=28, size=8, ndarray length=32"):
        make(a, 28)
    make(a, 24)
    assert a.to_numpy()[24] == 3.0
