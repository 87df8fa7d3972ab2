"""The 3x3 SVD of `qd.svd` / `qd.polar_decompose`: McAdams, Selle, Tamstorf, Teran and Sifakis, "Computing the
Singular Value Decomposition of 3x3 matrices with minimal branching and elementary floating point operations"
(UW-Madison TR1690, 2011), the algorithm Quadrants compiles for these calls.

Consumes a 3x3 frontend `Matrix` already cast to the working type and produces U, S, V (A = U S V^T) in it.
It is written step for step in the order of floating-point operations that Quadrants evaluates, because
programs see its results, not only its contract: the algorithm is approximate (a fixed number of Jacobi sweeps,
approximate Givens angles, one Newton step per reciprocal square root), so in f64 it reconstructs A only to
~1e-10, and a program that integrates those results over many steps (Genesis' FEM and MPM materials) follows
Quadrants' trajectory only with the same arithmetic: with the exact SVD this package had before, Genesis' snow
MPM scene ended 0.5 % off 0.5.2's mean speed after 20 steps, with this one 2e-4 (within 0.5.2's own spread).

The steps:
1. S = A^T A (each entry summed in row order).
2. `sweeps` cyclic Jacobi sweeps (5 in f32, 8 in f64, as Quadrants): each conjugates S by the approximate Givens
   rotation of the pairs (1, 2), (2, 3), (3, 1), as unnormalized quaternions accumulated into q; the angle is
   the exact half-angle, or pi/8 where the pair's off-diagonal entry dominates (the paper's 4 gamma^2 test).
3. q normalized (one Newton step on 1/sqrt), V its rotation matrix, B = A V.
4. The columns of B (and V) sorted by descending norm, pairs (1, 2), (1, 3), (2, 3); each swap negates one
   column (the second, the first, the second), so det V stays +1.
5. A Givens QR of B, rows (1, 2), (1, 3), (2, 3), gives U (det +1); the diagonal of R is S, its last entry with
   the sign of det A.
6. Quadrants 1.3.3's last step: S sorted descending by value (the columns of U and V with it; an odd number of
   swaps negates column 0 of both).
The constants are f32 literals in Quadrants (also where the working type is f64): so they are here.
"""

from __future__ import annotations

import struct

from quadrants.frontend.func import func
from quadrants.frontend.intrinsics import cast, max, select, sqrt, static
from quadrants.lang.matrix import Matrix

# ---- compile-time helpers (plain Python); unannotated: the fastcache fingerprints what a func reads -------------


def _f32(x):  # type: ignore[no-untyped-def]
    """x rounded to f32, as a Python float: Quadrants writes the algorithm's constants as f32 literals."""
    return struct.unpack("f", struct.pack("f", x))[0]


# The constants (through `_f32` at compile time, inside `static`: module-level names would be globals that the
# fastcache checks at every lookup): 4 gamma^2 = 3 + 2 sqrt(2) (5.82842712474619), sin(pi/8)
# (0.3826834323650897), cos(pi/8) (0.9238795325112867), and the thresholds 1e-20 (Jacobi) and 1e-12 (QR).


def working_type(dt):  # type: ignore[no-untyped-def]
    """`dt` (f32, f64, or `float`: the program's default float) as the type itself."""
    from quadrants.lang import program

    return program.get().config.default_fp if dt is float else dt


def _sweeps(dt):  # type: ignore[no-untyped-def]
    """Quadrants' sweep count: 5 in f32, 8 in f64."""
    from quadrants.types.dtypes import f64

    return 8 if dt == f64 else 5


def _low(i, j):  # type: ignore[no-untyped-def]
    """Where the symmetric S keeps entry (i, j): its lower triangle."""
    return (i, j) if i >= j else (j, i)


# ---- step 2: Jacobi conjugations of S (and the reciprocal square root every step uses) ----------------------------


@func
def _rsqrt_refined(x, dt):  # type: ignore[no-untyped-def]
    """1 / sqrt(x) and one Newton step on it, in the paper's order."""
    r = cast(1.0, dt) / sqrt(x)
    h = r * cast(0.5, dt)
    t = x * (r * (r * h))
    return (r + h) - t


@func
def _conjugate(S, q, p, k, r, dt):  # type: ignore[no-untyped-def]
    """Conjugate S by the approximate Givens rotation of the pair (p, k) (r the third index; (p, k, r) cyclic)
    and accumulate it into the quaternion q = (x, y, z, w): the rotation's axis is r."""
    one = cast(1.0, dt)
    kp = static(_low(k, p))
    rp = static(_low(r, p))
    rk = static(_low(r, k))
    sh = S[kp] * cast(0.5, dt)
    d = S[p, p] - S[k, k]
    big = sh * sh >= cast(static(_f32(1.0e-20)), dt)
    sh = select(big, sh, cast(0.0, dt))
    ch = select(big, d, one)
    sh2 = sh * sh
    ch2 = ch * ch
    n = one / sqrt(sh2 + ch2)
    pi8 = ch2 <= cast(static(_f32(5.82842712474619)), dt) * sh2
    sh = select(pi8, cast(static(_f32(0.3826834323650897)), dt), n * sh)
    ch = select(pi8, cast(static(_f32(0.9238795325112867)), dt), n * ch)
    sh2 = sh * sh
    ch2 = ch * ch
    c = ch2 - sh2
    s = ch * sh
    s = s + s
    m = sh2 + ch2  # the rotation is unnormalized: the untouched entries scale by its squared norm
    X = S
    X[r, r] = X[r, r] * m
    X[rp] = X[rp] * m
    X[rk] = X[rk] * m
    X[r, r] = X[r, r] * m
    a = s * X[rp]
    b = s * X[rk]
    X[rp] = b + c * X[rp]
    X[rk] = c * X[rk] - a
    s2 = s * s
    cc = c * c
    app = X[p, p] * cc + X[k, k] * s2
    akk = X[k, k] * cc + X[p, p] * s2
    cs = c * s
    e = (X[kp] + X[kp]) * cs
    X[kp] = X[kp] * (cc - s2) - d * cs
    X[p, p] = app + e
    X[k, k] = akk - e
    Q = q
    t = Matrix([q[0], q[1], q[2]]) * sh
    shw = sh * q[3]
    Q = Q * ch
    Q[r] = Q[r] + shw
    Q[3] = Q[3] - t[r]
    Q[static((r + 1) % 3)] = Q[static((r + 1) % 3)] + t[static((r + 2) % 3)]
    Q[static((r + 2) % 3)] = Q[static((r + 2) % 3)] - t[static((r + 1) % 3)]
    return X, Q


# ---- steps 3-5 --------------------------------------------------------------------------------------------------


@func
def _rotation(q):  # type: ignore[no-untyped-def]
    """The rotation matrix of the unit quaternion q = (x, y, z, w)."""
    x2, y2, z2 = q[0] * q[0], q[1] * q[1], q[2] * q[2]
    w2 = q[3] * q[3]
    x, y, z = q[0] + q[0], q[1] + q[1], q[2] + q[2]
    wx, wy, wz = q[3] * x, q[3] * y, q[3] * z
    xy, yz, zx = q[1] * x, q[2] * y, q[0] * z
    return Matrix([[((w2 + x2) - y2) - z2, xy - wz, zx + wy],
                   [xy + wz, ((w2 - x2) + y2) - z2, yz - wx],
                   [zx - wy, yz + wx, ((w2 - x2) - y2) + z2]])  # fmt: skip


@func
def _dot(A, i, B, j):  # type: ignore[no-untyped-def]
    """Row i of A times column j of B, summed in order."""
    return (A[i, 0] * B[0, j] + A[i, 1] * B[1, j]) + A[i, 2] * B[2, j]


@func
def _times(A, B):  # type: ignore[no-untyped-def]
    """A @ B, each entry summed in order."""
    return Matrix([[_dot(A, 0, B, 0), _dot(A, 0, B, 1), _dot(A, 0, B, 2)],
                   [_dot(A, 1, B, 0), _dot(A, 1, B, 1), _dot(A, 1, B, 2)],
                   [_dot(A, 2, B, 0), _dot(A, 2, B, 1), _dot(A, 2, B, 2)]])  # fmt: skip


@func
def _order_columns(B, V, rho, j, k, neg, dt):  # type: ignore[no-untyped-def]
    """Where column k of B is longer than column j (rho: squared norms), swap them in B, V and rho, and negate
    column `neg` (j or k: the paper's choice per pair) of B and V."""
    swap = rho[j] < rho[k]
    X = B
    W = V
    w = rho
    one = cast(1.0, dt)
    sign = select(swap, -one, one)
    for i in static(range(3)):
        bj, bk = X[i, j], X[i, k]
        X[i, j] = select(swap, bk, bj)
        X[i, k] = select(swap, bj, bk)
        X[i, neg] = X[i, neg] * sign
        vj, vk = W[i, j], W[i, k]
        W[i, j] = select(swap, vk, vj)
        W[i, k] = select(swap, vj, vk)
        W[i, neg] = W[i, neg] * sign
    rj, rk = w[j], w[k]
    w[j] = select(swap, rk, rj)
    w[k] = select(swap, rj, rk)
    return X, W, w


@func
def _qr_step(B, U, j, i, dt):  # type: ignore[no-untyped-def]
    """Rotate rows j and i of B to zero B[i, j] against the pivot B[j, j] (the paper's Givens QR step, with
    its threshold and its swap of the half-angle pair for a negative pivot); U = U G^T keeps U B."""
    a = B[j, j]
    sh = select(B[i, j] * B[i, j] >= cast(static(_f32(1.0e-12)), dt), B[i, j], cast(0.0, dt))
    ch = max(max(cast(0.0, dt) - a, a), cast(static(_f32(1.0e-12)), dt))
    n2 = ch * ch + sh * sh
    ch = ch + _rsqrt_refined(n2, dt) * n2
    pos = a >= cast(0.0, dt)
    ch, sh = select(pos, ch, sh), select(pos, sh, ch)
    r = _rsqrt_refined(ch * ch + sh * sh, dt)
    ch = ch * r
    sh = sh * r
    c = ch * ch - sh * sh
    s = sh * ch
    s = s + s
    X = B
    Q = U
    for col in static(range(3)):
        xj, xi = X[j, col], X[i, col]
        X[j, col] = c * xj + s * xi
        X[i, col] = c * xi - s * xj
    for row in static(range(3)):
        uj, ui = Q[row, j], Q[row, i]
        Q[row, j] = c * uj + s * ui
        Q[row, i] = c * ui - s * uj
    return X, Q


@func
def _sort_values(U, s, V):  # type: ignore[no-untyped-def]
    """Quadrants 1.3.3's last step: s descending by value (a selection sort), the columns of U and V with it;
    an odd number of swaps negates column 0 of both, so det U and det V stay +1."""
    X = U
    W = V
    w = s
    odd = 0
    for i in static(range(2)):
        top = i
        best = w[i]
        for j in static(range(i + 1, 3)):
            if w[j] > best:
                best = w[j]
                top = j
        if top != i:
            for m in static(range(i + 1, 3)):
                if top == m:
                    w[m] = w[i]
                    w[i] = best
                    for r in static(range(3)):
                        u = X[r, i]
                        v = W[r, i]
                        X[r, i] = X[r, m]
                        W[r, i] = W[r, m]
                        X[r, m] = u
                        W[r, m] = v
            odd = 1 - odd
    if odd == 1:
        for r in static(range(3)):
            X[r, 0] = -X[r, 0]
            W[r, 0] = -W[r, 0]
    return X, w, W


@func
def svd3(A, dt):  # type: ignore[no-untyped-def]
    """A = U S V^T for the 3x3 A (already of the working type `dt`, f32 or f64)."""
    zero = cast(0.0, dt)
    one = cast(1.0, dt)
    At = A.transpose()
    S = _times(At, A)
    q = Matrix([zero, zero, zero, one])
    sweep = 0
    while sweep < static(_sweeps(dt)):  # a runtime loop, serial where it stands (a top-level `for` would be parallel)
        S, q = _conjugate(S, q, 0, 1, 2, dt)
        S, q = _conjugate(S, q, 1, 2, 0, dt)
        S, q = _conjugate(S, q, 2, 0, 1, dt)
        sweep += 1
    n2 = ((q[3] * q[3] + q[0] * q[0]) + q[1] * q[1]) + q[2] * q[2]
    q = q * _rsqrt_refined(n2, dt)
    V = _rotation(q)
    B = _times(A, V)
    Bt = B.transpose()
    rho = Matrix([_dot(Bt, 0, B, 0), _dot(Bt, 1, B, 1), _dot(Bt, 2, B, 2)])
    B, V, rho = _order_columns(B, V, rho, 0, 1, 1, dt)
    B, V, rho = _order_columns(B, V, rho, 0, 2, 0, dt)
    B, V, rho = _order_columns(B, V, rho, 1, 2, 2, dt)
    U = Matrix([[one, zero, zero], [zero, one, zero], [zero, zero, one]])
    B, U = _qr_step(B, U, 0, 1, dt)
    B, U = _qr_step(B, U, 0, 2, dt)
    B, U = _qr_step(B, U, 1, 2, dt)
    U, s, V = _sort_values(U, Matrix([B[0, 0], B[1, 1], B[2, 2]]), V)
    return U, Matrix([[s[0], zero, zero], [zero, s[1], zero], [zero, zero, s[2]]]), V
