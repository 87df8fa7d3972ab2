"""Never stale: an edit between two processes that changes what a fastcache kernel computes is a recompile (or
fastcache steps aside), never a hit on the old code. Each case: run, edit, run again, compare with the result
the edited program computes without any cache."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cache.conftest import REPORT, Project

HEADER = (
    """
import os
import dataclasses
import quadrants as qd
qd.init(arch=qd.cpu)
"""
    + REPORT
)

# (name, program with one {X} placeholder, the two values of X, what the program prints for each)
CASES = {
    "func default from a constant": (
        """
K = {X}

@qd.func
def scaled(x, k=K):
    return x * k

@qd.kernel(fastcache=True)
def run(x: qd.f32) -> qd.f32:
    return scaled(x)

report(value=run(2.0))
""",
        ("2.0", "3.0"),
    ),
    "func a factory returns, chosen by an environment variable": (
        """
def make(kind):
    if kind == "double":
        @qd.func
        def op(x):
            return x * 2.0
    else:
        @qd.func
        def op(x):
            return x * 3.0
    return op

op = make(os.environ.get("QD_TEST_KIND", "{X}"))

@qd.kernel(fastcache=True)
def run(x: qd.f32) -> qd.f32:
    return op(x)

report(value=run(2.0))
""",
        ("double", "triple"),
    ),
    "func a factory returns, chosen by a default argument": (
        """
MODE = {X}

def make(mode=MODE):
    if mode == 1:
        @qd.func
        def op(x):
            return x + 1.0
    else:
        @qd.func
        def op(x):
            return x - 1.0
    return op

op = make()

@qd.kernel(fastcache=True)
def run(x: qd.f32) -> qd.f32:
    return op(x)

report(value=run(2.0))
""",
        ("1", "2"),
    ),
    "func called through a default argument": (
        """
@qd.func
def double(x):
    return x * 2.0

@qd.func
def triple(x):
    return x * 3.0

@qd.func
def apply(x, op={X}):
    return op(x)

@qd.kernel(fastcache=True)
def run(x: qd.f32) -> qd.f32:
    return apply(x)

report(value=run(2.0))
""",
        ("double", "triple"),
    ),
    "data_oriented class attribute read as self.K": (
        """
@qd.data_oriented
class Sim:
    K = {X}

    def __init__(self):
        self.x = qd.ndarray(qd.f32, 4)

    @qd.kernel(fastcache=True)
    def run(self) -> qd.f32:
        return self.K * 2.0

report(value=Sim().run())
""",
        ("2.0", "5.0"),
    ),
    "data_oriented class attribute read in qd.static": (
        """
@qd.data_oriented
class Sim:
    N = {X}

    def __init__(self):
        self.x = qd.ndarray(qd.f32, 4)

    @qd.kernel(fastcache=True)
    def run(self) -> qd.i32:
        s = 0
        for i in qd.static(range(self.N)):
            s += i
        return s

report(value=Sim().run())
""",
        ("3", "5"),
    ),
    "dataclass class attribute read as p.GAIN": (
        """
@dataclasses.dataclass(frozen=True)
class Params:
    x: qd.types.NDArray[qd.f32, 1]
    GAIN = {X}

@qd.kernel(fastcache=True)
def run(p: Params) -> qd.f32:
    return p.x[0] * p.GAIN

import numpy as np
report(value=run(Params(np.ones(1, np.float32))))
""",
        ("2.0", "7.0"),
    ),
    "type alias in the kernel's return annotation": (
        """
Out = {X}

@qd.kernel(fastcache=True)
def run(x: qd.f32) -> Out:
    return x / 3.0

report(value=float(run(2.0)))
""",
        ("qd.f32", "qd.i32"),
    ),
    "type alias in a func's parameter annotation": (
        """
Real = {X}

@qd.func
def half(x: Real):
    return x / 2

@qd.kernel(fastcache=True)
def run(x: qd.f32) -> qd.f32:
    return half(x)

report(value=run(3.5))
""",
        ("qd.f32", "qd.i32"),
    ),
    "type alias in a func's return annotation": (
        """
Real = {X}

@qd.func
def third(x) -> Real:
    return x / 3.0

@qd.kernel(fastcache=True)
def run(x: qd.f32) -> qd.f32:
    return third(x)

report(value=run(2.0))
""",
        ("qd.f32", "qd.i32"),
    ),
    "a struct type's member type (a module-level qd.types.struct built in the kernel)": (
        """
Pair = qd.types.struct(a={X}, b=qd.f32)

@qd.kernel(fastcache=True)
def run(x: qd.f32) -> qd.f32:
    p = Pair(a=x, b=1.0)
    return p.a + p.b

report(value=run(2.5))
""",
        ("qd.f32", "qd.i32"),
    ),
    "a @qd.dataclass method built and called in the kernel": (
        """
@qd.dataclass
class Particle:
    mass: qd.f32

    @qd.func
    def weight(self):
        return self.mass * {X}

@qd.kernel(fastcache=True)
def run(x: qd.f32) -> qd.f32:
    return Particle(mass=x).weight()

report(value=run(2.0))
""",
        ("3.0", "5.0"),
    ),
}
CASES["string annotation (PEP 563) naming an alias"] = (
    CASES["type alias in a func's parameter annotation"][0].replace("x: Real", 'x: "Real"'),
    ("qd.f32", "qd.i32"),
)


def _program(template: str, x: str) -> str:
    return HEADER + template.replace("{X}", x)


@pytest.mark.slow
@pytest.mark.parametrize("case", sorted(CASES))
def test_an_edit_between_processes_is_never_a_stale_hit(project: Project, tmp_path: Path, case: str) -> None:
    template, (before, after) = CASES[case]
    expected: dict[str, float] = {}
    for x in (before, after):  # what each version computes with no cache at all
        project.write("app.py", _program(template, x))
        expected[x] = project.run(env={"QD_OFFLINE_CACHE": "0", "QD_SRC_LL_CACHE": "0",
                                       "QD_CACHE_DIR": str(tmp_path / f"none-{x}")}).out["value"]  # fmt: skip
    assert expected[before] != expected[after], "the edit must change the result"
    project.write("app.py", _program(template, before))
    assert project.run().out["value"] == expected[before]
    assert project.run().out["value"] == expected[before]  # a hit
    project.write("app.py", _program(template, after))
    assert project.run().out["value"] == expected[after]
    assert project.run().out["value"] == expected[after]


@pytest.mark.slow
def test_two_scripts_with_the_same_kernel_text_in_one_folder(project: Project) -> None:
    kernel = """
@qd.kernel(fastcache=True)
def run(x: qd.f32) -> qd.f32:
    return helper(x)

report(value=run(2.0))
"""
    project.write("a.py", HEADER + "\n@qd.func\ndef helper(x):\n    return x * 2.0\n" + kernel)
    project.write("b.py", HEADER + "\n@qd.func\ndef helper(x):\n    return x * 10.0\n" + kernel)
    assert project.run(script="a.py").out["value"] == 4.0
    assert project.run(script="b.py").out["value"] == 20.0
    assert project.run(script="a.py").out["value"] == 4.0
    assert project.run(script="b.py").out["value"] == 20.0
