"""Fastcache across processes: the documented example, keying per parameter kind, func edits, switches."""

from __future__ import annotations

import pytest

from tests.cache.conftest import LOADED, REPORT, STORED

pytestmark = pytest.mark.slow  # every test runs its program in fresh processes

HEADER = "import numpy as np\nimport quadrants as qd\n" + REPORT


def test_the_documented_diagnostics_example(project) -> None:
    project.write("app.py", HEADER + '''
qd.init(arch=qd.cpu)

@qd.kernel(fastcache=True)
def my_kernel(x: qd.types.NDArray[qd.f32, 1]) -> None:
    for i in range(x.shape[0]):
        x[i] += 1.0

a = qd.ndarray(qd.f32, (4,))
my_kernel(a)
my_kernel(a)
report(x=a.to_numpy().tolist())
''')
    first, second = project.run(), project.run()
    assert first.out["my_kernel"] == STORED and first.out["x"] == [2.0] * 4
    assert second.out["my_kernel"] == LOADED and second.out["x"] == [2.0] * 4


def test_no_frontend_and_no_llvm_on_a_hit(project) -> None:
    project.write("app.py", HEADER + '''
import ast, inspect, sys
qd.init(arch=qd.cpu)

@qd.func
def double(v):
    return v * 2.0

@qd.kernel(fastcache=True)
def k(x: qd.types.NDArray[qd.f32, 1], s: qd.f32):
    for i in range(x.shape[0]):
        x[i] = double(x[i]) + s

if sys.argv[-1] == "strict" or True:
    def forbidden(*a, **kw):
        raise AssertionError("frontend work on a fastcache hit")
    import os
    if os.environ.get("QD_TEST_STRICT"):
        ast.parse = forbidden
        inspect.getsource = inspect.getsourcelines = forbidden
a = qd.ndarray(qd.f32, (3,))
a.fill(1.0)
k(a, 0.5)
report(x=a.to_numpy().tolist(), llvm="llvmlite.binding" in sys.modules, llvmlite="llvmlite" in sys.modules,
       ir="quadrants.ir.nodes" in sys.modules, grad_scan="quadrants.frontend.grad_reads" in sys.modules)
''')
    assert project.run().out["k"] == STORED
    hit = project.run(env={"QD_TEST_STRICT": "1"})
    assert hit.out["k"] == LOADED and hit.out["x"] == [2.5] * 3
    assert not hit.out["llvm"] and not hit.out["llvmlite"]
    # neither the IR's node classes (~90 dataclasses: 20 ms to create) nor the scan for `.grad` reads, which only
    # an argument with a grad asks for
    assert not hit.out["ir"] and not hit.out["grad_scan"]


PARAMS = [
    # (annotation, argument expression for run A, for run B (a different key), for run C (same key as A))
    ("qd.types.NDArray[qd.f32, 1]", "qd.ndarray(qd.f32, (4,))", "qd.ndarray(qd.f32, (4,))", None),
    ("qd.types.NDArray", "qd.ndarray(qd.f32, (4,))", "qd.ndarray(qd.f64, (4,))", "qd.ndarray(qd.f32, (9,))"),
    ("qd.types.NDArray", "np.zeros(4, np.float32)", "np.zeros((2, 2), np.float32)", "np.ones(7, np.float32)"),
    ("qd.types.NDArray", "qd.ndarray(qd.math.vec3, (4,))", "qd.ndarray(qd.math.vec2, (4,))", "qd.ndarray(qd.math.vec3, (2,))"),
    ("qd.types.NDArray", "qd.ndarray(qd.math.mat2, (4,))", "qd.ndarray(qd.types.matrix(2, 2, qd.f64), (4,))", None),
    ("qd.template()", "3", "4", "3"),
    ("qd.template()", "2.5", "3.5", "2.5"),
    ("qd.template()", "Mode.A", "Mode.B", "Mode.A"),
    ("qd.template()", "((1, 0), (0, 1))", "((1, 0), (0, 2))", "((1, 0), (0, 1))"),
    ("qd.i32", "3", "3", "7"),
    ("qd.f32", "1.5", "1.5", "2.5"),
]


@pytest.mark.parametrize("annotation,a,b,c", PARAMS)
def test_keys_follow_the_parameter_table(project, annotation, a, b, c) -> None:
    """A different type (or template value) misses and coexists with the first; the same one hits."""
    project.write("app.py", HEADER + f'''
import enum, sys
class Mode(enum.Enum):
    A = 1
    B = 2
qd.init(arch=qd.cpu)

@qd.kernel(fastcache=True)
def k(p: {annotation}) -> qd.i32:
    return 7

arg = eval(sys.argv[1]) if len(sys.argv) > 1 else None
report(r=k(arg))
''')
    run = project.run
    ra = run(a)
    assert ra.out["k"] == STORED and ra.out["r"] == 7
    rb = run(b)
    if b == a:
        assert rb.out["k"] == LOADED  # only the value of a runtime argument changed
    else:
        assert rb.out["k"] == STORED
    assert run(a).out["k"] == LOADED  # both entries coexist
    if c is not None:
        assert run(c).out["k"] == LOADED


def test_dataclass_members_key_by_type_and_cache_value_members_by_value(project) -> None:
    project.write("app.py", HEADER + '''
import dataclasses, sys
from quadrants.lang._fast_caching import FIELD_METADATA_CACHE_VALUE

@dataclasses.dataclass
class Inner:
    v: qd.types.NDArray[qd.f32, 1]

@dataclasses.dataclass
class Cfg:
    x: qd.types.NDArray
    dt: qd.f32
    layers: int = dataclasses.field(metadata={FIELD_METADATA_CACHE_VALUE: True})
    inner: Inner = None

qd.init(arch=qd.cpu)

@qd.kernel(fastcache=True)
def k(c: Cfg) -> qd.f32:
    s = 0.0
    for i in qd.static(range(c.layers)):
        s += c.x[i] * c.dt + c.inner.v[0]
    return s

dt, layers, dtype = float(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
x = np.arange(8).astype(dtype)
report(r=k(Cfg(x, dt, layers, Inner(np.ones(2, np.float32)))))
''')
    a = project.run("0.5", "3", "float32")
    assert a.out["k"] == STORED and a.out["r"] == (0 + 1 + 2) * 0.5 + 3
    assert project.run("2.0", "3", "float32").out["k"] == LOADED  # dt is a runtime member
    b = project.run("0.5", "4", "float32")  # a CACHE_VALUE member's value is in the key
    assert b.out["k"] == STORED and b.out["r"] == (0 + 1 + 2 + 3) * 0.5 + 4
    assert project.run("0.5", "3", "float64").out["k"] == STORED  # a member's type is in the key
    assert project.run("1.0", "4", "float32").out["k"] == LOADED


def test_data_oriented_primitives_are_keyed_by_value_unless_template_primitives_false(project) -> None:
    project.write("app.py", HEADER + '''
import sys
qd.init(arch=qd.cpu)

@qd.data_oriented
class Baked:
    def __init__(self, k):
        self.x = qd.ndarray(qd.f32, (4,))
        self.k = k

    @qd.kernel(fastcache=True)
    def step(self) -> qd.f32:
        return self.k * 2.0 + self.helper()

    @qd.func
    def helper(self) -> qd.f32:
        return self.x[0] + 1

@qd.data_oriented(template_primitives=False)
class Runtime:
    def __init__(self, k):
        self.k = k

    @qd.kernel(fastcache=True)
    def step(self) -> qd.f32:
        return self.k * 2.0

k = int(sys.argv[1])
b, r = Baked(k), Runtime(k)
out = {"b": b.step(), "r": r.step()}
o1 = Baked.step.src_ll_cache_observations
o2 = Runtime.step.src_ll_cache_observations
print(__import__("json").dumps({**out, "baked": [o1.cache_loaded, o1.cache_stored], "runtime": [o2.cache_loaded, o2.cache_stored]}))
''')
    first = project.run("3")
    assert first.out["b"] == 7.0 and first.out["r"] == 6.0 and first.out["baked"] == [False, True]
    second = project.run("5")
    assert second.out["b"] == 11.0 and second.out["r"] == 10.0
    assert second.out["baked"] == [False, True]  # a new value of a baked primitive: a new entry
    assert second.out["runtime"] == [True, False]  # a runtime primitive: the same entry
    assert project.run("3").out["baked"] == [True, False]


def test_torch_tensors_key_by_dtype_and_ndim(project) -> None:
    pytest.importorskip("torch")
    project.write("app.py", HEADER + '''
import sys, torch
qd.init(arch=qd.cpu)

@qd.kernel(fastcache=True)
def k(t: qd.types.NDArray) -> qd.f64:
    return t[0] * 2

t = torch.full((3,), 1.5, dtype=getattr(torch, sys.argv[1]))
report(r=k(t))
''')
    assert project.run("float32").out["k"] == STORED
    assert project.run("float32").out["k"] == LOADED
    second = project.run("float64")
    assert second.out["k"] == STORED and second.out["r"] == 3.0


def test_editing_a_func_misses_then_hits(project) -> None:
    project.write("helpers.py", '''
import quadrants as qd

@qd.func
def offset():
    return 1.0
''')
    project.write("app.py", HEADER + '''
from helpers import offset
qd.init(arch=qd.cpu)

@qd.kernel(fastcache=True)
def k() -> qd.f32:
    return offset() + 10

report(r=k())
''')
    assert project.run().out == {"r": 11.0, "k": STORED}
    assert project.run().out["k"] == LOADED
    project.write("helpers.py", '''
import quadrants as qd

@qd.func
def offset():
    return 2.0
''')
    edited = project.run()
    assert edited.out == {"r": 12.0, "k": STORED}
    assert project.run().out["k"] == LOADED


def test_editing_a_recursive_real_func_misses_then_hits(project) -> None:
    """A real function's source is recorded like a func's: editing it recompiles the kernel that calls it."""
    helpers = '''
import quadrants as qd

@qd.real_func
def tri(n: qd.i32) -> qd.i32:
    if n == 0:
        return 0
    return tri(n - 1) + n * STEP
'''
    project.write("helpers.py", helpers.replace("STEP", "1"))
    project.write("app.py", HEADER + '''
from helpers import tri
qd.init(arch=qd.cpu)

@qd.kernel(fastcache=True)
def k(n: qd.i32) -> qd.i32:
    return tri(n)

report(r=k(10))
''')
    assert project.run().out == {"r": 55, "k": STORED}
    assert project.run().out["k"] == LOADED
    project.write("helpers.py", helpers.replace("STEP", "2"))
    assert project.run().out == {"r": 110, "k": STORED}
    assert project.run().out["k"] == LOADED


def test_a_moved_checkout_hits(project, tmp_path) -> None:
    project.write("pkg/__init__.py", "")
    project.write("pkg/kernels.py", '''
import quadrants as qd

@qd.func
def f(v):
    return v + 1

@qd.kernel(fastcache=True)
def k(x: qd.types.NDArray[qd.f32, 1]):
    for i in range(x.shape[0]):
        x[i] = f(x[i])
''')
    project.write("app.py", HEADER + '''
from pkg import kernels
qd.init(arch=qd.cpu)
a = np.zeros(3, np.float32)
kernels.k(a)
o = kernels.k._primal.src_ll_cache_observations
report(x=a.tolist(), obs=[o.cache_key_generated, o.cache_validated, o.cache_loaded, o.cache_stored])
''')
    assert project.run().out["obs"] == STORED
    import shutil

    moved = tmp_path / "elsewhere" / "checkout"
    shutil.copytree(project.root, moved)
    shutil.rmtree(project.root)
    # lines added above the kernel do not change its key either
    kernels = moved / "pkg" / "kernels.py"
    kernels.write_text("# a new comment\n\n" + kernels.read_text())
    run = project.run(cwd=moved)
    assert run.out["obs"] == LOADED and run.out["x"] == [1.0] * 3


def test_src_ll_cache_false_disables_fastcache_but_not_the_offline_cache(project) -> None:
    project.write("app.py", HEADER + '''
import sys
qd.init(arch=qd.cpu, src_ll_cache=sys.argv[1] == "1")

@qd.kernel(fastcache=True)
def k() -> qd.i32:
    return 3

report(r=k(), offline=qd.stats()["cache"]["offline_hits"])
''')
    off = project.run("0")
    assert off.out["k"] == [False, False, False, False] and off.out["r"] == 3
    assert project.run("0").out["offline"] == 1  # the compiled code itself is cached
    assert project.run("1").out["k"] == STORED


def test_print_non_pure_names_each_kernel_once_per_compile(project) -> None:
    project.write("app.py", HEADER + '''
qd.init(arch=qd.cpu, print_non_pure=True)

@qd.kernel
def plain(x: qd.i32) -> qd.i32:
    return x

@qd.kernel(fastcache=True)
def pure(x: qd.i32) -> qd.i32:
    return x

for i in range(3):
    plain(i)
    pure(i)
report()
''')
    out = project.run().stdout
    assert out.count("[NOT_PURE] Debug information: not pure: plain") == 1
    assert "not pure: pure" not in out


def test_struct_arguments_and_results_load_in_a_fresh_process(project) -> None:
    """A kernel taking and returning qd.types.struct values loads from fastcache in the next process, with the
    same results; changing a member's type makes another key."""
    project.write("app.py", HEADER + '''
import sys
qd.init(arch=qd.cpu)
dt = qd.f64 if sys.argv[1:] == ["f64"] else qd.f32
inner = qd.types.struct(k=qd.i16, v=qd.math.vec3)
outer = qd.types.struct(x=dt, b=inner)

@qd.kernel(fastcache=True)
def step(s: outer, t: qd.f32) -> outer:
    r = s
    r.x += t
    r.b.v *= 2.0
    r.b.k += 1
    return r

out = step(outer(x=1.5, b=inner(k=65537, v=qd.math.vec3(1, 2, 3))), 0.25)
report(x=out.x, k=out.b.k, v=out.b.v.to_numpy().tolist())
''')
    first, second, other = project.run(), project.run(), project.run("f64")
    want = {"x": 1.75, "k": 2, "v": [2.0, 4.0, 6.0]}
    assert first.out["step"] == STORED and {k: first.out[k] for k in want} == want
    assert second.out["step"] == LOADED and {k: second.out[k] for k in want} == want
    assert other.out["step"] == STORED and {k: other.out[k] for k in want} == want
