"""`qd.ndarray` and external arrays as kernel arguments."""

from __future__ import annotations

import numpy as np
import pytest

import quadrants as qd

Nd = qd.types.NDArray


def test_ndim_is_what_quadrants_reports_the_element_dims_of_a_matrix_field_and_absent_elsewhere() -> None:
    """Quadrants (0.5.2, 1.3.3) has no `ndim` on ndarrays and scalar fields, and a vector / matrix field's `ndim`
    is its element's (1 / 2), not its shape's. Genesis reads a batched array's element dims with
    `getattr(x, "ndim", len(x.element_shape))` to move the batch axis: a shape-length `ndim` here moved the wrong
    axis, so its test_data_accessor compared link positions with scrambled ones."""
    vec_nd = qd.ndarray(qd.types.vector(3, qd.f64), (14, 3))
    scalar_nd = qd.ndarray(qd.f32, (4, 5))
    vec_field = qd.Vector.field(3, qd.f32, shape=(14, 3))
    mat_field = qd.Matrix.field(2, 2, qd.f32, shape=(4,))
    scalar_field = qd.field(qd.f32, shape=(4, 5))
    for x in (vec_nd, scalar_nd, scalar_field):
        assert not hasattr(x, "ndim"), type(x)
    assert vec_field.ndim == 1 and mat_field.ndim == 2
    elem_ndim = getattr(vec_nd, "ndim", len(vec_nd.element_shape))
    assert elem_ndim == 1


def test_ndarray_api_round_trips() -> None:
    a = qd.ndarray(qd.f32, (3, 4))
    assert a.shape == (3, 4) and a.dtype is qd.f32
    np.testing.assert_array_equal(a.to_numpy(), np.zeros((3, 4), np.float32))  # starts zeroed
    a.fill(2.5)
    assert a[1, 2] == 2.5 and isinstance(a[1, 2], float)
    a[1, 2] = 7
    src = np.arange(12, dtype=np.float32).reshape(3, 4)
    a.from_numpy(src)
    out = a.to_numpy()
    np.testing.assert_array_equal(out, src)
    out[0, 0] = 99  # to_numpy is a copy
    assert a[0, 0] == 0.0
    assert qd.ndarray(qd.i32, 5).shape == (5,)


def test_from_numpy_shape_mismatch_raises_and_f64_converts_with_warning(capsys) -> None:
    a = qd.ndarray(qd.f32, (4,))
    with pytest.raises(ValueError, match="shape"):
        a.from_numpy(np.zeros(5, np.float32))
    a.from_numpy(np.array([1.5, 2.5, 3.5, 4.5]))
    np.testing.assert_array_equal(a.to_numpy(), [1.5, 2.5, 3.5, 4.5])
    assert "converting float64" in capsys.readouterr().err


def test_kernel_writes_ndarray_in_place() -> None:
    @qd.kernel
    def k(a: Nd[qd.i32, 2]):
        for i, j in a:
            a[i, j] = i * a.shape[1] + j

    a = qd.ndarray(qd.i32, (5, 7))
    k(a)
    np.testing.assert_array_equal(a.to_numpy(), np.arange(35).reshape(5, 7))


def test_numpy_arrays_are_passed_zero_copy_and_written_in_place() -> None:
    @qd.kernel
    def k(a: Nd[qd.f64, 1]):
        for i in range(a.shape[0]):
            a[i] += 1.0

    a = np.zeros(10)
    view = a[:]
    k(a)
    np.testing.assert_array_equal(view, np.ones(10))


def test_non_contiguous_numpy_arrays_are_written_back() -> None:
    @qd.kernel
    def k(a: Nd[qd.i32, 2]):
        for i, j in a:
            a[i, j] = i * 10 + j

    base = np.zeros((6, 8), np.int32)
    view = base[::2, 1::3]
    k(view)
    i, j = np.indices(view.shape)
    np.testing.assert_array_equal(view, i * 10 + j)
    assert base[1].sum() == 0


def test_numpy_dtype_mismatch_raises_value_error() -> None:
    @qd.kernel
    def k(a: Nd[qd.f32, 1]):
        pass

    with pytest.raises(ValueError, match="required array has dtype=f32"):
        k(np.zeros(3))
    with pytest.raises(qd.QuadrantsRuntimeTypeError, match="Expect element type f32 for argument a, but get i32"):
        k(qd.ndarray(qd.i32, 3))
    with pytest.raises(ValueError, match=r"argument a - required ndim=1, but 2d ndarray with shape \(3, 3\) is"):
        k(qd.ndarray(qd.f32, (3, 3)))


def test_ndarray_element_type_mismatches_use_quadrants_words() -> None:
    """The messages and classes real Quadrants 1.3.3 gives (its tests match them): a TypeError naming the
    element type for a scalar annotation, a ValueError naming VectorType/MatrixType for a vector/matrix one."""

    @qd.kernel
    def scalar(a: Nd[qd.f32, 2]):
        pass

    @qd.kernel
    def vector(a: Nd[qd.types.vector(3, qd.f32), 1]):
        pass

    @qd.kernel
    def matrix(a: Nd[qd.types.matrix(2, 2, qd.i32), 1]):
        pass

    with pytest.raises(TypeError, match=r"Expect element type f32 for argument a, but get \[Tensor \(3\) i32\]"):
        scalar(qd.ndarray(qd.types.vector(3, qd.i32), (2, 2)))
    with pytest.raises(ValueError, match=r"required element type: VectorType\[3, f32\], but \[Tensor \(2, 2\) f32\]"):
        vector(qd.ndarray(qd.types.matrix(2, 2, qd.f32), 3))
    with pytest.raises(ValueError, match=r"required element type: MatrixType\[2,2, i32\], but \[Tensor \(2\) i32\]"):
        matrix(qd.ndarray(qd.types.vector(2, qd.i32), 3))


def test_unannotated_dtype_specializes_per_dtype() -> None:
    @qd.kernel
    def k(a: Nd, b: Nd):
        for i in range(a.shape[0]):
            b[i] = a[i] * 2

    for dt in (np.int32, np.float64, np.uint8):
        a = np.arange(5, dtype=dt)
        b = np.zeros_like(a)
        k(a, b)
        np.testing.assert_array_equal(b, a * 2)
    assert len(k._launchers) == 3


def test_mixing_numpy_and_ndarray_arguments() -> None:
    @qd.kernel
    def k(a: Nd[qd.f32, 1], b: Nd[qd.f32, 1]):
        for i in range(a.shape[0]):
            b[i] = a[i] + 1

    a = qd.ndarray(qd.f32, 4)
    a.fill(1)
    b = np.zeros(4, np.float32)
    k(a, b)
    k(a, b)  # the fast path of the first call's types
    np.testing.assert_array_equal(b, 2)
    c = qd.ndarray(qd.f32, 4)
    k(b, c)  # other argument kinds: general path, then a new fast path
    np.testing.assert_array_equal(c.to_numpy(), 3)


def test_bool_and_f16_ndarrays() -> None:
    @qd.kernel
    def k(a: Nd[qd.u1, 1], h: Nd[qd.f16, 1]):
        for i in range(a.shape[0]):
            a[i] = h[i] > 0.5
            h[i] = h[i] * 2.0

    a = qd.ndarray(qd.u1, 4)
    h = np.array([0.25, 0.75, 1.5, -1.0], np.float16)
    k(a, h)
    np.testing.assert_array_equal(a.to_numpy(), [False, True, True, False])
    np.testing.assert_array_equal(h, np.array([0.5, 1.5, 3.0, -2.0], np.float16))


@pytest.mark.parametrize("shape", [2**31, 1.5, 0, (1, 0), (1, 0.5), (1, 2**31), -3, True])
def test_invalid_ndarray_shapes_are_refused(shape: object) -> None:
    """Kernels read `x.shape[k]` as i32: a dimension of 2**31 or more would be read wrongly, so it is refused (as
    Quadrants refuses it), like zero, negative and fractional sizes."""
    with pytest.raises(qd.QuadrantsRuntimeError, match="is not a valid shape for ndarray"):
        qd.ndarray(qd.f32, shape)
    assert qd.ndarray(qd.f32, (1, np.int32(3), 4096)).shape == (1, 3, 4096) and qd.ndarray(qd.f32, ()).shape == ()


def test_an_element_of_a_vector_or_matrix_ndarray_writes_through() -> None:
    """`a[i][j] = v` in Python scope writes the ndarray, as Quadrants' element proxies do (it used to write a
    copy and lose the value silently); a held element sees later writes, and writes through it land."""
    a = qd.Vector.ndarray(3, qd.i32, 2)
    a[0][1] = 5
    m = qd.Matrix.ndarray(2, 2, qd.f32, 2)
    m[1][0, 1] = 3.0
    held = a[1]
    a[1] = [9, 9, 9]
    w = a[0]
    w[0] = 4
    assert a[0][1] == 5 and m[1][0, 1] == 3.0 and held[0] == 9 and a[0][0] == 4
    np.testing.assert_array_equal(a.to_numpy(), [[4, 5, 0], [9, 9, 9]])


def test_deepcopy_copies_the_data() -> None:
    import copy

    x = qd.ndarray(qd.i32, shape=4)
    x[0] = 1
    v = qd.Vector.ndarray(3, qd.i32, 2)
    v[1][2] = 4
    y, w = copy.deepcopy(x), copy.deepcopy(v)
    x[0], v[1][2] = 5, 0
    assert (y[0], y.shape, y.dtype) == (1, (4,), qd.i32) and w[1][2] == 4 and w.to_numpy().shape == (2, 3)


def test_python_scope_indices_must_name_every_dimension() -> None:
    z = qd.ndarray(dtype=qd.f32, shape=(4, 4))
    with pytest.raises(qd.QuadrantsIndexError, match="2d ndarray indexed with 1d indices"):
        z[0]
    with pytest.raises(qd.QuadrantsIndexError, match="2d ndarray indexed with 3d indices"):
        z[0, 0, 0] = 1.0
    z[1, 2] = 3.0
    assert z[1, 2] == 3.0 and z.to_numpy()[1:3, 2].tolist() == [3.0, 0.0]


def test_numpy_dimension_mismatches_use_quadrants_words() -> None:
    @qd.kernel
    def mat(arr: qd.types.ndarray(dtype=qd.math.mat3, ndim=2)):
        pass

    @qd.kernel
    def scalar(arr: qd.types.ndarray(dtype=qd.f32, ndim=2)):
        pass

    with pytest.raises(ValueError, match=r"required array has ndim=2 element_dim=2, array with 3 dimensions"):
        mat(np.zeros((2, 2, 3), np.float32))
    with pytest.raises(ValueError, match=r"required array has ndim=2, array with 4 dimensions is provided"):
        scalar(np.zeros((2, 2, 3, 3), np.float32))
    with pytest.raises(ValueError, match=r"required element_shape=\(3, 3\), array with element shape of \(2, 3\)"):
        mat(np.zeros((2, 2, 2, 3), np.float32))


def test_sizeless_vector_and_matrix_annotations_take_any_size_of_their_kind() -> None:
    """`NDArray[qd.types.vector(), 1]` takes vectors of any size (one compile each), refuses matrices; and
    `qd.types.matrix()` the other way round; a sizeless type builds no value."""
    from quadrants.lang import impl

    @qd.kernel
    def fill_v(x: qd.types.NDArray[qd.types.vector(), 1]):
        for I in qd.grouped(x):
            x[I] = 1.0

    @qd.kernel
    def fill_m(x: qd.types.NDArray[qd.types.matrix(), 1]):
        for I in qd.grouped(x):
            x[I] = 2.0

    v3, v2, m2 = qd.ndarray(qd.math.vec3, (3,)), qd.ndarray(qd.math.vec2, (4,)), qd.ndarray(qd.math.mat2, (2,))
    before = impl.get_runtime().get_num_compiled_functions()
    fill_v(v3)
    fill_v(v2)
    fill_m(m2)
    assert impl.get_runtime().get_num_compiled_functions() == before + 3
    np.testing.assert_array_equal(v3.to_numpy(), np.ones((3, 3)))
    np.testing.assert_array_equal(v2.to_numpy(), np.ones((4, 2)))
    np.testing.assert_array_equal(m2.to_numpy(), np.full((2, 2, 2), 2.0))
    with pytest.raises(ValueError, match=r"Invalid value for argument x - required element_dim=1"):
        fill_v(m2)
    with pytest.raises(ValueError, match=r"Invalid value for argument x - required element_dim=2"):
        fill_m(v3)
    with pytest.raises(TypeError, match="has no size"):
        qd.types.vector()(1.0, 2.0)
    with pytest.raises(TypeError, match="both sizes"):
        qd.types.matrix(2)


def test_an_ndarray_no_longer_referenced_is_freed_even_after_a_launch() -> None:
    """The runtime keeps no ndarray alive: not the program, not a kernel's launch caches (Quadrants'
    `prog._get_num_ndarrays()` and `get_runtime().ndarrays` count the live ones); a new program counts from none."""
    import gc

    from quadrants.lang import impl

    qd.init(arch=qd.cpu, log_level="warn")
    rt = impl.get_runtime()
    assert rt.prog._get_num_ndarrays() == 0

    @qd.kernel
    def bump(x: qd.types.NDArray[qd.i32, 1]):
        for i in x:
            x[i] += 1

    def use_one() -> None:
        a = qd.ndarray(qd.i32, (1000,))
        v = qd.Vector.ndarray(3, qd.f64, (7,))
        bump(a)
        assert rt.prog._get_num_ndarrays() == 2 and len(rt.ndarrays) == 2
        assert (a._get_element_size(), a._get_nelement(), v._get_element_size(), v._get_nelement()) == (4, 1000, 24, 7)

    use_one()
    gc.collect()
    assert rt.prog._get_num_ndarrays() == 0
    kept = qd.ndarray(qd.f32, (3,))
    assert rt.ndarrays == [kept]
    qd.init(arch=qd.cpu, log_level="warn")
    assert rt.prog._get_num_ndarrays() == 0
