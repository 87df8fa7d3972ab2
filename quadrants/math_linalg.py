"""Small dense decompositions for kernels: `qd.svd`, `qd.polar_decompose`, `qd.sym_eig`, `qd.make_spd`, `qd.eig`,
and the linear solve `qd.solve`.

Consumes a frontend `Matrix` (a 2x2 or 3x3 matrix, up to 6x6 for `sym_eig`) and produces matrices of the
`dt` given (the program's default float type when None); the input is cast to `dt` first, so `dt` decides the
precision. Everything is written in the kernel language (`@qd.func`) and inlined like user funcs: no call, no
heap, only scalar IR. The size checks run at compile time (plain Python helpers), so an unsupported size is a
compile error with Quadrants' message, reported at the caller's `qd.svd(...)` (see `frontend/inlining.py`).

Algorithms:

- **Symmetric eigen-decomposition** (`sym_eig`, and the core of the 3x3 SVD): cyclic Jacobi. One sweep visits
  every pair (p, q), p < q, and applies the rotation that zeroes `A[p, q]` (the textbook formulas: theta =
  (aqq - app) / 2apq, t = sgn(theta) / (|theta| + sqrt(theta^2 + 1)); none where apq is 0). Sweeps repeat in a
  runtime `while` loop while the off-diagonal sum of squares still falls (it falls quadratically down to
  rounding noise; at most 16 sweeps), so the compiled code holds one unrolled sweep, the loop stops at the
  precision of the type without a threshold per type, and it stays serial at a kernel's top level (a `for`
  there would be parallel). A matrix whose largest entry is beyond 1e15 or below 1e-15 is divided by it first
  (`_working_scale`), so squares of entries neither overflow nor underflow in f32. Eigenvalues are sorted
  ascending by plain column swaps (Quadrants' order); eigenvectors are the columns.
- **3x3 SVD**: Quadrants' own algorithm (McAdams et al. 2011: a fixed number of Jacobi sweeps on A^T A with
  approximate Givens angles, then a Givens QR), in its order of operations, in `math_svd3.py`: programs get
  Quadrants' results, also where the algorithm is approximate. Quadrants' convention follows: det(U) = det(V) =
  +1, S descending, and S[2, 2] carries the sign of det(A).
- **2x2 polar and SVD**: the closed form U = (A + sgn(det A) cof(A)) / n, P = (A^T A + |det A| I) / n with
  n = sqrt(||A||_F^2 + 2 |det A|): U is a rotation, or a reflection when det A < 0, and P is positive
  semi-definite. The SVD diagonalizes P with one Jacobi rotation: V is a rotation, U = R V (det U = sgn det A),
  S is non-negative and descending - Quadrants' conventions.
- **3x3 polar**: from the SVD, U = U_svd V^T (a rotation) and P = V S V^T (indefinite when det A < 0).
- **solve** (`qd.solve(A, b)`, n x n with 2 <= n <= 6; Quadrants has 2x2 and 3x3): Gaussian elimination
  with partial pivoting on [A | b], fully unrolled. The pivot of column i is found by comparing row i with each
  later row and swapping the two whenever the later one is larger in magnitude (element-wise selects: no runtime
  row index), which leaves the largest entry on the diagonal; back substitution follows. A zero pivot is a
  debug-mode assertion with Quadrants' words ("Matrix is singular in linear solve.").
- **2x2 eig** (general real matrix): lambda = tr/2 +- sqrt(disc), the root with + first, complex pairs as
  (re, im) rows; eigenvector j is (lambda_j - d, c) normalized, as in Quadrants. Where that vector is zero
  (a diagonal or scalar matrix, where Quadrants returns NaN) we use (b, lambda_j - a), else e_j.
"""

from __future__ import annotations

from quadrants.frontend.func import func
from quadrants.frontend.intrinsics import abs, max, select, sqrt, static
from quadrants.lang.matrix import Matrix, Vector
from quadrants.math_svd3 import svd3, working_type
from quadrants.types.dtypes import PrimitiveType, f32, f64

# ---- compile-time helpers (plain Python: they run while the kernel compiles) -------------------------------------
# Unannotated: the fastcache fingerprints the plain functions a func reads, annotations included.


def _check_shape(shape, sizes, message):  # type: ignore[no-untyped-def]
    """Raise Quadrants' error for a value that is not an n x n matrix with n in `sizes` (a tuple of ints)."""
    if not isinstance(shape, tuple) or len(shape) != 2 or shape[0] != shape[1] or shape[0] not in sizes:
        raise Exception(message)


def _float_type(dt):  # type: ignore[no-untyped-def]
    """`dt` as the type the decomposition computes in: None is the program's default float (`float`)."""
    if dt is None or dt is float:
        return float
    if dt not in (f32, f64):
        shown = dt if isinstance(dt, PrimitiveType) else repr(dt)
        raise TypeError(f"the decompositions compute in qd.f32 or qd.f64, not {shown}")
    return dt


# ---- Jacobi rotations --------------------------------------------------------------------------------------------


@func
def _rotation(app, aqq, apq):  # type: ignore[no-untyped-def]
    """(t, c, s) of the Jacobi rotation that zeroes apq in the symmetric pair ((app, apq), (apq, aqq)), t = s / c:
    (0, 1, 0) when apq is 0. A huge theta takes t = 1 / 2theta, so nothing overflows."""
    do = apq != 0.0
    zero = apq * 0.0
    theta = (aqq - app) / (2.0 * select(do, apq, zero + 1.0))
    at = abs(theta)
    huge = at > 1e15
    t = select(theta >= 0.0, zero + 1.0, zero - 1.0) / (at + sqrt(select(huge, zero, theta * theta) + 1.0))
    t = select(huge, 0.5 / select(huge, theta, zero + 1.0), t)
    t = select(do, t, zero)
    c = 1.0 / sqrt(t * t + 1.0)
    return t, c, t * c


@func
def _off_diagonal(A):  # type: ignore[no-untyped-def]
    """The sum of squares above the diagonal."""
    n = static(A.n)
    total = A[0, 0] * 0.0
    for p in static(range(n)):
        for q in static(range(p + 1, n)):
            total += A[p, q] * A[p, q]
    return total


@func
def _jacobi_sweep(A, V):  # type: ignore[no-untyped-def]
    """One cyclic sweep over the pairs (p, q), p < q, of the symmetric matrix A; V accumulates the rotations
    (V' = V J, J the identity but for J[p, p] = J[q, q] = c, J[p, q] = s, J[q, p] = -s)."""
    n = static(A.n)
    W = A
    Q = V
    for p in static(range(n)):
        for q in static(range(p + 1, n)):
            apq = W[p, q]
            t, c, s = _rotation(W[p, p], W[q, q], apq)
            for r in static(range(n)):
                if static(r != p and r != q):
                    arp = W[r, p]
                    arq = W[r, q]
                    W[r, p] = c * arp - s * arq
                    W[p, r] = W[r, p]
                    W[r, q] = s * arp + c * arq
                    W[q, r] = W[r, q]
            W[p, p] = W[p, p] - t * apq
            W[q, q] = W[q, q] + t * apq
            W[p, q] = apq * 0.0
            W[q, p] = W[p, q]
            for r in static(range(n)):
                vrp = Q[r, p]
                vrq = Q[r, q]
                Q[r, p] = c * vrp - s * vrq
                Q[r, q] = s * vrp + c * vrq
    return W, Q


@func
def _jacobi(A, dt):  # type: ignore[no-untyped-def]
    """Cyclic Jacobi on the symmetric matrix A (elements of type dt): (D, V) with A = V D V^T, D diagonal to the
    working precision, unsorted. Sweeps run while the off-diagonal sum of squares still falls (it falls
    quadratically until rounding noise; no precision-dependent threshold is needed)."""
    W = A
    V = Matrix.identity(dt, static(A.n))
    off = _off_diagonal(W)
    sweeps = 0
    more = off > 0.0
    while more:
        W, V = _jacobi_sweep(W, V)
        new_off = _off_diagonal(W)
        sweeps += 1
        more = new_off > 0.0 and new_off < off and sweeps < 16  # quadratic convergence: 3x3 takes 4-6 sweeps in f64
        off = new_off
    return W, V


# ---- sorting -----------------------------------------------------------------------------------------------------


@func
def _sort_ascending(D, V):  # type: ignore[no-untyped-def]
    """The diagonal of D as a vector sorted ascending, with the columns of V in the same order (plain swaps,
    stable: equal values keep their order)."""
    n = static(D.n)
    w = Vector([D[i, i] for i in static(range(n))])
    Q = V
    for k in static(range(n - 1)):
        for j in static(range(n - 1 - k)):
            swap = w[j] > w[j + 1]
            lo = w[j]
            w[j] = select(swap, w[j + 1], lo)
            w[j + 1] = select(swap, lo, w[j + 1])
            for r in static(range(n)):
                a = Q[r, j]
                Q[r, j] = select(swap, Q[r, j + 1], a)
                Q[r, j + 1] = select(swap, a, Q[r, j + 1])
    return w, Q


@func
def _swap_descending(w, V, j, k):  # type: ignore[no-untyped-def]
    """Order w[j] >= w[k] (j < k); a swap moves column k of V to j negated, so det V is kept."""
    swap = w[j] < w[k]
    x = w
    Q = V
    lo = x[j]
    x[j] = select(swap, x[k], lo)
    x[k] = select(swap, lo, x[k])
    for r in static(range(V.n)):
        a = Q[r, j]
        Q[r, j] = select(swap, -Q[r, k], a)
        Q[r, k] = select(swap, a, Q[r, k])
    return x, Q


# ---- 2x2: polar decomposition and SVD in closed form -------------------------------------------------------------


@func
def _working_scale(A):  # type: ignore[no-untyped-def]
    """(scale, 1 / scale) to divide A by so that squares of its entries neither overflow nor underflow, even in
    f32: 1 while the largest entry is within [1e-15, 1e15] (then results stay exact where they can, as for a
    diagonal matrix), else that entry."""
    m = abs(A).max()
    one = m * 0.0 + 1.0
    scale = select(m > 1e15, m, select(m < 1e-15, select(m > 0.0, m, one), one))
    return scale, 1.0 / scale


@func
def _polar2(A, dt):  # type: ignore[no-untyped-def]
    """A = U P for 2x2 A: U a rotation (a reflection when det A < 0), P symmetric positive semi-definite."""
    scale, inv = _working_scale(A.cast(dt))
    M = A.cast(dt) * inv
    a, b, c, d = M[0, 0], M[0, 1], M[1, 0], M[1, 1]
    det = a * d - b * c
    sg = select(det < 0.0, det * 0.0 - 1.0, det * 0.0 + 1.0)
    ad = abs(det)
    n = sqrt(a * a + b * b + c * c + d * d + 2.0 * ad)
    nz = n > 0.0
    k = 1.0 / select(nz, n, n * 0.0 + 1.0)
    U = Matrix([[select(nz, (a + sg * d) * k, n * 0.0 + 1.0), (b - sg * c) * k],
                [(c - sg * b) * k, select(nz, (d + sg * a) * k, n * 0.0 + 1.0)]], dt)  # fmt: skip
    off = (a * b + c * d) * k * scale
    P = Matrix([[(a * a + c * c + ad) * k * scale, off], [off, (b * b + d * d + ad) * k * scale]], dt)
    return U, P


@func
def _svd2(A, dt):  # type: ignore[no-untyped-def]
    """A = U S V^T for 2x2 A: one Jacobi rotation diagonalizes P of the polar decomposition A = R P."""
    R, P = _polar2(A, dt)
    t, c, s = _rotation(P[0, 0], P[1, 1], P[0, 1])
    w = Vector([P[0, 0] - t * P[0, 1], P[1, 1] + t * P[0, 1]], dt)
    w, V = _swap_descending(w, Matrix([[c, s], [-s, c]], dt), 0, 1)
    return R @ V, Matrix([[w[0], w[0] * 0.0], [w[0] * 0.0, w[1]]], dt), V


# ---- 3x3: Quadrants' SVD (quadrants/math_svd3.py) and the polar decomposition from it ---------------------------


@func
def _polar3(A, dt):  # type: ignore[no-untyped-def]
    U, S, V = svd3(A.cast(dt), static(working_type(dt)))
    return U @ V.transpose(), V @ S @ V.transpose()


# ---- 2x2 eigen-decomposition of a general real matrix -----------------------------------------------------------


@func
def _eigvec2(lr, li, a, b, c, d, j):  # type: ignore[no-untyped-def]
    """A unit eigenvector (re0, im0, re1, im1) for eigenvalue j, lr + i li: (lambda - d, c), else
    (b, lambda - a), else (a multiple of the identity) the unit vector e_j."""
    x0r, x0i, x1r = lr - d, li, c
    y0r, y1r, y1i = b, lr - a, li
    nx = x0r * x0r + x0i * x0i + x1r * x1r
    ny = y0r * y0r + y1r * y1r + y1i * y1i
    use_x = nx > 0.0
    use_y = ny > 0.0
    zero = nx * 0.0
    r0 = select(use_x, x0r, select(use_y, y0r, zero + static(1.0 - j)))
    i0 = select(use_x, x0i, zero)
    r1 = select(use_x, x1r, select(use_y, y1r, zero + static(float(j))))
    i1 = select(use_x, zero, select(use_y, y1i, zero))
    k = 1.0 / sqrt(r0 * r0 + i0 * i0 + r1 * r1 + i1 * i1)
    return r0 * k, i0 * k, r1 * k, i1 * k


@func
def _eig2(A, dt):  # type: ignore[no-untyped-def]
    M = A.cast(dt)
    a, b, c, d = M[0, 0], M[0, 1], M[1, 0], M[1, 1]
    half = (a + d) * 0.5
    h = (a - d) * 0.5
    disc = h * h + b * c
    root = sqrt(abs(disc))
    real = disc >= 0.0
    zero = disc * 0.0
    l0r = select(real, half + root, half)
    l1r = select(real, half - root, half)
    l0i = select(real, zero, root)
    l1i = select(real, zero, -root)
    e0 = _eigvec2(l0r, l0i, a, b, c, d, 0)
    e1 = _eigvec2(l1r, l1i, a, b, c, d, 1)
    values = Matrix([[l0r, l0i], [l1r, l1i]], dt)
    vectors = Matrix([[e0[0], e1[0]], [e0[1], e1[1]], [e0[2], e1[2]], [e0[3], e1[3]]], dt)
    return values, vectors


# ---- the public functions ----------------------------------------------------------------------------------------


@func
def sym_eig(A, dt=None):  # type: ignore[no-untyped-def]
    """Eigenvalues (a vector, ascending) and eigenvectors (the columns of a matrix) of the symmetric n x n
    matrix A, 1 <= n <= 6, computed in `dt` (default: the default float type)."""
    static(_check_shape(A.shape, (1, 2, 3, 4, 5, 6), "Symmetric eigen solver currently supports sizes up to 6×6."))
    t = static(_float_type(dt))
    scale, inv = _working_scale(A.cast(t))
    D, V = _jacobi(A.cast(t) * inv, t)
    w, Q = _sort_ascending(D, V)
    return w * scale, Q


@func
def make_spd(A, dt=None):  # type: ignore[no-untyped-def]
    """The nearest positive semi-definite matrix to the symmetric n x n matrix A (1 <= n <= 6) in the Frobenius
    norm: Q diag(max(w, 0)) Q^T from `sym_eig`."""
    static(_check_shape(A.shape, (1, 2, 3, 4, 5, 6), "Symmetric eigen solver currently supports sizes up to 6×6."))
    t = static(_float_type(dt))
    w, Q = sym_eig(A, t)
    C = Q
    for i in static(range(A.n)):
        for j in static(range(A.n)):
            C[i, j] = Q[i, j] * max(w[j], 0.0)
    return C @ Q.transpose()


@func
def svd(A, dt=None):  # type: ignore[no-untyped-def]
    """A = U @ S @ V.transpose() for a 2x2 or 3x3 matrix A: U and V orthogonal, S diagonal with descending
    entries. 2x2: det V = +1 and S >= 0. 3x3: det U = det V = +1, and S[2, 2] carries the sign of det A."""
    static(_check_shape(A.shape, (2, 3), "SVD only supports 2×2 and 3×3 matrices."))
    t = static(_float_type(dt))
    if static(A.n == 2):
        return _svd2(A, t)
    else:
        return svd3(A.cast(t), static(working_type(t)))


@func
def polar_decompose(A, dt=None):  # type: ignore[no-untyped-def]
    """A = U @ P for a 2x2 or 3x3 matrix A: U orthogonal, P symmetric. 2x2: P is positive semi-definite and U a
    reflection when det A < 0. 3x3: U is a rotation and P is indefinite when det A < 0."""
    static(_check_shape(A.shape, (2, 3), "Polar decomposition only supports 2×2 and 3×3 matrices."))
    t = static(_float_type(dt))
    if static(A.n == 2):
        return _polar2(A, t)
    else:
        return _polar3(A, t)


@func
def eig(A, dt=None):  # type: ignore[no-untyped-def]
    """Eigenvalues and right eigenvectors of a real 2x2 matrix, in complex form: values is a 2x2 matrix whose row
    j is (re, im) of eigenvalue j (the larger real root, or the root with the positive imaginary part, first);
    vectors is 4x2, column j is eigenvector j as (re, im) pairs of its two components, of unit length."""
    static(_check_shape(A.shape, (2,), "Eigen solver only supports 2×2 matrices."))
    return _eig2(A, static(_float_type(dt)))


def _check_solve(a_shape, b_shape):  # type: ignore[no-untyped-def]
    """Quadrants' errors for operands `qd.solve` cannot take (an n x n matrix and an n-vector, 2 <= n <= 6)."""
    if len(a_shape) != 2 or a_shape[0] != a_shape[1]:
        raise Exception("Only square matrix is supported")
    if not 2 <= a_shape[0] <= 6:
        raise Exception("Only 2×2 to 6×6 matrices are supported")
    if b_shape != (a_shape[0],):
        raise Exception("Matrix and Vector dimension dismatch")


@func
def _pivot(Ab, i, j):  # type: ignore[no-untyped-def]
    """Ab with rows i and j swapped when row j's entry in column i is larger in magnitude."""
    swap = abs(Ab[j, i]) > abs(Ab[i, i])
    X = Ab
    for k in static(range(Ab.m)):
        hi = Ab[i, k]
        lo = Ab[j, k]
        X[i, k] = select(swap, lo, hi)
        X[j, k] = select(swap, hi, lo)
    return X


@func
def solve(A, b, dt=None):  # type: ignore[no-untyped-def]
    """x with A @ x == b for an n x n matrix A and an n-vector b (2 <= n <= 6), computed in `dt` (default: the
    default float type) by Gaussian elimination with partial pivoting."""
    static(_check_solve(A.shape, b.shape))
    t = static(_float_type(dt))
    n = static(A.n)
    Ab = Matrix.zero(t, n, n + 1)
    for i in static(range(n)):
        for j in static(range(n)):
            Ab[i, j] = A[i, j]
        Ab[i, n] = b[i]
    for i in static(range(n)):
        for j in static(range(i + 1, n)):
            Ab = _pivot(Ab, i, j)
        assert Ab[i, i] != 0.0, "Matrix is singular in linear solve."
        for j in static(range(i + 1, n)):
            scale = Ab[j, i] / Ab[i, i]
            Ab[j, i] = 0.0
            for k in static(range(i + 1, n + 1)):
                Ab[j, k] -= Ab[i, k] * scale
    x = Vector.zero(t, n)
    for ii in static(range(n)):
        i = static(n - 1 - ii)
        r = Ab[i, n]
        for k in static(range(i + 1, n)):
            r -= Ab[i, k] * x[k]
        x[i] = r / Ab[i, i]
    return x
