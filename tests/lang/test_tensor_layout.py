"""`qd.tensor(layout=)`: storage in layout order, canonical indices and shapes in kernels and in Python, on both
backends. The oracle is numpy: a kernel writes a function of the canonical index, and the memory in storage order
must be numpy's transpose of the canonical result."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import quadrants as qd
from tests.helpers import define

BACKENDS = [qd.Backend.NDARRAY, qd.Backend.FIELD]


@pytest.mark.parametrize("layout", [(1, 0, 2), (2, 0, 1)])
def test_the_cuda_backend_passes_an_ndarray_its_storage_shape(layout: tuple) -> None:
    """The CUDA launcher once passed an ndarray's canonical shape where the kernel indexes its storage order
    (runtime/cuda_launch.py): every non-identity layout read and wrote the wrong elements there."""
    from tests.conftest import qd_init

    qd_init(arch=qd.cuda, cuda_emulate=True)
    ns = define("""
        @qd.kernel
        def fill(x: qd.Tensor, y: qd.Tensor):
            for i, j, k in qd.ndrange(x.shape[0], x.shape[1], x.shape[2]):
                x[i, j, k] = i * 100 + j * 10 + k
            for i, j, k in y:
                y[i, j, k] = x[i, j, k] * 2 + y.shape[2]
    """)
    x = qd.tensor(qd.i32, shape=(2, 3, 4), layout=layout)
    y = qd.tensor(qd.i32, shape=(2, 3, 4), layout=layout[::-1])
    ns["fill"](x, y)
    idx = np.indices((2, 3, 4))
    np.testing.assert_array_equal(x.to_numpy(), idx[0] * 100 + idx[1] * 10 + idx[2])
    np.testing.assert_array_equal(y.to_numpy(), x.to_numpy() * 2 + 4)
    np.testing.assert_array_equal(_storage(x), np.transpose(x.to_numpy(), layout))


def _storage(t: qd.Tensor) -> np.ndarray:
    """The memory of a wrapped tensor in storage order (physical axes): the canonical view with its axes put
    back in layout order, which must then be contiguous (so it is the memory as laid out)."""
    impl = t._unwrap()
    if isinstance(impl, qd.Ndarray):
        return impl._arr
    mem = impl._memory()
    out = mem.transpose(tuple(t.layout or range(len(t.shape))) + tuple(range(len(t.shape), mem.ndim)))
    assert out.flags.c_contiguous
    return out


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("layout", [(1, 0), (0, 1)])
def test_a_kernel_indexes_canonically_and_memory_is_in_layout_order(backend: qd.Backend, layout: tuple) -> None:
    ns = define("""
        @qd.kernel
        def k(x: qd.Tensor):
            for i, j in qd.ndrange(x.shape[0], x.shape[1]):
                x[i, j] = i * 10 + j
    """)
    t = qd.tensor(qd.i32, shape=(3, 5), layout=layout, backend=backend)
    ns["k"](t)
    canonical = np.add.outer(np.arange(3) * 10, np.arange(5))
    assert t.shape == (3, 5) and t.layout == (None if layout == (0, 1) else layout)
    np.testing.assert_array_equal(t.to_numpy(), canonical)
    np.testing.assert_array_equal(_storage(t).reshape(-1), canonical.transpose(layout).reshape(-1))
    assert t[2, 4] == 24 and t[0, 3] == 3  # host indexing through the wrapper is canonical too


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_rank3_layout_reads_what_python_wrote(backend: qd.Backend) -> None:
    ns = define("""
        @qd.kernel
        def total(x: qd.Tensor) -> qd.f64:
            s = 0.0
            for i, j, k in qd.ndrange(x.shape[0], x.shape[1], x.shape[2]):
                s += x[i, j, k] * (i * 100 + j * 10 + k)
            return s
    """)
    src = np.random.default_rng(1).random((2, 3, 4))
    t = qd.tensor(qd.f64, shape=(2, 3, 4), layout=(2, 0, 1), backend=backend)
    t.from_numpy(src)
    weights = np.arange(2)[:, None, None] * 100 + np.arange(3)[None, :, None] * 10 + np.arange(4)[None, None, :]
    assert ns["total"](t) == pytest.approx(float((src * weights).sum()))
    assert _storage(t).shape == (4, 2, 3)


def test_the_layout_is_part_of_the_kernel_specialization() -> None:
    ns = define("""
        @qd.kernel
        def first_row(x: qd.Tensor, out: qd.types.NDArray[qd.f32, 1]):
            for j in range(x.shape[1]):
                out[j] = x[0, j]
    """)
    src = np.arange(6, dtype=np.float32).reshape(2, 3)
    out = np.zeros(3, np.float32)
    for layout in ((0, 1), (1, 0), (0, 1)):
        t = qd.tensor(qd.f32, shape=(2, 3), layout=layout)
        t.from_numpy(src)
        ns["first_row"](t, out)
        np.testing.assert_array_equal(out, src[0])


@pytest.mark.parametrize("bad", [(0, 1, 2), (0, 0)])
def test_a_layout_that_is_not_a_permutation_of_the_axes_is_a_value_error(bad: tuple) -> None:
    with pytest.raises(ValueError, match="layout"):
        qd.tensor(qd.f32, shape=(4, 5), layout=bad)


def test_order_and_unknown_keywords_are_type_errors() -> None:
    with pytest.raises(TypeError, match="layout="):
        qd.tensor(qd.f32, shape=(4, 5), order="ji")
    with pytest.raises(TypeError, match="unexpected keyword"):
        qd.Vector.tensor(3, qd.f32, shape=(4,), layout=(0,))
    with pytest.raises(ValueError, match="qd.Backend"):
        qd.tensor(qd.f32, shape=(4,), backend=7)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_pickled_layout_tensor_keeps_shape_layout_and_data(backend: qd.Backend) -> None:
    t = qd.tensor(qd.f32, shape=(3, 4), layout=(1, 0), backend=backend)
    t.from_numpy(np.arange(12, dtype=np.float32).reshape(3, 4))
    r = pickle.loads(pickle.dumps(t))
    assert isinstance(r, qd.Tensor) and r.shape == (3, 4) and r.layout == (1, 0) and r.backend is backend
    np.testing.assert_array_equal(r.to_numpy(), t.to_numpy())


@pytest.mark.parametrize("backend", BACKENDS)
def test_vector_and_matrix_tensors_wrap_their_element_shapes(backend: qd.Backend) -> None:
    v = qd.Vector.tensor(3, qd.f32, shape=(4,), backend=backend)
    m = qd.Matrix.tensor(2, 2, qd.f32, shape=(3,), backend=backend)
    assert isinstance(v, qd.VectorTensor) and v.element_shape == (3,) and v.to_numpy().shape == (4, 3)
    assert isinstance(m, qd.MatrixTensor) and m.element_shape == (2, 2) and m.to_numpy().shape == (3, 2, 2)
    assert isinstance(qd.wrap(v._unwrap()), qd.VectorTensor)
    with pytest.raises(TypeError):
        qd.Tensor(v)  # no double wrapping


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_pickled_vector_tensor_keeps_its_elements(backend: qd.Backend) -> None:
    v = qd.Vector.tensor(3, qd.f32, shape=(4,), backend=backend)
    v.from_numpy(np.arange(12, dtype=np.float32).reshape(4, 3))
    r = pickle.loads(pickle.dumps(v))
    assert isinstance(r, qd.VectorTensor) and r.element_shape == (3,) and r.backend is backend
    np.testing.assert_array_equal(r.to_numpy(), v.to_numpy())
