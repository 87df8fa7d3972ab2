"""The purity check of fastcache kernels, and the cases that must never serve a stale result."""

from __future__ import annotations

import pytest

from tests.cache.conftest import LOADED, REPORT, STORED

pytestmark = pytest.mark.slow  # every test runs its program in fresh processes

HEADER = "import numpy as np\nimport quadrants as qd\n" + REPORT


def test_a_captured_lowercase_global_is_a_compilation_error_with_its_location(project) -> None:
    project.write("app.py", HEADER + '''
scale = 2.0
qd.init(arch=qd.cpu)

@qd.kernel(fastcache=True)
def k() -> qd.f32:
    return scale * 3

try:
    k()
except qd.QuadrantsCompilationError as e:
    report(error=str(e))
''')
    err = project.run().out["error"]
    assert "captures 'scale'" in err and "return scale * 3" in err and "app.py" in err


def test_sub_functions_are_checked_too(project) -> None:
    project.write("app.py", HEADER + '''
table = (1, 2, 3)
qd.init(arch=qd.cpu)

@qd.func
def pick(i):
    return table[i]

@qd.kernel(fastcache=True)
def k() -> qd.i32:
    return pick(1)

try:
    k()
except qd.QuadrantsCompilationError as e:
    report(error=str(e))
''')
    err = project.run().out["error"]
    assert "captures 'table'" in err and "return table[i]" in err


def test_allowed_reads_enum_math_numpy_and_quadrants(project) -> None:
    project.write("app.py", HEADER + '''
import enum, math
class Mode(enum.IntEnum):
    FAST = 3
qd.init(arch=qd.cpu)

@qd.kernel(fastcache=True)
def k() -> qd.f32:
    return Mode.FAST + math.pi + np.e + qd.math.pi

report(r=k())
''')
    first = project.run()
    assert first.out["k"] == STORED and "purity" not in first.stderr
    assert project.run().out["k"] == LOADED


def test_uppercase_constants_warn_and_are_rechecked(project) -> None:
    project.write("app.py", HEADER + '''
import os
FACTOR = float(os.environ["FACTOR"])
qd.init(arch=qd.cpu)

@qd.kernel(fastcache=True)
def k() -> qd.f32:
    return FACTOR * 2

report(r=k())
''')
    a = project.run(env={"FACTOR": "1.5"})
    assert a.out == {"r": 3.0, "k": STORED} and "UserWarning: [PURE.VIOLATION]" in a.stderr and "FACTOR" in a.stderr
    assert project.run(env={"FACTOR": "1.5"}).out["k"] == LOADED
    b = project.run(env={"FACTOR": "4.0"})
    assert b.out["r"] == 8.0 and b.out["k"] == STORED  # a changed value is a miss, not a stale hit


def test_the_stale_cases_of_quadrants_1_3_3_give_correct_results(project) -> None:
    """A captured global tuple, a global np.float32, and qd.static(helper()) reading the environment."""
    project.write("app.py", HEADER + '''
import os
OFFSETS = tuple(float(x) for x in os.environ["OFFSETS"].split(","))
SCALE = np.float32(os.environ["SCALE"])

def helper():
    return int(os.environ["N"])

qd.init(arch=qd.cpu)

@qd.kernel(fastcache=True)
def k() -> qd.f32:
    s = 0.0
    for i in qd.static(range(helper())):
        s += OFFSETS[i % 2] * SCALE
    return s

report(r=k())
''')
    env1 = {"OFFSETS": "1,2", "SCALE": "2", "N": "3"}
    env2 = {"OFFSETS": "5,7", "SCALE": "3", "N": "3"}
    env3 = {"OFFSETS": "1,2", "SCALE": "2", "N": "4"}
    for env, want in ((env1, (1 + 2 + 1) * 2), (env1, (1 + 2 + 1) * 2), (env2, (5 + 7 + 5) * 3), (env3, (1 + 2 + 1 + 2) * 2)):
        run = project.run(env=env)
        assert run.out["r"] == want, (env, run.out)
    # the helper() call makes fastcache step aside (with a warning): every run compiles or uses the offline cache
    assert "calls the Python function 'helper'" in project.run(env=env1).stderr


def test_static_global_warns_during_the_transition(project) -> None:
    project.write("app.py", HEADER + '''
n = 3
qd.init(arch=qd.cpu)

@qd.kernel(fastcache=True)
def k() -> qd.i32:
    s = 0
    for i in qd.static(range(n)):
        s += i
    return s

report(r=k())
''')
    run = project.run()
    assert run.out["r"] == 3 and "read inside qd.static()" in run.stderr


def test_fields_disable_fastcache_silently_through_tensor_and_with_a_warning_otherwise(project) -> None:
    project.write("app.py", HEADER + '''
qd.init(arch=qd.cpu)
f = qd.field(qd.f32, shape=4)

@qd.kernel(fastcache=True)
def via_tensor(t: qd.Tensor):
    for i in range(t.shape[0]):
        t[i] = 1.0

@qd.kernel(fastcache=True)
def via_template(t: qd.template()):
    for i in range(t.shape[0]):
        t[i] = 2.0

via_tensor(f)
a = f.to_numpy().tolist()
via_template(f)
report(a=a, b=f.to_numpy().tolist())
''')
    run = project.run()
    assert run.out["a"] == [1.0] * 4 and run.out["b"] == [2.0] * 4
    assert run.out["via_tensor"] == [False, False, False, False]
    assert run.out["via_template"] == [False, False, False, False]
    warnings = [ln for ln in run.stderr.splitlines() if "[fastcache]" in ln]
    assert len(warnings) == 2  # Quadrants' two tagged lines: the parameter (by name), then the kernel
    assert "[FASTCACHE][PARAM_INVALID] Parameter with path t and type a field" in warnings[0]
    assert "[FASTCACHE][INVALID_FUNC] The pure function via_template could not be fast cached" in warnings[1]


def test_unreadable_source_falls_back_to_a_normal_compile(project) -> None:
    project.write("kernels.py", '''
import quadrants as qd

@qd.kernel(fastcache=True)
def k() -> qd.i32:
    return 5
''')
    project.write("app.py", HEADER + '''
import importlib, os, sys
qd.init(arch=qd.cpu)
import kernels
kernels.k()  # compiles (the source is there), stores
if sys.argv[1] == "delete":
    os.remove(kernels.__file__)
    qd.reset(); qd.init(arch=qd.cpu)
    r = kernels.k()  # already compiled code of this process, or a fallback: never a crash
src = "@qd.kernel(fastcache=True)\\ndef e() -> qd.i32:\\n    return 9\\n"
ns = {"qd": qd}
exec(compile(src, "<exec>", "exec"), ns)
try:
    ns["e"]()
    exec_result = "ran"
except qd.QuadrantsCompilationError as err:
    exec_result = "no source"
report(exec=exec_result)
''')
    run = project.run("keep")
    assert run.out["exec"] == "no source"  # exec'd code has no source: like real Quadrants, it cannot compile
    deleted = project.run("delete")
    assert "Traceback" not in deleted.stderr


def test_attributes_read_through_captured_objects_warn_and_stay_fresh(project) -> None:
    """As in Quadrants: `foo.BAR` (UPPERCASE) and `qd.static(cfg.flag)` read through a captured object warn
    instead of failing, and the value read is recorded: a new value in the next process is a miss, never a stale
    hit; a lowercase attribute read outside qd.static is still an error."""
    project.write("app.py", HEADER + '''
import os, warnings
class Foo:
    def __init__(self):
        self.BAR = int(os.environ["BAR"])
class Cfg:
    def __init__(self):
        self.flag = os.environ["FLAG"] == "1"
        self.size = 3
foo, cfg = Foo(), Cfg()
qd.init(arch=qd.cpu)

@qd.kernel(fastcache=True)
def k() -> qd.i32:
    r = foo.BAR
    if qd.static(cfg.flag):
        r += 100
    return r

@qd.kernel(fastcache=True)
def lowercase() -> qd.i32:
    return cfg.size

with warnings.catch_warnings(record=True) as w:
    warnings.simplefilter("always")
    r = k()
try:
    lowercase()
    err = ""
except qd.QuadrantsCompilationError as e:
    err = str(e)
report(r=r, warned=sum("[PURE.VIOLATION]" in str(x.message) for x in w), err=err)
''')
    for env, want in (({"BAR": "23", "FLAG": "0"}, 23), ({"BAR": "23", "FLAG": "0"}, 23),
                      ({"BAR": "5", "FLAG": "0"}, 5), ({"BAR": "5", "FLAG": "1"}, 105)):  # fmt: skip
        out = project.run(env=env).out
        assert out["r"] == want, (env, out)
        assert "captures 'cfg.size'" in out["err"]
    first = project.run(env={"BAR": "7", "FLAG": "1"}).out
    assert first["r"] == 107 and first["warned"] >= 2


def test_struct_types_defined_at_module_level_are_types_not_captured_data(project) -> None:
    """A `@qd.dataclass` or `qd.types.struct` type built inside a fastcache kernel: a type like qd.math.vec3
    (recorded by its members and methods, re-checked at lookup), not a captured value. The result is Quadrants
    1.3.3's for this program (5.0: pos[1] * mass + a * b = 2 * 2 + 0.5 * 2), and the second process hits."""
    project.write("app.py", HEADER + '''
qd.init(arch=qd.cpu)

@qd.dataclass
class Particle:
    pos: qd.math.vec3
    mass: qd.f32

    @qd.func
    def weight(self):
        return self.pos[1] * self.mass

Pair = qd.types.struct(a=qd.f32, b=qd.i32)

@qd.kernel(fastcache=True)
def k(x: qd.types.NDArray[qd.f32, 1]):
    for i in range(x.shape[0]):
        p = Particle(pos=qd.math.vec3(1.0, 2.0, 3.0), mass=2.0)
        q = Pair(a=0.5, b=2)
        x[i] = p.weight() + q.a * q.b

x = np.zeros(3, np.float32)
k(x)
report(x=x.tolist())
''')
    first = project.run()
    assert first.out["x"] == [5.0, 5.0, 5.0] and first.out["k"] == STORED and "PURE" not in first.stderr
    second = project.run()
    assert second.out["x"] == [5.0, 5.0, 5.0] and second.out["k"] == LOADED
