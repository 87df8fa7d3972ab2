"""A data_oriented object's baked members guard only the kernels that read them.

Genesis' smoke solver keeps its clock in `self.t` (a float, baked into any kernel that reads it) and passes it
to the one kernel that needs it as an argument: the other kernels of the object do not read it, so a new `t`
must not recompile them (it did, 7 kernels each step: 50x slower steps than Quadrants 0.5.2). A member that
is read, whatever way the read takes, still recompiles when it changes (README, "Deliberate semantics").
"""

from __future__ import annotations

import pytest

import quadrants as qd
from quadrants.lang import kernel as kernel_module


@pytest.fixture
def compiles(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The name of each kernel specialization compiled (or loaded) from now on."""
    seen: list[str] = []
    materialize = kernel_module.Kernel.materialize

    def counting(self, *a):  # type: ignore[no-untyped-def]
        seen.append(self.fn.__name__)
        return materialize(self, *a)

    monkeypatch.setattr(kernel_module.Kernel, "materialize", counting)
    return seen


@qd.data_oriented
class Clocked:
    def __init__(self) -> None:
        self.t = 0.0
        self.n = 3
        self.flag = False
        self.inner = Inner()
        self.x = qd.field(qd.f32, shape=4)

    @qd.func
    def scaled(self, v):
        return v * self.n

    @property
    def doubled_t(self) -> float:
        return 2.0 * self.t

    @property
    def count(self) -> int:
        """A plain getter (Genesis' `dt`): it reads `n` only."""
        return self.n

    @qd.kernel
    def unread(self, t: qd.f32):
        for i in range(4):
            self.x[i] = self.scaled(t)  # reads `n` through a method, never `t`

    @qd.kernel
    def reads_t(self):
        for i in range(4):
            self.x[i] = self.t

    @qd.kernel
    def static_flag(self):
        for i in range(4):
            if qd.static(self.flag):
                self.x[i] = 1.0
            else:
                self.x[i] = -1.0

    @qd.kernel
    def through_property(self):
        for i in range(4):
            self.x[i] = self.doubled_t  # Python on the object: may read any member

    @qd.kernel
    def via_getter(self):
        for i in range(4):
            self.x[i] = self.count

    @qd.kernel
    def nested(self):
        for i in range(4):
            self.x[i] = self.inner.k


@qd.data_oriented
class Inner:
    def __init__(self) -> None:
        self.k = 1.5
        self.unused = 0


def test_a_member_no_kernel_reads_does_not_recompile(compiles: list[str]) -> None:
    qd.init(arch=qd.cpu)
    c = Clocked()
    for step in range(6):
        c.unread(c.t)
        assert c.x.to_numpy().tolist() == pytest.approx([3 * c.t] * 4)
        c.t += 0.25
        c.inner.unused += 1
        c.via_getter()
        assert c.x.to_numpy().tolist() == [3.0] * 4
    assert compiles.count("unread") == 1 and compiles.count("via_getter") == 1
    c.n = 5  # read through the method and the getter: recompiles
    c.unread(1.0)
    assert c.x.to_numpy().tolist() == [5.0] * 4
    c.via_getter()
    assert c.x.to_numpy().tolist() == [5.0] * 4
    assert compiles.count("unread") == 2 and compiles.count("via_getter") == 2


@pytest.mark.parametrize("fast", [True, False], ids=["fast-path", "general-path"])
def test_members_read_any_way_still_recompile(compiles: list[str], fast: bool) -> None:
    qd.init(arch=qd.cpu)
    c = Clocked()

    def call(k):  # type: ignore[no-untyped-def]
        if not fast:  # no fast path: every call through the general path's lookup
            k.__get__(c)._primal._fast.clear()
        k.__get__(c)()
        return c.x.to_numpy()[0]

    for t in (0.5, 1.0, 1.5):
        c.t = t
        assert call(Clocked.reads_t) == t
        assert call(Clocked.through_property) == 2 * t
    for flag in (False, True, False):
        c.flag = flag
        assert call(Clocked.static_flag) == (1.0 if flag else -1.0)
    for k in (2.5, 3.5):
        c.inner.k = k
        assert call(Clocked.nested) == k
        c.inner.unused += 1  # unread: `nested` does not recompile for it
    assert compiles.count("reads_t") == 3 and compiles.count("through_property") == 3
    assert compiles.count("static_flag") == 2 and compiles.count("nested") == 2


def test_the_guards_the_code_depends_on_are_in_its_ir() -> None:
    qd.init(arch=qd.cpu)
    c = Clocked()
    k = Clocked.unread.__get__(c)._primal
    spec = k.specialize((c, 0.0), {}, _config())
    req = k.request(spec, _config())
    _, text = req.build_ir()
    paths = [g.path for g in spec.guards]
    kept = [int(n) for n in text.split(" guards(")[1].split(")")[0].split(", ")]
    assert (0, "n") in [paths[i] for i in kept]  # read through `self.scaled`
    assert (0, "t") not in [paths[i] for i in kept] and (0, "t") in paths


def _config():  # type: ignore[no-untyped-def]
    from quadrants.lang import program

    return program.get().config


@qd.data_oriented
class Stencil:
    def __init__(self) -> None:
        self.w = 2.0
        self.t = 0.0
        self.x = qd.field(qd.f32, shape=())

    @qd.func
    def offsets(self):  # never names `self`: running it as Python reads nothing of the object
        return qd.ndrange(3)

    @qd.func
    def weighted(self):  # names `self`: running it may read anything
        return qd.ndrange(int(self.w))

    @qd.kernel
    def blind(self):
        for o in qd.static(qd.grouped(self.offsets())):
            self.x[None] += o[0]

    @qd.kernel
    def seeing(self):
        for o in qd.static(qd.grouped(self.weighted())):
            self.x[None] += o[0] + 1


def test_a_func_run_as_python_that_never_names_self_reads_no_member(compiles: list[str]) -> None:
    qd.init(arch=qd.cpu)
    s = Stencil()
    for step in range(3):
        s.t = step * 0.5  # a float member: compiled in and guarded if read
        s.x[None] = 0.0
        s.blind()
        assert s.x[None] == 0 + 1 + 2
        s.x[None] = 0.0
        s.seeing()
        assert s.x[None] == 1 + 2
    assert compiles.count("blind") == 1  # `t` unread: no recompile
    assert compiles.count("seeing") == 3  # the whole object counts as read: every new `t` recompiles
    s.w = 3.0
    s.x[None] = 0.0
    s.seeing()
    assert s.x[None] == 1 + 2 + 3
