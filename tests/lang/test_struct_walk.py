"""How struct arguments are walked: attribute graphs with cycles (`sim.solver.sim is sim`, as simulators build
them), and data_oriented members of dataclasses (walked by value through a template parameter, refused in a typed
dataclass parameter as Quadrants does)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import quadrants as qd
from quadrants.lang import program
from quadrants.lang.args import signature_text

N = 4


@qd.data_oriented
class Solver:
    def __init__(self, sim: object) -> None:
        self.sim = sim
        self.a = qd.ndarray(qd.i32, shape=(N,))
        self.k = 3


@qd.data_oriented
class Sim:
    def __init__(self, m: int = 10) -> None:
        self.solver = Solver(self)
        self.m = m


@qd.kernel
def through_cycle(s: qd.template()):
    for i in range(N):
        s.solver.a[i] = i + s.solver.sim.m + s.solver.sim.solver.k


def test_back_reference_is_bound_to_the_enclosing_object() -> None:
    sim = Sim()
    through_cycle(sim)
    np.testing.assert_array_equal(sim.solver.a.to_numpy(), np.arange(N) + 13)
    through_cycle(sim)  # the fast path checks the back-reference too
    np.testing.assert_array_equal(sim.solver.a.to_numpy(), np.arange(N) + 13)


def test_rebinding_the_back_reference_respecializes() -> None:
    sim = Sim()
    through_cycle(sim)
    sim.solver.sim = Sim(m=100)  # no longer a cycle: the new object is walked as a member
    through_cycle(sim)
    np.testing.assert_array_equal(sim.solver.a.to_numpy(), np.arange(N) + 103)


def test_a_cycle_through_a_dataclass() -> None:
    @dataclasses.dataclass
    class Link:
        owner: object
        scale: int

    @qd.data_oriented
    class Body:
        def __init__(self) -> None:
            self.x = qd.ndarray(qd.f32, shape=(N,))
            self.link = Link(self, 2)

    @qd.kernel
    def fill(b: qd.template()):
        for i in range(N):
            b.link.owner.x[i] = i * b.link.owner.link.scale

    body = Body()
    fill(body)
    np.testing.assert_array_equal(body.x.to_numpy(), np.arange(N) * 2.0)


def test_signature_text_names_the_back_reference() -> None:
    sp = through_cycle.specialize((Sim(),), {}, program.get().config)  # type: ignore[attr-defined]
    text, reason, _ = signature_text(sp)
    assert reason == ""
    assert text is not None and "a.0.solver.sim:alias=a.0;" in text


@qd.data_oriented
class Holder:
    def __init__(self, x: object) -> None:
        self.x = x


@dataclasses.dataclass
class Outer:
    inner: Holder


def test_a_data_oriented_member_of_a_typed_dataclass_parameter_is_refused() -> None:
    @qd.kernel
    def run(s: Outer):
        for i in range(N):
            s.inner.x[i] = i + 1

    x = qd.ndarray(qd.i32, shape=(N,))
    with pytest.raises(qd.QuadrantsSyntaxError, match=r"Kernel arg 's': field 'inner' has @qd.data_oriented type "
                       r"'Holder'.*Use ``s: qd.template\(\)``") as e:  # fmt: skip
        run(Outer(Holder(x)))
    np.testing.assert_array_equal(x.to_numpy(), np.zeros(N))
    assert e.value.loc is not None and "def run(s: Outer)" in e.value.loc.line_text


def test_a_data_oriented_member_of_a_dataclass_template_argument_is_walked() -> None:
    @qd.kernel
    def run(s: qd.template()):
        for i in range(N):
            s.inner.x[i] = i + 1

    x = qd.ndarray(qd.i32, shape=(N,))
    with pytest.warns(DeprecationWarning):  # a plain dataclass given to a template parameter, as Quadrants warns
        run(Outer(Holder(x)))
    np.testing.assert_array_equal(x.to_numpy(), np.arange(N) + 1)
