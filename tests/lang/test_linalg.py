"""qd.svd, qd.polar_decompose, qd.sym_eig, qd.make_spd and qd.eig against numpy, with Quadrants' conventions.

The oracle is numpy (reconstruction, orthogonality, singular values, eigenvalues, eigenvectors up to sign);
where Quadrants fixes a convention (determinant signs, ordering, which factor absorbs a reflection) it is
checked as such, and the degenerate inputs compare with the exact values real Quadrants 1.3.3 returns.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import quadrants as qd
from tests.conftest import qd_init

Nd = qd.types.NDArray
NP = {qd.f32: np.float32, qd.f64: np.float64}
TOL = {qd.f32: 2e-6, qd.f64: 1e-13}  # times the largest entry of the input
# the 3x3 SVD is Quadrants' approximate algorithm (a fixed number of Jacobi sweeps, quadrants/math_svd3.py): on
# 1.3.3 it reconstructs this batch's O(1) matrices to 2e-6 in f32 and 1.5e-10 in f64 (times the largest entry)
SVD3_TOL = {qd.f32: 1e-5, qd.f64: 1e-9}
REFERENCE = Path(__file__).parent / "data" / "svd3_quadrants_1.3.3.json"


def tolerance(n: int, dt) -> float:  # type: ignore[no-untyped-def]
    return SVD3_TOL[dt] if n == 3 else TOL[dt] * 10


def batch(n: int, seed: int = 0, tiny: bool = True) -> np.ndarray:
    """Random matrices, some with a negative determinant, rank-deficient ones, and special ones (`tiny`: one
    with entries ~1e-4, which Quadrants' 3x3 SVD takes only to ~1e-3 relative: its thresholds are absolute)."""
    rng = np.random.default_rng(seed + n)
    out = list(rng.standard_normal((30, n, n)))
    for a in out[20:]:
        if np.linalg.det(a) > 0:
            a[0] = -a[0]
    for r in range(n):
        out.extend(rng.standard_normal((n, r)) @ rng.standard_normal((r, n)) for _ in range(3))
    out += [np.eye(n), -np.eye(n), np.diag([1.0] * (n - 1) + [-1.0]), np.diag(np.arange(1.0, n + 1)), np.ones((n, n))]
    out += [1e-4 * rng.standard_normal((n, n)), 1e4 * rng.standard_normal((n, n))]
    return np.array(out if tiny else out[:-2] + out[-1:])


def symmetric_batch(n: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed + 10 * n)
    a = rng.standard_normal((20, n, n))
    out = list((a + a.transpose(0, 2, 1)) / 2)
    for _ in range(5):  # a repeated eigenvalue
        q, _ = np.linalg.qr(rng.standard_normal((n, n)))
        ev = rng.standard_normal(n)
        ev[-1] = ev[0]
        out.append(q @ np.diag(ev) @ q.T)
    out += [np.zeros((n, n)), np.eye(n), np.diag(np.arange(n, 0.0, -1)), np.ones((n, n)), 1e3 * out[0]]
    return np.array(out)


def scale_of(a: np.ndarray) -> np.ndarray:
    return np.maximum(np.abs(a).max(axis=(1, 2)), 1e-300)


def T(x: np.ndarray) -> np.ndarray:
    return x.transpose(0, 2, 1)


def run_svd(a: np.ndarray, dt) -> tuple[np.ndarray, np.ndarray, np.ndarray]:  # type: ignore[no-untyped-def]
    n = a.shape[1]
    mt = qd.types.matrix(n, n, dt)

    @qd.kernel
    def k(a: Nd[mt, 1], u: Nd[mt, 1], s: Nd[mt, 1], v: Nd[mt, 1]):
        for i in range(a.shape[0]):
            u[i], s[i], v[i] = qd.svd(a[i], dt)

    a = a.astype(NP[dt])
    u, s, v = (np.zeros_like(a) for _ in range(3))
    k(a, u, s, v)
    return u, s, v


@pytest.mark.parametrize("dt", [qd.f32, qd.f64])
@pytest.mark.parametrize("n", [2, 3])
def test_svd_reconstructs_with_quadrants_sign_conventions(n: int, dt) -> None:
    a = batch(n, tiny=n == 2)
    u, s, v = run_svd(a, dt)
    a = a.astype(NP[dt]).astype(np.float64)
    u, s, v = u.astype(np.float64), s.astype(np.float64), v.astype(np.float64)
    tol = tolerance(n, dt)
    sc = scale_of(a)
    assert (np.abs(u @ s @ T(v) - a).max(axis=(1, 2)) / sc).max() < tol
    assert np.abs(T(u) @ u - np.eye(n)).max() < tol and np.abs(T(v) @ v - np.eye(n)).max() < tol
    sigma = np.diagonal(s, axis1=1, axis2=2)
    assert np.array_equal(s, np.apply_along_axis(np.diag, 1, sigma))  # S is diagonal
    assert (np.diff(sigma, axis=1) <= 0).all()  # descending
    assert (np.abs(np.abs(sigma) - np.linalg.svd(a, compute_uv=False)).max(axis=1) / sc).max() < tol
    np.testing.assert_allclose(np.linalg.det(v), 1.0, atol=tol)  # V is a rotation, for both sizes
    det_a = np.linalg.det(a)
    clear = np.abs(det_a) > 1e-3 * sc**n  # the sign of det A is not in doubt
    if n == 2:  # S >= 0; U takes the reflection of a negative determinant
        assert (sigma >= -tol * sc[:, None]).all()
        np.testing.assert_allclose(np.linalg.det(u)[clear], np.sign(det_a[clear]), atol=tol)
    else:  # U is a rotation too; S[2, 2] takes the sign of det A
        np.testing.assert_allclose(np.linalg.det(u), 1.0, atol=tol)
        assert (sigma[:, :2] >= 0).all()
        assert (np.sign(sigma[clear, 2]) == np.sign(det_a[clear])).all()


def test_svd_of_special_matrices_equals_quadrants() -> None:
    """Outputs of real Quadrants 1.3.3 (diagonal inputs sort by swapping columns, negating the one that moves
    down, and carry the approximate algorithm's rounding: 3.3e-13 where the permutation has 0; zero and
    identity give identities)."""
    a = np.array([np.diag([1.0, 2.0, 3.0]), -np.eye(3), np.diag([1.0, 1.0, -1.0]), np.zeros((3, 3))])
    u, s, v = run_svd(a, qd.f64)
    perm = np.array([[0.0, 0, 1], [0, 1, 0], [-1, 0, 0]])
    np.testing.assert_allclose(u, [perm, np.diag([-1.0, -1, 1]), np.eye(3), np.eye(3)], atol=1e-12)
    assert 1e-13 < u[0, 0, 0] < 1e-12  # Sifakis' 8 sweeps do not quite finish the 90-degree rotation
    np.testing.assert_array_equal(v, [perm, np.eye(3), np.eye(3), np.eye(3)])
    np.testing.assert_allclose(s, [np.diag([3.0, 2, 1]), np.diag([1.0, 1, -1]), np.diag([1.0, 1, -1]), 0 * s[3]],
                               atol=2e-15)  # fmt: skip
    a2 = np.array([np.diag([1.0, 2.0]), -np.eye(2), np.diag([1.0, -1.0]), np.ones((2, 2))])
    u, s, v = run_svd(a2, qd.f64)
    h = np.sqrt(0.5)
    np.testing.assert_allclose(u, [[[0, 1], [-1, 0]], -np.eye(2), np.diag([1.0, -1]), [[-h, h], [-h, -h]]], atol=1e-15)
    np.testing.assert_allclose(v, [[[0, 1], [-1, 0]], np.eye(2), np.eye(2), [[-h, h], [-h, -h]]], atol=1e-15)
    np.testing.assert_allclose(s, [np.diag([2.0, 1]), np.eye(2), np.eye(2), np.diag([2.0, 0])], atol=1e-15)


@pytest.mark.parametrize("dt", [qd.f32, qd.f64])
def test_3x3_svd_is_bitwise_quadrants_without_fast_math(dt) -> None:  # type: ignore[no-untyped-def]
    """Quadrants' own algorithm in its order of operations: with fast math off (LLVM then keeps that order)
    every output bit equals 1.3.3's (tests/lang/data: written by 1.3.3). The exact SVD this package had
    before differed from the 9th digit in f64, and Genesis' FEM and MPM scenes drifted from 0.5.2 with it."""
    ref = json.loads(REFERENCE.read_text())
    qd_init(fast_math=False)
    u, s, v = run_svd(np.array(ref["a"]), dt)
    want = ref[str(dt)]
    assert u.tolist() == want["u"]
    assert np.diagonal(s, axis1=1, axis2=2).tolist() == want["s"]
    assert v.tolist() == want["v"]


@pytest.mark.parametrize("dt", [qd.f32, qd.f64])
@pytest.mark.parametrize("n", [2, 3])
def test_polar_decompose(n: int, dt) -> None:
    mt = qd.types.matrix(n, n, dt)

    @qd.kernel
    def k(a: Nd[mt, 1], u: Nd[mt, 1], p: Nd[mt, 1]):
        for i in range(a.shape[0]):
            u[i], p[i] = qd.polar_decompose(a[i], dt)

    a = batch(n, seed=3, tiny=n == 2).astype(NP[dt])
    u, p = np.zeros_like(a), np.zeros_like(a)
    k(a, u, p)
    a, u, p = a.astype(np.float64), u.astype(np.float64), p.astype(np.float64)
    tol, sc = tolerance(n, dt), scale_of(a)
    assert (np.abs(u @ p - a).max(axis=(1, 2)) / sc).max() < tol
    assert np.abs(T(u) @ u - np.eye(n)).max() < tol
    assert (np.abs(p - T(p)).max(axis=(1, 2)) / sc).max() < tol
    un, sn, vhn = np.linalg.svd(a)
    if n == 2:  # U = U_svd V^T from numpy (a reflection when det A < 0), P positive semi-definite
        rot, well = un @ vhn, sn[:, 1] > 1e-2 * sc
        assert (np.linalg.eigvalsh(p).min(axis=1) / sc > -tol).all()
    else:  # U is the nearest rotation; P is indefinite when det A < 0
        flip = np.where(np.linalg.det(un @ vhn) < 0, -1.0, 1.0)
        un[:, :, 2] *= flip[:, None]
        rot, well = un @ vhn, sn[:, 1] + sn[:, 2] > 1e-2 * sc
        np.testing.assert_allclose(np.linalg.det(u), 1.0, atol=tol)
    assert np.abs(u - rot)[well].max() < tol * 100


@pytest.mark.parametrize("dt", [qd.f32, qd.f64])
@pytest.mark.parametrize("n", [1, 2, 3, 4, 6])
def test_sym_eig_matches_eigh(n: int, dt) -> None:
    mt = qd.types.matrix(n, n, dt)

    @qd.kernel
    def k(a: Nd[mt, 1], w: Nd[qd.types.vector(n, dt), 1], q: Nd[mt, 1]):
        for i in range(a.shape[0]):
            w[i], q[i] = qd.sym_eig(a[i], dt)

    a = symmetric_batch(n).astype(NP[dt])
    w, q = np.zeros(a.shape[:2], NP[dt]), np.zeros_like(a)
    k(a, w, q)
    a, w, q = a.astype(np.float64), w.astype(np.float64), q.astype(np.float64)
    tol, sc = TOL[dt] * 10 * n, scale_of(a)
    wn, qn = np.linalg.eigh(a)
    assert (np.abs(w - wn).max(axis=1) / sc).max() < tol  # ascending, like eigh
    assert np.abs(T(q) @ q - np.eye(n)).max() < tol
    assert (np.abs(q @ (w[:, :, None] * T(q)) - a).max(axis=(1, 2)) / sc).max() < tol
    distinct = np.diff(wn, axis=1).min(axis=1, initial=np.inf) > 1e-2 * sc
    overlap = np.abs(np.einsum("bij,bik->bjk", q, qn))[distinct]  # |<q_j, qn_k>|: the identity up to signs
    assert np.abs(overlap - np.eye(n)).max() < tol * 100


def test_sym_eig_of_special_matrices_equals_quadrants() -> None:
    """Exact outputs of real Quadrants 1.3.3: Jacobi leaves a diagonal matrix alone and the sort swaps columns."""

    @qd.kernel
    def k(a: Nd[qd.math.mat3, 1], w: Nd[qd.math.vec3, 1], q: Nd[qd.math.mat3, 1]):
        for i in range(a.shape[0]):
            w[i], q[i] = qd.sym_eig(a[i])

    a = np.array([np.zeros((3, 3)), np.eye(3), np.diag([3.0, 2.0, 1.0]), [[2.0, 1, 0], [1, 2, 0], [0, 0, 5]]], np.float32)
    w, q = np.zeros((4, 3), np.float32), np.zeros_like(a)
    k(a, w, q)
    np.testing.assert_array_equal(w[:3], [[0, 0, 0], [1, 1, 1], [1, 2, 3]])
    np.testing.assert_array_equal(q[:3], [np.eye(3), np.eye(3), np.eye(3)[::-1]])
    h = np.sqrt(0.5)
    np.testing.assert_allclose(w[3], [1, 3, 5], atol=1e-6)
    np.testing.assert_allclose(q[3], [[h, h, 0], [-h, h, 0], [0, 0, 1]], atol=1e-6)


@pytest.mark.parametrize("n", [2, 3, 5])
def test_make_spd_clamps_negative_eigenvalues(n: int) -> None:
    mt = qd.types.matrix(n, n, qd.f64)

    @qd.kernel
    def k(a: Nd[mt, 1], out: Nd[mt, 1]):
        for i in range(a.shape[0]):
            out[i] = qd.make_spd(a[i], qd.f64)

    a = symmetric_batch(n, seed=5)
    out = np.zeros_like(a)
    k(a, out)
    w, q = np.linalg.eigh(a)
    np.testing.assert_allclose(out, q @ (np.maximum(w, 0)[:, :, None] * T(q)), atol=1e-12)


@pytest.mark.parametrize("dt", [qd.f32, qd.f64])
def test_eig_2x2(dt) -> None:
    mt = qd.types.matrix(2, 2, dt)

    @qd.kernel
    def k(a: Nd[mt, 1], v: Nd[mt, 1], w: Nd[qd.types.matrix(4, 2, dt), 1]):
        for i in range(a.shape[0]):
            v[i], w[i] = qd.eig(a[i], dt)

    rng = np.random.default_rng(11)
    a = np.concatenate([rng.standard_normal((30, 2, 2)), [[[1.0, 1], [2, 3]], [[1.0, -1], [1, 1]]]]).astype(NP[dt])
    v, w = np.zeros_like(a), np.zeros((len(a), 4, 2), NP[dt])
    k(a, v, w)
    lam = v[:, :, 0] + 1j * v[:, :, 1]
    vec = w[:, 0::2, :] + 1j * w[:, 1::2, :]
    tol = TOL[dt] * 100
    np.testing.assert_allclose(np.sort_complex(lam), np.sort_complex(np.linalg.eigvals(a)), atol=tol)
    np.testing.assert_allclose(np.linalg.norm(vec, axis=1), 1.0, atol=tol)
    np.testing.assert_allclose(a @ vec, vec * lam[:, None, :], atol=tol * 10)
    # Quadrants' order and normalization: the larger real root (or +imaginary part) first; (lambda - d, c)
    np.testing.assert_allclose(lam[-2:], [[2 + np.sqrt(3), 2 - np.sqrt(3)], [1 + 1j, 1 - 1j]], atol=tol)
    first = np.array([lam[-2, 0] - 3, 2]) / np.linalg.norm([lam[-2, 0] - 3, 2])
    np.testing.assert_allclose(vec[-2, :, 0], first, atol=tol)
    np.testing.assert_allclose(vec[-1], np.array([[1j, -1j], [1, 1]]) / np.sqrt(2), atol=tol)


def test_eig_of_diagonal_matrices_gives_unit_eigenvectors() -> None:
    """Where Quadrants 1.3.3 divides by zero (NaN eigenvectors for a diagonal or scalar matrix) this returns
    unit eigenvectors (a deliberate difference)."""

    @qd.kernel
    def k(a: Nd[qd.math.mat2, 1], v: Nd[qd.math.mat2, 1], w: Nd[qd.types.matrix(4, 2, qd.f32), 1]):
        for i in range(a.shape[0]):
            v[i], w[i] = qd.eig(a[i])

    a = np.array([np.diag([1.0, 2.0]), np.diag([2.0, 1.0]), 2 * np.eye(2), [[1.0, 1.0], [0.0, 1.0]]], np.float32)
    v, w = np.zeros_like(a), np.zeros((4, 4, 2), np.float32)
    k(a, v, w)
    np.testing.assert_array_equal(v[:, :, 0], [[2, 1], [2, 1], [2, 2], [1, 1]])
    np.testing.assert_array_equal(w[:, 0::2, :], [[[0, -1], [1, 0]], [[1, 0], [0, -1]], np.eye(2), [[1, 1], [0, 0]]])


def test_dt_decides_the_precision_and_defaults_to_default_fp() -> None:
    """An f32 matrix decomposed with dt=qd.f64 gives f64-accurate values; without dt the program's default_fp
    is used, whatever the input's type (an integer matrix too)."""
    qd_init(default_fp=qd.f64)

    @qd.kernel
    def k() -> tuple[qd.f64, qd.f64, qd.f64]:
        a32 = qd.Matrix([[1.0, 2.0], [3.0, 4.0]], qd.f32)
        _, s64, _ = qd.svd(a32, qd.f64)
        _, s32, _ = qd.svd(a32, qd.f32)
        w, _ = qd.sym_eig(qd.Matrix([[2, 1], [1, 2]]))  # i32 elements, default_fp f64
        return s64[0, 0], s32[0, 0], w[1]

    s64, s32, w = k()
    exact = np.linalg.svd([[1.0, 2.0], [3.0, 4.0]], compute_uv=False)[0]
    assert abs(s64 - exact) < 1e-14 and 1e-12 < abs(s32 - exact) < 1e-5
    assert w == 3.0


def test_a_call_at_the_kernel_top_level_runs_serially() -> None:
    """The Jacobi sweeps are a runtime `while` loop: at a kernel's top level it must not become a parallel for."""

    @qd.kernel
    def k(a: qd.math.mat3) -> tuple[qd.math.mat3, qd.math.mat3, qd.math.mat3]:
        u, s, v = qd.svd(a)
        return u, s, v

    a = np.array([[1.0, 1, 3], [9, -3, 2], [-3, 4, 2]])
    u, s, v = (np.asarray(x, np.float64) for x in k(qd.Matrix(a.tolist())))
    np.testing.assert_allclose(u @ s @ v.T, a, atol=1e-5)
    np.testing.assert_allclose(np.diag(s), np.linalg.svd(a, compute_uv=False), rtol=1e-6)


CASES = [
    ("qd.svd", 4, "SVD only supports 2×2 and 3×3 matrices."),
    ("qd.svd", 1, "SVD only supports 2×2 and 3×3 matrices."),
    ("qd.polar_decompose", 4, "Polar decomposition only supports 2×2 and 3×3 matrices."),
    ("qd.sym_eig", 7, "Symmetric eigen solver currently supports sizes up to 6×6."),
    ("qd.make_spd", 7, "Symmetric eigen solver currently supports sizes up to 6×6."),
    ("qd.eig", 3, "Eigen solver only supports 2×2 matrices."),
]


@pytest.mark.parametrize("fn, n, message", CASES)
def test_unsupported_sizes_are_compile_errors_at_the_call(fn: str, n: int, message: str) -> None:
    from tests.helpers import define

    ns = define(f"""
        @qd.kernel
        def k() -> qd.f32:
            a = qd.Matrix.identity(qd.f32, {n})
            r = {fn}(a)
            return 0.0
    """)
    with pytest.raises(qd.QuadrantsCompilationError, match=f"Exception: {message}") as e:
        ns["k"]()
    assert e.value.loc is not None and e.value.loc.lineno == 5 and e.value.loc.filename.startswith("<qd-test-")


def test_non_square_and_integer_dt_are_refused() -> None:
    @qd.kernel
    def non_square() -> qd.f32:
        u, s, v = qd.svd(qd.Matrix([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]))
        return s[0, 0]

    @qd.kernel
    def integer_dt() -> qd.f32:
        u, s, v = qd.svd(qd.Matrix([[1.0, 2.0], [3.0, 4.0]]), qd.i32)
        return s[0, 0]

    with pytest.raises(qd.QuadrantsCompilationError, match="SVD only supports"):
        non_square()
    with pytest.raises(qd.QuadrantsCompilationError, match="compute in qd.f32 or qd.f64, not i32"):
        integer_dt()


def test_python_scope_calls_are_refused() -> None:
    with pytest.raises(qd.QuadrantsSyntaxError, match="only be called from a kernel"):
        qd.svd(qd.Matrix([[1.0, 2.0], [3.0, 4.0]]))


def test_kernels_using_them_stay_fastcache_pure() -> None:
    """The funcs read only code and literals (no UPPERCASE constant, no helper with unresolvable annotations),
    so a fastcache kernel calling them is stored without a purity warning."""
    import warnings

    @qd.kernel(fastcache=True)
    def k(a: Nd[qd.math.mat3, 1], u: Nd[qd.math.mat3, 1], w: Nd[qd.math.vec3, 1]):
        for i in range(a.shape[0]):
            u[i], p = qd.polar_decompose(a[i])
            w[i], q = qd.sym_eig(a[i] + p)
            values, vectors = qd.eig(qd.Matrix([[1.0, 2.0], [3.0, 4.0]]))
            w[i][0] += values[0, 0] + vectors[0, 0] + qd.make_spd(q)[0, 0]

    before = qd.stats()["cache"].get("fastcache_stores", 0)
    a = np.eye(3, dtype=np.float32)[None].repeat(2, axis=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        k(a, np.zeros_like(a), np.zeros((2, 3), np.float32))
    assert qd.stats()["cache"].get("fastcache_stores", 0) == before + 1
