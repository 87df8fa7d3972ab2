"""Vectors and matrices in kernels, checked against numpy."""

from __future__ import annotations

import operator

import numpy as np
import pytest

import quadrants as qd

Nd = qd.types.NDArray
vec3 = qd.math.vec3
rng = np.random.default_rng(11)


def test_arithmetic_dot_cross_norm() -> None:
    @qd.kernel
    def k(a: vec3, b: vec3) -> tuple[vec3, qd.f32, vec3, qd.f32, vec3, vec3]:
        return a * 2 + b / 4, a.dot(b), a.cross(b), a.norm(), a.normalized(), -a % 3

    a, b = rng.normal(size=3).astype(np.float32), rng.normal(size=3).astype(np.float32)
    s, d, c, n, u, m = k(a, b)
    np.testing.assert_allclose(s.to_numpy(), a * 2 + b / 4, rtol=1e-6)
    assert d == pytest.approx(float(a @ b), rel=1e-5)
    np.testing.assert_allclose(c.to_numpy(), np.cross(a, b), rtol=1e-5, atol=1e-6)
    assert n == pytest.approx(float(np.linalg.norm(a)), rel=1e-5)
    np.testing.assert_allclose(u.to_numpy(), a / np.linalg.norm(a), rtol=1e-5)
    np.testing.assert_allclose(m.to_numpy(), np.mod(-a, 3), rtol=1e-5, atol=1e-6)
    assert isinstance(s, qd.Vector) and s.to_numpy().dtype == np.float32


@pytest.mark.parametrize("n", [1, 2, 3, 4])
def test_determinant_and_inverse(n: int) -> None:
    mt = qd.types.matrix(n, n, qd.f64)

    @qd.kernel
    def k(m: mt) -> tuple[qd.f64, mt, mt, qd.f64]:
        return m.determinant(), m.inverse(), m.transpose() @ m, m.trace()

    a = rng.normal(size=(n, n)) + np.eye(n) * 2
    det, inv, ata, tr = k(a)
    assert det == pytest.approx(np.linalg.det(a), rel=1e-10)
    np.testing.assert_allclose(inv.to_numpy(), np.linalg.inv(a), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(ata.to_numpy(), a.T @ a, rtol=1e-12)
    assert tr == pytest.approx(np.trace(a))


def test_matrix_vector_products_outer_and_reductions() -> None:
    @qd.kernel
    def k(
        m: qd.types.matrix(2, 3, qd.f32), v: vec3, w: qd.math.vec2
    ) -> tuple[qd.math.vec2, qd.types.matrix(2, 3, qd.f32), qd.f32, qd.f32, qd.f32, qd.f32]:
        return m @ v, w.outer_product(v), v.sum(), v.max(), v.min(), (w @ m).sum()

    m = rng.normal(size=(2, 3)).astype(np.float32)
    v = rng.normal(size=3).astype(np.float32)
    w = rng.normal(size=2).astype(np.float32)
    mv, outer, s, mx, mn, wm = k(m, v, w)
    np.testing.assert_allclose(mv.to_numpy(), m @ v, rtol=1e-5)
    np.testing.assert_allclose(outer.to_numpy(), np.outer(w, v), rtol=1e-6)
    assert s == pytest.approx(v.sum(), rel=1e-5) and mx == v.max() and mn == v.min()
    assert wm == pytest.approx(float((w @ m).sum()), rel=1e-4)


def test_element_types_follow_quadrants() -> None:
    @qd.kernel
    def k() -> tuple[qd.types.vector(3, qd.f32), qd.i32, qd.f32, qd.types.matrix(2, 2, qd.f32)]:
        a = qd.Vector([1, 2.5, 3])  # mixed: one f32 vector
        b = qd.Vector([1, 2, 3])  # ints
        m = qd.Matrix([[2, 1], [1, 3]])
        return a, b.norm_sqr(), b.norm(), m.inverse()

    a, ns, nrm, inv = k()
    np.testing.assert_array_equal(a.to_numpy(), [1, 2.5, 3])
    assert ns == 14 and nrm == pytest.approx(np.sqrt(14), rel=1e-6)
    np.testing.assert_allclose(inv.to_numpy(), np.linalg.inv([[2, 1], [1, 3]]), rtol=1e-6)


def test_local_vectors_are_mutable_with_static_and_dynamic_indices() -> None:
    @qd.kernel
    def k(i: qd.i32) -> vec3:
        v = qd.Vector([1.0, 2.0, 3.0])
        v.x = 5
        v[2] += 1
        v[i] = v[i] * 10
        return v

    np.testing.assert_array_equal(k(1).to_numpy(), [5, 20, 4])
    np.testing.assert_array_equal(k(0).to_numpy(), [50, 2, 4])


def test_dynamic_matrix_index_and_swizzles() -> None:
    @qd.kernel
    def k(i: qd.i32, j: qd.i32) -> tuple[qd.f32, qd.math.vec2, qd.f32]:
        m = qd.Matrix([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
        m[i, j] = -1.0
        v = qd.Vector([1.0, 2.0, 3.0, 4.0])
        return m[i, j] + m[1 - i, j], v.wx, v.zyx.sum()

    a, b, c = k(1, 2)
    assert a == -1.0 + 3.0 and c == 6.0
    np.testing.assert_array_equal(b.to_numpy(), [4, 1])


def test_constructors_broadcast_and_concatenate() -> None:
    @qd.kernel
    def k(x: qd.f32) -> tuple[vec3, vec3, qd.math.ivec3, qd.math.mat2, vec3, qd.types.matrix(3, 3, qd.f32)]:
        return (vec3(x), vec3(qd.math.vec2(1, 2), x), qd.math.ivec3(1.7, 2, 3), qd.math.mat2(1, 2, 3, 4),
                qd.Vector.zero(qd.f32, 3), qd.Matrix.identity(qd.f32, 3))  # fmt: skip

    a, b, c, d, z, eye = k(7.0)
    np.testing.assert_array_equal(a.to_numpy(), [7, 7, 7])
    np.testing.assert_array_equal(b.to_numpy(), [1, 2, 7])
    np.testing.assert_array_equal(c.to_numpy(), [1, 2, 3])
    np.testing.assert_array_equal(d.to_numpy(), [[1, 2], [3, 4]])
    np.testing.assert_array_equal(z.to_numpy(), [0, 0, 0])
    np.testing.assert_array_equal(eye.to_numpy(), np.eye(3))


def test_vectors_through_funcs_and_math_functions() -> None:
    @qd.func
    def reflect(v: vec3, n: vec3) -> vec3:
        return v - 2 * v.dot(n) * n

    @qd.func
    def polar(p):
        return qd.Vector([qd.sqrt(p.x * p.x + p.y * p.y), qd.atan2(p.y, p.x)])

    @qd.kernel
    def k(v: vec3, p: qd.math.vec2) -> tuple[vec3, qd.math.vec2, vec3, vec3]:
        n = qd.Vector([0.0, 1.0, 0.0])
        return reflect(v, n), polar(p), qd.sin(v), max(v, 0.5)

    v = np.array([1.0, -2.0, 0.3], np.float32)
    r, pol, s, mx = k(v, [3.0, 4.0])
    np.testing.assert_allclose(r.to_numpy(), [1.0, 2.0, 0.3], rtol=1e-6)
    np.testing.assert_allclose(pol.to_numpy(), [5.0, np.arctan2(4, 3)], rtol=1e-6)
    np.testing.assert_allclose(s.to_numpy(), np.sin(v), rtol=1e-6)
    np.testing.assert_array_equal(mx.to_numpy(), np.maximum(v, 0.5))


def test_vector_ndarrays_round_trip_and_element_writes() -> None:
    @qd.kernel
    def k(a: Nd[vec3, 1], m: Nd[qd.math.mat2, 1]):
        for i in range(a.shape[0]):
            a[i] = vec3(i, i + 1, i + 2)
            a[i].y = 7
            a[i][2] += 100
            m[i] = qd.math.mat2(i, 0, 0, 1) @ m[i]
            m[i][1, 0] = -1

    for make in (lambda: qd.Vector.ndarray(3, qd.f32, (4,)), lambda: qd.ndarray(vec3, (4,))):
        a = make()
        assert a.shape == (4,) and a.to_numpy().shape == (4, 3)
        m = qd.Matrix.ndarray(2, 2, qd.f32, (4,))
        m.from_numpy(np.tile(np.arange(4, dtype=np.float32).reshape(2, 2), (4, 1, 1)))
        k(a, m)
        i = np.arange(4)
        np.testing.assert_array_equal(a.to_numpy(), np.stack([i, np.full(4, 7), i + 102], 1))
        want = np.stack([np.diag([j, 1]) @ np.arange(4).reshape(2, 2) for j in range(4)]).astype(np.float32)
        want[:, 1, 0] = -1
        np.testing.assert_array_equal(m.to_numpy(), want)


def test_numpy_arrays_as_vector_ndarrays_and_vector_atomics() -> None:
    @qd.kernel
    def k(p: Nd[vec3, 1], total: Nd[vec3, 1]):
        for i in range(p.shape[0]):
            total[0] += p[i]
            qd.atomic_max(total[1], p[i])

    p = rng.random((1000, 3)).astype(np.float32)
    total = np.zeros((2, 3), np.float32)
    total[1] = -1
    k(p, total)
    np.testing.assert_allclose(total[0], p.sum(0), rtol=1e-4)
    np.testing.assert_array_equal(total[1], p.max(0))


def test_vector_fill_and_loops_over_vectors() -> None:
    @qd.kernel
    def k() -> tuple[vec3, qd.f32]:
        v = vec3(1, 2, 3)
        s = 0.0
        for e in qd.static(v):
            s += e
        v.fill(4)
        return v, s

    v, s = k()
    np.testing.assert_array_equal(v.to_numpy(), [4, 4, 4])
    assert s == 6.0


def test_python_scope_vectors_and_types() -> None:
    v = qd.Vector([1, 2, 3])
    assert v.n == 3 and v[1] == 2 and list(v) == [1, 2, 3]
    np.testing.assert_array_equal((v + 1).to_numpy(), [2, 3, 4])
    assert qd.math.vec3(1, 2, 3).norm() == pytest.approx(np.sqrt(14))
    m = qd.Matrix([[1, 2], [3, 4]])
    np.testing.assert_array_equal((m @ qd.Vector([1, 1])).to_numpy(), [3, 7])
    assert qd.types.vector(3, qd.f32) == vec3.__class__((3,), qd.f32)
    g = qd.Vector([0.0, -9.8, 0.0])

    @qd.kernel
    def k(dt: qd.f32) -> vec3:
        return g * dt  # a captured Python-scope vector is a constant

    np.testing.assert_allclose(k(0.5).to_numpy(), [0, -4.9, 0], rtol=1e-6)


def test_vector_errors_point_at_the_source() -> None:
    @qd.kernel
    def k() -> vec3:
        a = qd.Vector([1.0, 2.0])
        b = qd.Vector([1.0, 2.0, 3.0])
        return a + b

    with pytest.raises(qd.QuadrantsTypeError, match="shapes") as e:
        k()
    assert "return a + b" in str(e.value)

    @qd.kernel
    def k2() -> vec3:
        v = qd.Vector([1.0, 2.0, 3.0])
        v = qd.Vector([1.0, 2.0])
        return v

    with pytest.raises(qd.QuadrantsTypeError, match="cannot assign") as e:
        k2()
    assert "v = qd.Vector([1.0, 2.0])" in str(e.value)


def test_conditional_expression_on_vectors() -> None:
    @qd.kernel
    def k(x: Nd[vec3, 1], t: Nd[qd.f32, 1]):
        for i in range(x.shape[0]):
            c = vec3(1.0, 2.0, 3.0)
            x[i] = c / t[i] if t[i] > 1.0 else vec3(0.0, 1, 0.0)

    t = np.array([2.0, 0.5, 4.0], dtype=np.float32)
    x = qd.Vector.ndarray(3, qd.f32, (3,))
    k(x, t)
    want = np.where(t[:, None] > 1, np.array([1.0, 2.0, 3.0]) / t[:, None], np.array([0.0, 1.0, 0.0]))
    np.testing.assert_allclose(x.to_numpy(), want, rtol=1e-6)

    @qd.kernel
    def bad(t: qd.f32) -> qd.f32:
        v = vec3(1.0, 2.0, 3.0) if t > 0 else qd.math.vec2(1.0, 2.0)
        return v[0]

    with pytest.raises(qd.QuadrantsTypeError, match="both branches"):
        bad(1.0)


def test_data_oriented_vector_members_are_guarded_by_value() -> None:
    """Real Quadrants 1.3.3 keeps the first value (stale); a changed member recompiles here."""

    @qd.data_oriented
    class S:
        def __init__(self) -> None:
            self.c = vec3(1.0, 2.0, 3.0)
            self.x = qd.Vector.ndarray(3, qd.f32, (2,))

        @qd.kernel
        def k(self):
            for i in range(2):
                self.x[i] = self.c

    s = S()
    s.k()
    np.testing.assert_array_equal(s.x.to_numpy()[0], [1, 2, 3])
    s.c[1] = 20.0  # changed in place
    s.k()
    np.testing.assert_array_equal(s.x.to_numpy()[0], [1, 20, 3])
    s.c = vec3(5.0, 5.0, 5.0)
    s.k()
    np.testing.assert_array_equal(s.x.to_numpy()[0], [5, 5, 5])


def test_vectors_compare_with_lists_and_reduce_with_all_any() -> None:
    @qd.kernel
    def k(v: qd.math.vec2) -> qd.types.vector(4, qd.i32):
        return qd.Vector([all(v == [1.0, 2.0]), any(v == [1.0, 0.0]), all([0.0, 2.0] == v), any(v > 5.0)])

    np.testing.assert_array_equal(np.asarray(k(qd.Vector([1.0, 2.0]))), [1, 1, 0, 0])
    np.testing.assert_array_equal(np.asarray(k(qd.Vector([0.0, 2.0]))), [0, 0, 1, 0])


def test_a_runtime_vector_shape_is_compile_time() -> None:
    @qd.kernel
    def total(a: qd.math.vec3) -> qd.f32:
        m = qd.math.mat2([[1.0, 2.0], [3.0, 4.0]])
        s = 0.0
        for i in qd.static(range(a.n)):
            s += a[i]
        for i, j in qd.static(qd.ndrange(m.n, m.m)):
            s += m[i, j]
        return s

    @qd.kernel
    def bad(a: qd.math.vec3) -> qd.f32:
        return qd.static(a[0])

    assert total(qd.Vector([1.0, 2.0, 3.0])) == 16.0
    with pytest.raises(qd.QuadrantsCompilationError, match="only its shape"):
        bad(qd.Vector([1.0, 2.0, 3.0]))


def test_conditional_expressions_broadcast_a_scalar_branch_and_refuse_vector_conditions() -> None:
    @qd.kernel
    def clamp_bad(v: Nd[vec3, 1]):
        for i in range(v.shape[0]):
            v[i] = 0 if v[i][0] < 0 or v[i][2] > 4 else v[i] * 2

    @qd.kernel
    def vector_cond(v: Nd[vec3, 1]):
        for i in range(v.shape[0]):
            v[i] = 0 if v[i] < 0 else v[i]

    v = np.array([[1, -2, 3], [-1, 2, -3], [5, 5, 5]], np.float32)
    clamp_bad(v)
    np.testing.assert_array_equal(v, [[2, -4, 6], [0, 0, 0], [0, 0, 0]])
    with pytest.raises(qd.QuadrantsSyntaxError, match='Please use "qd.select" instead.'):
        vector_cond(v)


def test_slicing_vectors_and_matrices_as_quadrants_does() -> None:
    """`v[1:]`, `v[::2]`, `T[:3, :3]`, `T[1, 1:3]`, `T[0:2, 2]` select at compile time; an axis given by an
    index drops out (values checked against numpy slicing; shapes as real Quadrants 1.3.3 gives them)."""
    mat4 = qd.types.matrix(4, 4, qd.f32)

    @qd.kernel
    def k(v: qd.types.vector(4, qd.f32), t: mat4) -> tuple[qd.types.vector(3, qd.f32), qd.types.vector(2, qd.f32),
                                                       qd.types.matrix(3, 3, qd.f32), qd.types.vector(2, qd.f32),
                                                       qd.types.vector(2, qd.f32)]:  # fmt: skip
        return v[1:], v[::2], t[:3, :3], t[1, 1:3], t[0:2, 2]

    v = rng.normal(size=4).astype(np.float32)
    t = rng.normal(size=(4, 4)).astype(np.float32)
    a, b, c, d, e = k(v, t)
    np.testing.assert_array_equal(a.to_numpy(), v[1:])
    np.testing.assert_array_equal(b.to_numpy(), v[::2])
    np.testing.assert_array_equal(c.to_numpy(), t[:3, :3])
    np.testing.assert_array_equal(d.to_numpy(), t[1, 1:3])
    np.testing.assert_array_equal(e.to_numpy(), t[0:2, 2])


def test_a_slice_of_an_ndarray_element_computes_with_it() -> None:
    @qd.kernel
    def k(x: Nd[qd.types.vector(4, qd.f32), 1], out: Nd[qd.f32, 1]):
        for i in range(x.shape[0]):
            tail = x[i][1:]
            out[i] = tail.dot(tail) + x[i][:2].sum()

    x = rng.normal(size=(5, 4)).astype(np.float32)
    out = np.zeros(5, np.float32)
    k(x, out)
    np.testing.assert_allclose(out, (x[:, 1:] ** 2).sum(1) + x[:, :2].sum(1), rtol=1e-5)


def test_slices_quadrants_refuses_are_located_errors() -> None:
    vec4 = qd.types.vector(4, qd.f32)

    @qd.kernel
    def negative(v: vec4) -> qd.f32:
        return v[-2:].sum()

    @qd.kernel
    def runtime_bound(v: vec4, n: qd.i32) -> qd.f32:
        return v[n:].sum()

    @qd.kernel
    def empty(v: vec4) -> qd.f32:
        return v[3:1].sum()

    v = np.ones(4, np.float32)
    with pytest.raises(qd.QuadrantsSyntaxError, match="Negative indices are not supported") as e:
        negative(v)
    assert "v[-2:]" in str(e.value)  # the source line is shown
    with pytest.raises(qd.QuadrantsSyntaxError, match="slice bounds must be compile-time constants"):
        runtime_bound(v, 1)
    with pytest.raises(qd.QuadrantsSyntaxError, match="selects no element"):
        empty(v)


def test_lists_and_scalars_assign_to_vector_and_matrix_targets() -> None:
    """As in Quadrants 1.3.3: a (nested) list of the target's size stores element-wise, a scalar broadcasts to
    every element, `+=` takes a list too (values as real Quadrants gives them for the same kernel)."""

    @qd.kernel
    def k(a: Nd[qd.types.matrix(2, 2, qd.f32), 1], b: Nd[qd.types.vector(3, qd.i32), 1], n: qd.i32):
        for i in range(2):
            a[i] = [[i, i + 1], [i + 2, i + 3.5]]
        a[2] = 42
        b[0] = [100, 10, n]
        b[1] = n
        v = qd.Vector([1, 2, 3])
        v = [4, 5, 6]
        b[2] = v
        b[3] += [1, 2, n]

    a, b = np.zeros((3, 2, 2), np.float32), np.ones((4, 3), np.int32)
    k(a, b, 7)
    np.testing.assert_array_equal(a, [[[0, 1], [2, 3.5]], [[1, 2], [3, 4.5]], [[42, 42], [42, 42]]])
    np.testing.assert_array_equal(b, [[100, 10, 7], [7, 7, 7], [4, 5, 6], [2, 3, 8]])


def test_a_list_of_another_size_is_a_located_type_error() -> None:
    @qd.kernel
    def k(b: Nd[qd.types.vector(3, qd.i32), 1]):
        b[0] = [1, 2]

    with pytest.raises(qd.QuadrantsTypeError, match=r"cannot assign '\[Tensor \(2\) i32\]' to '\[Tensor \(3\) i32\]'"):
        k(np.zeros((1, 3), np.int32))


def test_list_comprehensions_unroll_at_compile_time() -> None:
    @qd.kernel
    def k(o: Nd[qd.f32, 1], n: qd.i32):
        mat = qd.Matrix([[x * 3 + y for y in range(3)] for x in range(3)])
        v = qd.Vector([n * i for i in range(4) if i != 2])
        z = qd.Matrix([[0.0 for _ in range(4)] for _ in range(5)])
        w = qd.Vector([e * 2 for e in v])
        for i in range(9):
            o[i] = mat[i // 3, i % 3]
        o[9], o[10], o[11], o[12] = v.sum(), v.n, z.n * 10 + z.m, w.sum()

    o = np.zeros(13, np.float32)
    k(o, 2)
    want = [*range(9), 2 * (0 + 1 + 3), 3, 54, 4 * (0 + 1 + 3)]
    np.testing.assert_array_equal(o, want)


def test_a_list_comprehension_over_a_runtime_range_is_a_located_error() -> None:
    @qd.kernel
    def k(n: qd.i32) -> qd.i32:
        return len([i for i in range(n)])

    with pytest.raises(qd.QuadrantsSyntaxError, match="range\\(\\) with runtime bounds"):
        k(3)


def test_trace_in_both_scopes() -> None:
    @qd.kernel
    def k(m: qd.types.matrix(2, 2, qd.f32)) -> qd.f32:
        return m.trace()

    m = np.array([[0.5, 3.0], [5.0, 7.0]], np.float32)
    assert k(m) == pytest.approx(7.5)
    assert qd.Matrix(m.tolist()).trace() == pytest.approx(7.5)
    with pytest.raises(qd.QuadrantsCompilationError, match=r"expected a square matrix, got shape \(3, 2\)"):
        qd.Matrix([[0.1, 3.0], [5.0, 7.0], [1.0, 2.0]]).trace()


def test_a_matrix_takes_two_indices_and_a_vector_one() -> None:
    """As in Quadrants: `m[0]` of a matrix and `v[0, 0]` of a vector are compile errors (no row access)."""

    @qd.kernel
    def row(m: qd.types.matrix(2, 2, qd.f32)) -> qd.f32:
        return m[0].sum()

    @qd.kernel
    def two(v: vec3) -> qd.f32:
        return v[0, 0]

    with pytest.raises(qd.QuadrantsCompilationError, match="Expected 2 indices, got 1"):
        row(np.eye(2, dtype=np.float32))
    with pytest.raises(qd.QuadrantsCompilationError, match="Expected 1 indices, got 2"):
        two(np.ones(3, np.float32))


@pytest.mark.parametrize("op", ["iadd", "isub", "imul", "ifloordiv", "imod", "ilshift", "irshift", "ior", "ixor",
                                "iand"])  # fmt: skip
def test_python_scope_matrices_take_every_in_place_operator(op: str) -> None:
    import operator

    a, b = np.array([[1, 2], [3, -4]]), np.array([[5, 6], [7, 3]])
    fn = getattr(operator, op)
    np.testing.assert_array_equal(fn(qd.Matrix(a), qd.Matrix(b)).to_numpy(), fn(a.copy(), b))


def test_python_scope_matrices_compare_element_wise_with_lists() -> None:
    m = qd.Matrix([[3.0, 4.0], [5.0, 6.0]])
    assert (m < [[3.5, 4.5], [5.5, 6.5]]).all() and not (m < [[3.5, 4.5], [5.5, 6.0]]).all()
    assert (m >= [[3, 4], [5, 6]]).all() and (m > 2).all() and (m <= 6).all()
    assert (m != [[3, 4], [5, 7]]).any() and not (m != [[3, 4], [5, 6]]).any()


@pytest.mark.parametrize(
    "op, want",
    [(operator.add, [125, 54]), (operator.sub, [-41, 30]), (operator.mul, [3486, 504]), (operator.floordiv, [0, 3]),
     (operator.lt, [1, 0]), (operator.and_, [2, 8]), (operator.mod, [42, 6])],
)  # fmt: skip
def test_operator_module_functions_on_runtime_vectors(op, want) -> None:
    """`ops(a, b)` with `ops` an operator-module function captured by the kernel (Quadrants' tests pass them
    around): the operator it names, as Quadrants computes it."""
    a = qd.Vector([42, 42])
    b = qd.Vector.field(2, dtype=qd.i32, shape=())
    b.from_numpy(np.array([83, 12], dtype=np.int32))
    r = qd.Vector.field(2, dtype=qd.i32, shape=())

    @qd.kernel
    def run():
        r[None] = op(a, b[None])

    run()
    assert r[None].to_numpy().tolist() == want


def test_operator_module_unary_and_matmul() -> None:
    b = qd.Vector.field(2, dtype=qd.i32, shape=())
    b.from_numpy(np.array([83, -12], dtype=np.int32))
    r = qd.Vector.field(3, dtype=qd.i32, shape=())

    @qd.kernel
    def run():
        n, i = operator.neg(b[None]), operator.invert(b[None])
        r[None] = qd.Vector([n[1], i[0], operator.matmul(qd.Vector([1, 2]), b[None])])

    run()
    assert r[None].to_numpy().tolist() == [12, -84, 59]


def test_clamped_ndarrays_clamp_indices_and_element_indices() -> None:
    """`qd.types.ndarray(boundary="clamp")`: out-of-range indices read and write the nearest element, and a
    runtime index into the element (a vector/matrix) is clamped as a row-major index, as in Quadrants."""

    @qd.kernel
    def read(x: qd.types.ndarray(boundary="clamp"), y: qd.i32) -> qd.f32:
        return x[y]

    @qd.kernel
    def write(x: qd.types.ndarray(dtype=qd.f32, ndim=1, boundary="clamp"), y: qd.i32):
        x[y] += 10

    @qd.kernel
    def read_mat(x: qd.types.ndarray(boundary="clamp"), i: qd.i32, j: qd.i32) -> qd.f32:
        return x[1, 2][i, j]

    x = qd.ndarray(qd.f32, shape=3)
    x.from_numpy(np.arange(3, dtype=np.float32))
    assert [read(x, k) for k in (-1, -2, 3, 4, 1)] == [0, 0, 2, 2, 1]
    write(x, 7)
    write(x, -7)
    assert x.to_numpy().tolist() == [10, 1, 12]
    m = qd.ndarray(qd.math.mat2, shape=(3, 3))
    m[1, 2] = [[1, 2], [2, 3]]
    assert [read_mat(m, i, j) for i, j in [(-1, 0), (1, -1), (2, 0), (1, 2)]] == [1, 2, 3, 3]
    assert qd.types.ndarray(boundary="clamp") != qd.types.ndarray()
    with pytest.raises(ValueError, match="boundary"):
        qd.types.ndarray(boundary="wrap")


def test_ndarray_annotation_element_shape_and_refused_arguments() -> None:
    """`qd.types.ndarray(qd.f32, ndim=1, element_shape=(3,))` is an ndarray of 3-vectors, as in Quadrants (it was
    ignored); `field_dim` is refused as there."""
    t = qd.types.ndarray(qd.f32, ndim=1, element_shape=(3,))
    assert t == qd.types.ndarray(qd.types.vector(3, qd.f32), ndim=1)

    @qd.kernel
    def total(x: t) -> qd.f32:
        s = 0.0
        for i in range(x.shape[0]):
            s += x[i].sum()
        return s

    assert total(np.ones((4, 3), np.float32)) == 12
    with pytest.raises(ValueError, match="element_dim=1"):
        total(np.ones(4, np.float32))
    with pytest.raises(ValueError, match="field_dim"):
        qd.types.ndarray(qd.f32, field_dim=1)


def test_ndarray_annotation_element_dim_takes_vectors_and_matrices_of_any_size() -> None:
    """`qd.types.ndarray(element_dim=1)` (Genesis writes it) takes vectors of any size and specializes on it, as in
    Quadrants 0.5.2 and 1.3.3; `element_dim=2` matrices; a numpy array's last dimensions are the elements."""

    @qd.kernel
    def weighted(x: qd.types.ndarray(ndim=1, element_dim=1)) -> qd.f32:
        s = 0.0
        for i in range(x.shape[0]):
            s += x[i].sum() * x[i].n
        return s

    @qd.kernel
    def mat(x: qd.types.ndarray(element_dim=2)) -> qd.f32:
        s = 0.0
        for i in range(x.shape[0]):
            s += x[i].sum() * x[i].n * 10 + x[i].m
        return s

    v3 = qd.ndarray(qd.math.vec3, 4)
    v3.fill(1)
    v2 = qd.ndarray(qd.types.vector(2, qd.f32), 4)
    v2.fill(1)
    assert (weighted(v3), weighted(v2), weighted(np.ones((4, 5), np.float32))) == (36, 16, 100)
    m = qd.ndarray(qd.types.matrix(2, 3, qd.f32), 2)
    m.fill(1)
    assert mat(m) == 246
    with pytest.raises(ValueError, match="element_dim=1"):
        weighted(qd.ndarray(qd.f32, 4))
    with pytest.raises(ValueError, match="element_dim=1"):
        weighted(np.ones(4, np.float32))
    with pytest.raises(ValueError, match="element_dim=2"):
        mat(v3)
    with pytest.raises(ValueError, match="doesn't match"):
        qd.types.ndarray(element_dim=1, element_shape=(2, 2))
    assert qd.types.ndarray(element_dim=1, element_shape=(3,)) == qd.types.ndarray(qd.types.vector(3, float))


def test_fill_of_a_python_scope_vector_or_a_field_element_writes_in_place() -> None:
    y = qd.Vector.field(3, qd.f32, shape=(2, 2))
    y[0, 1].fill(2.0)  # the field's memory
    want = np.zeros((2, 2, 3), np.float32)
    want[0, 1] = 2.0
    np.testing.assert_array_equal(y.to_numpy(), want)
    m = qd.Matrix([[1, 2], [3, 4]])
    m.fill(7)
    assert m.to_list() == [[7, 7], [7, 7]]


def test_numpy_and_matrix_members_are_guarded_by_shape_and_value() -> None:
    @qd.data_oriented
    class S:
        def __init__(self) -> None:
            self.res = np.array([2, 3])
            self.m = qd.Matrix([[1.0, 2.0], [3.0, 4.0]])
            self.out = qd.ndarray(qd.f32, (2,))

        @qd.kernel
        def k(self):
            self.out[0] = self.res[0] * 10 + self.res[1]
            self.out[1] = self.m[1, 0]

    s = S()
    for _ in range(2):  # the second call takes the fast path
        s.k()
    assert s.out.to_numpy().tolist() == [23.0, 3.0]
    s.res[1] = 7  # in place
    s.m[1, 0] = -1.0
    s.k()
    assert s.out.to_numpy().tolist() == [27.0, -1.0]
    s.m = qd.Matrix([[1.0, 2.0, 0.0], [5.0, 4.0, 0.0]])  # another shape, same leading elements
    s.k()
    assert s.out.to_numpy().tolist() == [27.0, 5.0]
