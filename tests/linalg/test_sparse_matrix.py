"""qd.linalg: triplets added by kernels, the sparse matrix operations and the solvers, checked against dense
numpy (and, for printing and errors, against what real Quadrants 1.3.3 prints for the same programs)."""

from __future__ import annotations

import numpy as np
import pytest

import quadrants as qd

pytest.importorskip("scipy")

Nd = qd.types.NDArray


@qd.kernel
def add_dense(A: qd.types.sparse_matrix_builder(), M: Nd[qd.f64, 2], sign: qd.i32):
    for i, j in qd.ndrange(M.shape[0], M.shape[1]):
        if M[i, j] != 0.0:
            if sign > 0:
                A[i, j] += M[i, j]
            else:
                A[i, j] -= M[i, j]


def _built(M: np.ndarray, dtype=qd.f64, storage_format="col_major", sign=1):  # noqa: ANN001, ANN202
    b = qd.linalg.SparseMatrixBuilder(M.shape[0], M.shape[1], max_num_triplets=M.size, dtype=dtype,
                                      storage_format=storage_format)  # fmt: skip
    add_dense(b, M.astype(np.float64), sign)
    return b.build()


def _dense(A) -> np.ndarray:  # noqa: ANN001
    return np.array([[A[i, j] for j in range(A.shape[1])] for i in range(A.shape[0])])


@pytest.mark.parametrize("fmt", ["col_major", "row_major"])
@pytest.mark.parametrize("dtype", [qd.f32, qd.f64])
def test_parallel_updates_sum_into_entries(fmt: str, dtype) -> None:  # noqa: ANN001
    n = 6
    b = qd.linalg.SparseMatrixBuilder(n, n + 1, max_num_triplets=3 * n * n, dtype=dtype, storage_format=fmt)

    @qd.kernel
    def fill(A: qd.types.sparse_matrix_builder()):
        for i, j in qd.ndrange(n, n):
            A[i, j + 1] += i + j
            A[i, j + 1] += 1.0
            A[j, i] -= 0.5

    fill(b)
    want = np.zeros((n, n + 1))
    for i in range(n):
        for j in range(n):
            want[i, j + 1] += i + j + 1
            want[j, i] -= 0.5
    A = b.build()
    assert A.shape == (n, n + 1) and b.num_triplets() == 3 * n * n
    np.testing.assert_array_equal(_dense(A), want)


def test_operations_match_dense_numpy() -> None:
    rng = np.random.default_rng(3)
    P = rng.integers(-3, 4, (4, 5)) * (rng.random((4, 5)) < 0.6)
    Q = rng.integers(-3, 4, (4, 5)) * (rng.random((4, 5)) < 0.6)
    A, B = _built(P), _built(Q)
    np.testing.assert_array_equal(_dense(A + B), P + Q)
    np.testing.assert_array_equal(_dense(A - B), P - Q)
    np.testing.assert_array_equal(_dense(A * B), P * Q)
    np.testing.assert_array_equal(_dense(A * 2.5), P * 2.5)
    np.testing.assert_array_equal(_dense(0.5 * A), P * 0.5)
    np.testing.assert_array_equal(_dense(A.transpose()), P.T)
    np.testing.assert_array_equal(_dense(A @ B.transpose()), P @ Q.T)
    x = np.arange(5.0)
    np.testing.assert_array_equal(A @ x, P @ x)
    nd = qd.ndarray(qd.f32, 5)
    nd.from_numpy(x.astype(np.float32))
    y = A @ nd
    assert isinstance(y, qd.Ndarray) and y.dtype == qd.f32
    np.testing.assert_array_equal(y.to_numpy(), P @ x)
    A[0, 0] = 7.0
    assert A[0, 0] == 7.0
    with pytest.raises(qd.QuadrantsRuntimeError, match="Dimension mismatch"):
        A @ B
    with pytest.raises(qd.QuadrantsRuntimeError, match="does not support"):
        A @ [1, 2, 3]


def test_printing_is_quadrants_layout() -> None:
    """Real Quadrants 1.3.3 prints this matrix exactly so (4 significant digits, one column width)."""
    M = np.array([[1 / 3, 0, 0], [0, 123456.789, 0], [-1e-7, 0, 4]])
    assert str(_built(M)) == "[   0.3333,         0,         0]\n[        0, 1.235e+05,         0]\n" \
                             "[   -1e-07,         0,         4]"  # fmt: skip


def test_print_triplets_in_the_order_added(capsys: pytest.CaptureFixture[str]) -> None:
    b = qd.linalg.SparseMatrixBuilder(3, 3, max_num_triplets=4, dtype=qd.f32)

    @qd.kernel
    def fill(A: qd.types.sparse_matrix_builder()):
        A[0, 0] += 1.0 / 3.0
        A[2, 2] += 2.0

    fill(b)
    b.print_triplets()
    assert capsys.readouterr().out == "n=3, m=3, num_triplets=2 (max=4)\n[0, 0] = 0.33333334\n[2, 2] = 2\n"


def test_too_many_triplets_is_an_error_not_a_wrong_matrix() -> None:
    b = qd.linalg.SparseMatrixBuilder(4, 4, max_num_triplets=3)

    @qd.kernel
    def fill(A: qd.types.sparse_matrix_builder()):
        for i in range(4):
            A[i, i] += 1.0

    fill(b)
    with pytest.raises(qd.QuadrantsRuntimeError, match="4 triplets .* max_num_triplets=3"):
        b.build()


def test_builder_entries_can_only_be_accumulated() -> None:
    b = qd.linalg.SparseMatrixBuilder(2, 2, max_num_triplets=4)

    @qd.kernel
    def k(A: qd.types.sparse_matrix_builder()):
        A[0, 0] = 1.0

    with pytest.raises(qd.QuadrantsSyntaxError, match=r"\+= or -="):
        k(b)

    @qd.kernel
    def fine(A: qd.types.sparse_matrix_builder()):
        A[0, 0] += 1.0

    with pytest.raises(qd.QuadrantsRuntimeTypeError, match="SparseMatrixBuilder"):
        fine(np.zeros(3))


def test_build_from_ndarray_sums_duplicate_triplets() -> None:
    t = qd.Vector.ndarray(3, qd.f32, 3)
    t.from_numpy(np.array([[0, 1, 2.5], [0, 1, 1.0], [2, 0, -1.0]], np.float32))
    A = qd.linalg.SparseMatrix(n=3, m=4, dtype=qd.f32)
    A.build_from_ndarray(t)
    want = np.zeros((3, 4))
    want[0, 1], want[2, 0] = 3.5, -1.0
    np.testing.assert_array_equal(_dense(A), want)


SPD = np.array([[4.0, 1, 0, 0], [1, 3, 1, 0], [0, 1, 5, 2], [0, 0, 2, 6]])


@pytest.mark.parametrize("solver_type", ["LLT", "LDLT", "LU"])
@pytest.mark.parametrize("ordering", ["AMD", "COLAMD"])
def test_direct_solvers(solver_type: str, ordering: str) -> None:
    A = _built(SPD)
    s = qd.linalg.SparseSolver(dtype=qd.f64, solver_type=solver_type, ordering=ordering)
    s.analyze_pattern(A)
    s.factorize(A)
    assert s.info()
    b = np.array([1.0, 2, 3, 4])
    np.testing.assert_allclose(s.solve(b), np.linalg.solve(SPD, b), rtol=1e-12)
    nd = qd.ndarray(qd.f64, 4)
    nd.from_numpy(b)
    x = s.solve(nd)
    assert isinstance(x, qd.Ndarray)
    np.testing.assert_allclose(x.to_numpy(), np.linalg.solve(SPD, b), rtol=1e-12)


def test_cholesky_reads_the_lower_triangle_and_reports_indefinite_matrices() -> None:
    """As Eigen's (Quadrants'): LLT and LDLT use the lower triangle; LLT of an indefinite matrix fails."""
    upper_garbage = np.tril(SPD) + np.triu(np.full((4, 4), 9.0), 1)
    s = qd.linalg.SparseSolver(dtype=qd.f64, solver_type="LDLT")
    s.compute(_built(upper_garbage))
    np.testing.assert_allclose(s.solve(np.ones(4)), np.linalg.solve(SPD, np.ones(4)), rtol=1e-12)
    indefinite = _built(np.array([[1.0, 2, 0], [2, 1, 0], [0, 0, 1]]))
    llt = qd.linalg.SparseSolver(solver_type="LLT")
    llt.compute(indefinite)
    assert not llt.info()
    with pytest.raises(qd.QuadrantsRuntimeError, match="factorization failed"):
        llt.solve(np.ones(3))
    ldlt = qd.linalg.SparseSolver(solver_type="LDLT")
    ldlt.compute(indefinite)
    assert ldlt.info()


def test_solver_errors_are_quadrants_words() -> None:
    with pytest.raises(qd.QuadrantsRuntimeError, match="The solver type QR with AMD is not supported"):
        qd.linalg.SparseSolver(solver_type="QR")
    with pytest.raises(qd.QuadrantsRuntimeError, match=r"call compute\(\) before"):
        qd.linalg.SparseSolver().solve(np.ones(3))


@pytest.mark.parametrize("dtype", [qd.f32, qd.f64])
def test_conjugate_gradients(dtype, capsys: pytest.CaptureFixture[str]) -> None:  # noqa: ANN001
    A = _built(SPD, dtype=dtype)
    b = qd.ndarray(dtype, 4)
    b.from_numpy(np.arange(1.0, 5.0))
    x, ok = qd.linalg.SparseCG(A, b, qd.ndarray(dtype, 4), max_iter=50, atol=1e-6).solve()
    assert ok is True and x.dtype == dtype.np_dtype
    np.testing.assert_allclose(x, np.linalg.solve(SPD, np.arange(1.0, 5.0)), rtol=1e-4)
    _, ok = qd.linalg.SparseCG(A, b, max_iter=1, atol=1e-12).solve()
    assert ok is False
    # Eigen's report, as Quadrants prints it: iterations done (real Quadrants 1.3.3 takes 3 for this matrix)
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "#iterations:     3" and lines[1].startswith("estimated error: ")
    assert lines[2] == "#iterations:     1"


def test_conjugate_gradients_tolerance_is_relative_to_b() -> None:
    """As Eigen's (Quadrants'): |r| <= atol * |b|, so scaling b does not change the iterations or the answer."""
    A = _built(SPD)
    for scale in (1.0, 1e6):
        x, ok = qd.linalg.SparseCG(A, np.arange(1.0, 5.0) * scale, max_iter=2, atol=1e-3).solve()
        assert ok is False  # 2 iterations are not enough at either scale
        x, ok = qd.linalg.SparseCG(A, np.arange(1.0, 5.0) * scale, max_iter=50, atol=1e-8).solve()
        assert ok is True
        np.testing.assert_allclose(x, np.linalg.solve(SPD, np.arange(1.0, 5.0) * scale), rtol=1e-7)
