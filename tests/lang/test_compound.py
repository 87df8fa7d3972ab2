"""Compound kernel parameters: dataclasses, @qd.data_oriented, enums, torch tensors."""

from __future__ import annotations

import dataclasses
import enum

import numpy as np
import pytest

import quadrants as qd
from quadrants.lang._fast_caching import FIELD_METADATA_CACHE_VALUE

Nd = qd.types.NDArray
vec3 = qd.math.vec3


@dataclasses.dataclass
class Inner:
    v: qd.types.NDArray[qd.f32, 1]
    scale: qd.f32


@dataclasses.dataclass(frozen=True)
class Params:
    x: qd.types.NDArray[qd.f32, 1]
    dt: qd.f32
    n: int
    g: vec3
    inner: Inner
    f: qd.Tensor


@qd.func
def use_inner(i: Inner, k: qd.i32) -> qd.f32:
    return i.v[k] * i.scale


def test_dataclass_members_are_flattened_into_parameters() -> None:
    @qd.kernel
    def step(p: Params) -> qd.f32:
        s = 0.0
        for i in range(p.x.shape[0]):
            p.x[i] += p.dt * p.g.y + use_inner(p.inner, i) + p.f[i]
            s += p.x[i]
        return s + p.n

    x = qd.ndarray(qd.f32, 4)
    v = np.arange(4, dtype=np.float32)
    fld = qd.field(qd.f32, 4)
    fld.fill(1)
    p = Params(x, 0.5, 7, vec3(0, -2, 0), Inner(v, 3.0), fld)
    s = step(p)
    want = 0.5 * -2 + v * 3.0 + 1
    np.testing.assert_allclose(x.to_numpy(), want)
    assert s == pytest.approx(want.sum() + 7)
    step(dataclasses.replace(p, dt=1.0))  # a runtime member: same compiled kernel
    assert len(step._launchers) == 1


def test_dataclass_cache_value_members_are_compiled_in() -> None:
    @dataclasses.dataclass
    class Cfg:
        layers: int = dataclasses.field(metadata={FIELD_METADATA_CACHE_VALUE: True})
        w: float = 1.0

    @qd.kernel
    def k(c: Cfg) -> qd.f32:
        s = 0.0
        for i in qd.static(range(c.layers)):
            s += c.w * (i + 1)
        return s

    assert k(Cfg(3, 2.0)) == 12.0 and k(Cfg(4, 1.0)) == 10.0
    assert len(k._launchers) == 2
    assert k(Cfg(3, 1.0)) == 6.0 and len(k._launchers) == 2


@qd.data_oriented
class Sim:
    def __init__(self, n: int) -> None:
        self.x = qd.ndarray(qd.f32, (n,))
        self.f = qd.field(qd.f32, (n,))
        self.k = 3
        self.dt = 0.5
        self.params = Inner(np.ones(n, np.float32), 2.0)

    @qd.kernel
    def step(self) -> qd.f32:
        s = 0.0
        for i in range(self.x.shape[0]):
            self.x[i] += self.dt * self.k
            self.f[i] = self.x[i]
            s += self.helper(i)
        return s

    @qd.func
    def helper(self, i: qd.i32) -> qd.f32:
        return self.f[i] * 2 + use_inner(self.params, i)


def test_data_oriented_kernels_funcs_and_members() -> None:
    sim = Sim(4)
    assert sim.step() == pytest.approx(4 * (1.5 * 2 + 2.0))
    np.testing.assert_array_equal(sim.x.to_numpy(), 1.5)
    sim.k = 10  # a primitive member is compiled in: changing it recompiles
    assert sim.step() == pytest.approx(4 * (6.5 * 2 + 2.0))
    assert len(Sim.step._launchers) == 2
    other = Sim(4)
    other.step()
    np.testing.assert_array_equal(other.x.to_numpy(), 1.5)  # its own members


def test_data_oriented_instance_as_template_argument_and_nesting() -> None:
    @qd.data_oriented
    class World:
        def __init__(self) -> None:
            self.sim = Sim(3)
            self.gravity = 9.8

    @qd.kernel
    def k(w: qd.template()) -> qd.f32:
        return w.sim.x[0] + w.gravity * w.sim.k

    w = World()
    assert k(w) == pytest.approx(9.8 * 3)


def test_template_primitives_false_makes_primitives_runtime_arguments() -> None:
    @qd.data_oriented(template_primitives=False)
    class S:
        def __init__(self) -> None:
            self.k = 3

        @qd.kernel
        def get(self) -> qd.i32:
            return self.k * 2

        @qd.kernel
        def static_use(self) -> qd.i32:
            return qd.static(self.k)

    s = S()
    assert s.get() == 6
    s.k = 5
    assert s.get() == 10 and len(S.get._launchers) == 1
    with pytest.raises(qd.QuadrantsTypeError, match="compile-time.*runtime kernel argument") as e:  # Quadrants' words
        s.static_use()
    assert "return qd.static(self.k)" in str(e.value)


class Mode(enum.IntEnum):
    FAST = 1
    EXACT = 2


class Color(enum.Enum):
    RED = 10
    BLUE = 20


def test_enums_as_arguments_and_constants() -> None:
    @qd.kernel
    def k(m: qd.template(), c: Color, x: qd.f32) -> qd.f32:
        r = x
        if qd.static(m == Mode.FAST):
            r = x * 2
        else:
            r = x * 3
        if qd.static(c == Color.BLUE):
            r += 100
        return r + Mode.EXACT + c.value

    assert k(Mode.FAST, Color.RED, 1.0) == 2 + 2 + 10
    assert k(Mode.EXACT, Color.BLUE, 1.0) == 3 + 100 + 2 + 20

    @qd.kernel
    def as_int(m: qd.i32) -> qd.i32:
        return m * 10 + Mode.EXACT

    assert as_int(Mode.FAST) == 12


def test_torch_tensors_are_passed_zero_copy() -> None:
    torch = pytest.importorskip("torch")

    @qd.kernel
    def k(a: Nd[qd.f32, 1], b: Nd[qd.f32, 1]):
        for i in range(a.shape[0]):
            b[i] = a[i] * 2

    a = torch.arange(5, dtype=torch.float32)
    b = torch.zeros(5)
    k(a, b)
    assert b.tolist() == [0, 2, 4, 6, 8]
    with pytest.raises(ValueError, match="required array has dtype=f32"):
        k(torch.zeros(5, dtype=torch.float64), b)


def test_dataclass_errors() -> None:
    @qd.kernel
    def k(p: Inner) -> qd.f32:
        return p.missing

    with pytest.raises(qd.QuadrantsSyntaxError, match="no member 'missing'") as e:
        k(Inner(np.ones(2, np.float32), 1.0))
    assert "return p.missing" in str(e.value)
    with pytest.raises(qd.QuadrantsRuntimeTypeError, match="expected a Inner"):
        k(3)


def test_capturing_a_global_ndarray_is_an_error() -> None:
    a = qd.ndarray(qd.f32, 4)

    @qd.kernel
    def read() -> qd.f32:
        return a[0]

    @qd.kernel
    def write():
        for i in range(4):
            a[i] = 1.0

    for k, line in ((read, "return a[0]"), (write, "a[i] = 1.0")):
        with pytest.raises(qd.QuadrantsCompilationError, match="captured from outside the kernel") as e:
            k()
        assert line in str(e.value) and "test_compound.py" in str(e.value)


def test_documented_vector_restrictions_raise_with_locations() -> None:
    @qd.kernel
    def out_of_range() -> qd.f32:
        v = qd.Vector([1.0, 2.0, 3.0])
        return v[3]

    @qd.kernel
    def bad_cross() -> qd.f32:
        v = qd.Vector([1.0, 2.0, 3.0, 4.0])
        return v.cross(v).sum()

    @qd.kernel
    def big_inverse() -> qd.f32:
        m = qd.Matrix.identity(qd.f32, 5)
        return m.inverse()[0, 0]

    for k, line, msg in ((out_of_range, "return v[3]", "out of range"), (bad_cross, "v.cross(v)", "cross"),
                         (big_inverse, "m.inverse()", "up to 4x4")):  # fmt: skip
        with pytest.raises(qd.QuadrantsTypeError, match=msg) as e:
            k()
        assert line in str(e.value)


def test_assigning_a_data_oriented_member_is_an_error() -> None:
    @qd.data_oriented
    class S:
        def __init__(self) -> None:
            self.k = 1

        @qd.kernel
        def set(self):
            self.k = 2

    with pytest.raises(qd.QuadrantsSyntaxError, match="cannot assign to attribute 'k'") as e:
        S().set()
    assert "self.k = 2" in str(e.value)


def test_a_runtime_bool_member_is_an_integer_argument_as_in_quadrants() -> None:
    """With template_primitives=False a bool member is lifted as the default integer: set later to 2 (an int)
    it passes 2, not True (Quadrants 1.3.3 gives 6.0 below; a u1 argument gave 3.0)."""

    @qd.data_oriented(template_primitives=False)
    class Sim:
        def __init__(self) -> None:
            self.scale = 2.0
            self.flag = True
            self.out = qd.field(qd.f32, shape=1)

    sim = Sim()

    @qd.kernel
    def step(s: qd.template()):
        s.out[0] = s.scale * s.flag

    step(sim)
    assert sim.out.to_numpy()[0] == 2.0
    sim.scale, sim.flag = 3, 2
    step(sim)
    assert sim.out.to_numpy()[0] == 6.0
    sim.flag = False
    step(sim)
    assert sim.out.to_numpy()[0] == 0.0
