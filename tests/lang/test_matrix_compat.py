"""Vectors and matrices as real Quadrants treats them: math functions of Python-scope vectors (element-wise),
`.entries`, vector/matrix ndarray annotations given numpy arrays of another dtype, debug-mode checks of runtime
vector/matrix indices, and error lines in nested kernels whose body has blank lines."""

from __future__ import annotations

import math

import numpy as np
import pytest

import quadrants as qd
from tests.conftest import qd_init


def test_math_functions_of_python_scope_vectors_are_element_wise() -> None:
    np.testing.assert_allclose(qd.cos(qd.Vector([2, 3])).to_numpy(), np.cos([2, 3]))
    res = qd.max(4, qd.Vector([3, 4, 5]))
    assert res.to_numpy().tolist() == [4, 4, 5] and res.to_numpy().dtype.kind == "i"
    np.testing.assert_allclose(qd.atan2(qd.Vector([2, 3]), qd.Vector([3, 4])).to_numpy(), np.arctan2([2, 3], [3, 4]))
    assert qd.select(qd.Vector([1, 0]), qd.Vector([2, 3]), qd.Vector([4, 5])).to_numpy().tolist() == [2, 5]
    np.testing.assert_allclose(qd.sqrt(qd.Matrix([[1, 4], [9, 16]])).to_numpy(), [[1, 2], [3, 4]])
    assert qd.cos(math.pi / 3) == pytest.approx(0.5)  # scalars as before
    assert qd.max(2, 3) == 3


def test_entries_are_the_elements_themselves() -> None:
    a = qd.types.vector(3, dtype=qd.f32)([0, 1, 2])
    assert a.entries.dtype == np.float32
    b = qd.types.matrix(2, 2, dtype=qd.i32)([[0, 1], [2, 3]])
    assert b.entries.dtype == np.int32 and b.entries.tolist() == [[0, 1], [2, 3]]
    a.entries[0] = 5
    assert a[0] == 5


def test_a_vector_ndarray_annotation_takes_a_numpy_array_of_its_own_dtype() -> None:
    @qd.kernel
    def fill(a: qd.types.ndarray(dtype=qd.math.mat2)):
        for i in range(5):
            for j, k in qd.ndrange(2, 2):
                a[i][j, k] = j * j + k * k

    m = np.zeros((5, 2, 2), dtype=np.int32)  # a mat2 is f32: the array's i32 is used, as in Quadrants
    fill(m)
    assert m[3].tolist() == [[0, 1], [1, 2]]

    @qd.kernel
    def scalar(a: qd.types.ndarray(dtype=qd.f32)):
        a[0] = 1

    with pytest.raises(ValueError, match=r"required array has dtype=f32, array with dtype=i32 is provided"):
        scalar(np.zeros(3, np.int32))


def test_runtime_vector_and_matrix_indices_are_checked_in_debug_mode() -> None:
    qd_init(debug=True)

    @qd.kernel
    def write_vec(i: qd.i32):
        x = qd.Vector([1, 0])
        x[i] = 42

    @qd.kernel
    def write_mat(i: qd.i32, j: qd.i32):
        y = qd.Matrix([[1, 1, 1], [2, 2, 2], [3, 3, 3]])
        y[i, j] = 42

    @qd.kernel
    def read_vec(i: qd.i32) -> qd.i32:
        x = qd.Vector([1, 0])
        return x[i]

    write_vec(1)
    write_mat(2, 2)
    write_mat(0, 8)  # as in Quadrants, only the flat index is checked
    assert read_vec(1) == 0
    for call, text in (
        (lambda: write_vec(2), r"\[2\] matrix with index \[2\]"),
        (lambda: write_vec(-1), r"\[2\] matrix with index \[-1\]"),
        (lambda: write_mat(3, 0), r"\[3, 3\] matrix with index \[9\]"),
        (lambda: write_mat(-1, 0), r"\[3, 3\] matrix with index \[-3\]"),
        (lambda: read_vec(5), r"\[2\] matrix with index \[5\]"),
    ):
        with pytest.raises(AssertionError, match="Out of bound access to a " + text) as e:
            call()
        assert isinstance(e.value, qd.QuadrantsAssertionError)
        assert e.value.loc is not None and e.value.loc.line_text.strip() in ("x[i] = 42", "y[i, j] = 42", "return x[i]")
    qd_init()  # without debug: no check (an index out of range reads the last element)
    assert read_vec(5) == 0


def test_error_lines_of_a_nested_kernel_after_a_blank_line() -> None:
    qd_init(debug=True)

    @qd.kernel
    def k(i: qd.i32):
        x = i

        # a comment after a blank line
        assert x == 42

    with pytest.raises(qd.QuadrantsAssertionError) as e:
        k(1)
    assert e.value.loc is not None and e.value.loc.line_text.strip() == "assert x == 42"
