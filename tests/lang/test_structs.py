"""Struct types: `qd.types.struct`, `@qd.dataclass`, `qd.Struct`, struct fields, struct arguments and results.

Expected values follow real Quadrants 1.3.3 (checked side by side): members cast to their types (integers wrap),
value semantics for struct variables and by-value func parameters, references for field elements, `self` in
methods and `qd.template()` parameters.
"""

from __future__ import annotations

import numpy as np
import pytest

import quadrants as qd
from tests.conftest import qd_init

vec2, vec3 = qd.math.vec2, qd.math.vec3


def test_struct_argument_nested_with_matrix_and_integer_wrap() -> None:
    mat = qd.types.matrix(3, 2, qd.f32)
    inner = qd.types.struct(a=qd.i16, m=mat)
    outer = qd.types.struct(x=qd.f32, b=inner)

    @qd.kernel
    def total(s: outer) -> qd.f32:
        r = s.x + s.b.a
        for i in range(3):
            for j in range(2):
                r += s.b.m[i, j] * (i + 1)
        return r

    arg = outer(x=0.5, b=inner(a=65537, m=mat(1, 2, 3, 4, 5, 6)))  # 65537 wraps to 1 in an i16, as in Quadrants
    want = 0.5 + 1 + (1 + 2) * 1 + (3 + 4) * 2 + (5 + 6) * 3
    assert total(arg) == pytest.approx(want)
    assert total(arg) == pytest.approx(want)  # the second call takes the generated fast path
    assert total(outer(x=0.0, b=inner(a=-32769, m=mat(0, 0, 0, 0, 0, 0)))) == 32767


def test_struct_result_nested_and_in_a_tuple() -> None:
    inner = qd.types.struct(v=vec3, k=qd.i16)
    outer = qd.types.struct(a=qd.f32, b=inner)

    @qd.kernel
    def make(t: qd.f32) -> outer:
        return outer(a=t, b=inner(v=vec3(100, t, 3), k=65537))

    @qd.kernel
    def pair() -> tuple[qd.i32, inner]:
        return 7, inner(v=vec3(1, 2, 3))

    for _ in range(2):
        r = make(0.25)
        assert isinstance(r, qd.Struct)
        assert r.a == 0.25 and r.b.k == 1
        assert r.b.v.to_numpy().tolist() == [100.0, 0.25, 3.0]
    n, s = pair()
    assert n == 7 and s.k == 0 and s.v.to_numpy().tolist() == [1.0, 2.0, 3.0]


def test_struct_field_elements_are_references_and_variables_are_copies() -> None:
    particle = qd.types.struct(id=qd.i32, pos=vec2)
    f = particle.field(shape=4)

    @qd.kernel
    def fill():
        for i in f:
            f[i].id = i * 2
            f[i].pos = vec2(i, -i)
            f[i].pos[1] += 10

    @qd.kernel
    def swap_and_copy() -> qd.i32:
        x = f[1]
        f[1] = f[2]
        f[2] = x
        x.id += 100  # a copy: the field keeps its value
        return x.id

    fill()
    assert swap_and_copy() == 102
    got = f.to_numpy()
    assert got["id"].tolist() == [0, 4, 2, 6]
    assert got["pos"].tolist() == [[0, 10], [2, 8], [1, 9], [3, 7]]


def test_struct_field_in_python_scope() -> None:
    s = qd.types.struct(a=qd.i16, b=vec3)
    f = s.field(shape=(3,))
    f[1].a = 5
    f[1].b = [4, 5, 6]
    f[2] = s(a=7, b=[1, 1, 1])
    f[0] = {"a": 3, "b": [9, 9, 9]}
    assert f[1].a == 5 and f[1].b.to_numpy().tolist() == [4, 5, 6]
    f[1].b[0] = 40  # a member vector is a view of the field
    d = f.to_numpy()
    assert d["a"].tolist() == [3, 5, 7] and d["a"].dtype == np.int16
    assert d["b"][1].tolist() == [40, 5, 6]
    assert f.a.to_numpy().tolist() == [3, 5, 7] and f.keys == ["a", "b"] and f.shape == (3,)
    f.from_numpy({"a": np.array([1, 2, 3], np.int16), "b": np.ones((3, 3), np.float32)})
    assert f[2].a == 3 and f[0].b.to_numpy().tolist() == [1, 1, 1]
    torch = pytest.importorskip("torch")  # Genesis' path planner reads its RRT nodes so
    t = f.to_torch()
    assert t["a"].tolist() == [1, 2, 3] and t["a"].dtype == torch.int16 and t["b"].shape == (3, 3)
    f.from_torch({"a": torch.tensor([7, 8, 9], dtype=torch.int16), "b": torch.zeros(3, 3)})
    assert f[1].a == 8 and f[1].b.to_numpy().tolist() == [0, 0, 0]
    f.fill(0)
    assert f.to_numpy()["b"].sum() == 0


def test_qd_struct_field_and_anonymous_struct_values() -> None:
    g = qd.Struct.field({"v": qd.types.vector(3, qd.f32), "n": qd.i32}, shape=())

    @qd.kernel
    def k() -> qd.f32:
        s = qd.Struct(a=qd.Vector([1.0, 2.0, 3.0]), b=2)
        g[None].v = s.a * s.b
        g[None].n = s.b + 1
        return s.a.sum()

    assert k() == 6.0
    assert g[None].v.to_numpy().tolist() == [2, 4, 6] and g[None].n == 3
    v = qd.Struct(a=1, b=qd.Vector([1, 2]))
    assert v.a == 1 and v.to_dict()["b"].tolist() == [1, 2]


def test_dataclass_methods_mutate_self_and_missing_members_are_zero() -> None:
    @qd.dataclass
    class Ray:
        pos: vec3
        d: vec3
        hits: qd.i32

        @qd.func
        def at(self, t):
            return self.pos + t * self.d

        @qd.func
        def advance(self):
            self.pos += self.d
            self.hits += 1

    @qd.kernel
    def run() -> qd.types.vector(4, qd.f32):
        r = Ray(vec3(1), vec3(0, 1, 0))  # positional members; `hits` is zero
        r.advance()
        r.advance()
        p = r.at(2.0)
        return qd.Vector([p.x, p.y, p.z, r.hits])

    assert run().to_numpy().tolist() == [1, 5, 1, 2]


def test_func_struct_parameters_by_value_and_by_reference() -> None:
    s = qd.types.struct(a=qd.i32, b=qd.f32)

    @qd.func
    def bump_copy(p: s) -> qd.i32:
        p.a += 10
        return p.a

    @qd.func
    def bump_plain(p):
        p.a += 20

    @qd.func
    def bump_ref(p: qd.template()):
        p.a += 1

    @qd.func
    def make(a) -> s:
        return s(a=a, b=0.5)

    @qd.kernel
    def k() -> qd.types.vector(3, qd.i32):
        x = make(3)
        inner = bump_copy(x)
        bump_plain(x)
        bump_ref(x)
        return qd.Vector([x.a, inner, qd.i32(x.b * 10)])

    assert k().to_numpy().tolist() == [4, 13, 5]


def test_func_returning_a_field_element() -> None:
    tp = qd.types.struct(a=qd.i32)
    f = tp.field(shape=2)

    @qd.func
    def get(i) -> tp:
        return f[i]

    @qd.kernel
    def k() -> tp:
        f[1].a = 9
        return get(1)

    assert k().a == 9


def test_struct_errors() -> None:
    sphere = qd.types.struct(center=vec3, radius=float)
    circle = qd.types.struct(center=vec2, radius=float)
    sphere_i = qd.types.struct(center=vec3, radius=int)

    @qd.kernel
    def wrong_struct() -> sphere:
        return circle(center=vec2(1, 2), radius=2)

    @qd.kernel
    def wrong_member_type() -> sphere:
        return sphere_i(center=vec3(1, 2, 3), radius=2)

    @qd.kernel
    def unknown_member():
        sphere(centre=vec3(0))

    @qd.kernel
    def assign_other_struct():
        a = sphere()
        a = circle()  # noqa: F841

    @qd.kernel
    def bad_index():
        s = qd.Struct(m=qd.Matrix([[0, 0, 0], [0, 0, 0]]), n=2)
        print(s.m[0])

    @qd.kernel
    def write_argument(s: sphere):
        s.radius = 1.0

    for k, match in [(wrong_struct, "expected a struct"), (wrong_member_type, "expected a struct"),
                     (unknown_member, "no member 'centre'"), (assign_other_struct, "cannot assign"),
                     (bad_index, "Expected 2 indices, got 1")]:  # fmt: skip
        with pytest.raises(qd.QuadrantsCompilationError, match=match):
            k()
    with pytest.raises(qd.QuadrantsCompilationError, match="kernel argument"):
        write_argument(sphere())
    g = sphere.field(shape=2, needs_grad=True)
    assert g.grad.radius.to_numpy().tolist() == [0, 0] and g.grad.radius is not g.radius


def test_struct_types_compare_by_members_and_print_their_members() -> None:
    a = qd.types.struct(x=qd.f32, v=vec3)
    assert a == qd.types.struct(x=qd.f32, v=vec3) and hash(a) == hash(qd.types.struct(x=qd.f32, v=vec3))
    assert a != qd.types.struct(x=qd.f64, v=vec3)
    assert repr(a) == "struct(x=f32, v=vector(3, float))"
    assert a(x=1).to_dict()["v"].tolist() == [0, 0, 0]


def test_uvec_follows_the_default_integer_width() -> None:
    @qd.kernel
    def k() -> qd.u64:
        return qd.math.uvec2(qd.u64(2**63 - 1)).x

    assert k() == 2**32 - 1
    qd_init(default_ip=qd.i64)
    assert k() == 2**63 - 1


def test_python_scope_struct_values_take_their_member_types() -> None:
    """`S(...)` in Python scope converts each member to its type, as a kernel does (and as Quadrants 1.3.3 does
    in Python scope): a float for an integer member truncates toward zero, an int for a float member is a
    float; `qd.Struct(...)` has no types and keeps what it is given."""
    S = qd.types.struct(a=int, b=qd.types.vector(2, int), c=qd.f32, d=qd.types.vector(2, float))

    @qd.kernel
    def in_kernel() -> qd.f32:
        s = S(2.5, (2.5, -1.5), 3, (1, 2))
        return s.a + s.b[0] + s.b[1] + s.c + s.d[1]

    s = S(2.5, (2.5, -1.5), 3, (1, 2))
    assert (s.a, s.b.to_numpy().tolist(), s.c, s.d.to_numpy().tolist()) == (2, [2, -1], 3.0, [1.0, 2.0])
    assert type(s.a) is int and type(s.c) is float and s.d.to_numpy().dtype.kind == "f"
    assert s.a + s.b[0] + s.b[1] + s.c + s.d[1] == in_kernel() == 8.0
    assert S(a=-2.7).a == -2 and qd.Struct(a=2.5).a == 2.5


def test_a_struct_type_called_with_one_scalar_fills_its_first_member_from_it() -> None:
    # Quadrants calls a compound member's type with the scalar: S(1) = S(line=line3(1)) = line3(vec3(1), 0), idx 0
    qd_init()
    line3 = qd.types.struct(linedir=vec3, length=qd.f32)
    pair = qd.types.struct(line=line3, idx=qd.i32)
    x = pair.field(shape=3)

    @qd.kernel
    def fill() -> None:
        for i in x:
            x[i] = pair(2)
            x[i].idx += i

    fill()
    for i in range(3):
        np.testing.assert_allclose(x[i].line.linedir.to_numpy(), [2.0, 2.0, 2.0])
        assert x[i].line.length == 0.0 and x[i].idx == i
    x[1] = pair(5)  # Python scope: the same rule
    np.testing.assert_allclose(x[1].line.linedir.to_numpy(), [5.0, 5.0, 5.0])
    assert x[1].line.length == 0.0 and x[1].idx == 0


def test_qd_struct_from_a_dict_expression_in_a_kernel() -> None:
    qd_init()

    @qd.kernel
    def k(u: qd.i32) -> qd.i32:
        a = qd.Struct({"a": u, "b": 3})
        b = a
        b.a = 5
        return a.a * 100 + b.a * 10 + b.b

    assert k(7) == 753


def test_python_methods_of_a_dataclass_work_on_its_python_scope_values() -> None:
    @qd.dataclass
    class Pair:
        x: qd.f32
        y: qd.f32

        @qd.func
        def doubled(self):  # type: ignore[no-untyped-def]
            return Pair(self.x * 2, self.y * 2)

        def total(self):  # type: ignore[no-untyped-def]
            return self.x + self.y

    @qd.kernel
    def k(p: Pair) -> Pair:
        return p.doubled()

    out = k(Pair(1, 2))  # a value the kernel returned
    assert out.total() == 6.0 and Pair(0.5, 0.25).total() == 0.75


def test_a_dataclass_member_with_a_default_is_refused_in_quadrants_words() -> None:
    with pytest.raises(qd.QuadrantsSyntaxError, match="Default value in @dataclass is not supported"):

        @qd.dataclass
        class Bad:
            a: int
            b: float = 3.14
