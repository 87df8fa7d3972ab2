"""`qd record` writes dataclass and data_oriented arguments as [objects] entries (aot/objects.py), and `qd precompile`
rebuilds them so that a fresh run of the program compiles nothing: the shape of Genesis' solver kernels (frozen
dataclasses of ndarrays, a data_oriented static config compiled in, kernels registered with qd.perf_dispatch)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from quadrants.aot import manifest, objects
from tests.cli.test_manifest import error_of
from tests.cli.test_precompile import Proj
from tests.cli.test_precompile import proj as proj  # noqa: F401 - the fixture

SIM = """
import dataclasses
import enum
import sys

import numpy as np
import quadrants as qd

qd.init(arch=qd.cpu)


class Solver(enum.IntEnum):
    CG = 0
    NEWTON = 1


@dataclasses.dataclass(frozen=True)
class Limits:
    lo: qd.types.ndarray()
    hi: qd.types.ndarray()


@dataclasses.dataclass(frozen=True)
class State:
    pos: qd.types.ndarray()
    vel: qd.types.ndarray()
    count: qd.types.ndarray()
    limits: Limits
    gain: float = dataclasses.field(default=2.0, metadata={qd.lang._fast_caching.FIELD_METADATA_CACHE_VALUE: True})


@qd.data_oriented
class Config:
    def __init__(self, n, solver, substeps, tag, scale, shape, missing):
        self.n = n
        self.solver = solver
        self.substeps = substeps
        self.tag = tag
        self.scale = scale
        self.shape = shape
        self.missing = missing


@qd.kernel(fastcache=True)
def advance(state: State, cfg: qd.template(), dt: qd.f32):
    for i in range(state.pos.shape[0]):
        v = state.vel[i]
        for _ in qd.static(range(cfg.substeps)):
            if qd.static(cfg.solver == Solver.NEWTON):
                v = v * cfg.scale
        state.vel[i] = v
        state.pos[i] = qd.math.clamp(state.pos[i] + dt * v * state.gain, state.limits.lo[None], state.limits.hi[None])
        if qd.static(cfg.tag == "count" and cfg.missing is None):
            state.count[None] += cfg.shape[1]


@qd.perf_dispatch(get_geometry_hash=lambda *args: 0, warmup=1, active=1)
def total(state: State, out: qd.types.ndarray()) -> None: ...


@total.register
@qd.kernel(fastcache=True)
def total_serial(state: State, out: qd.types.ndarray()):
    for _ in range(1):
        s = 0.0
        for i in range(state.pos.shape[0]):
            s += state.pos[i].sum()
        out[None] = s


def make(n):
    lim = Limits(qd.ndarray(qd.f32, ()), qd.ndarray(qd.f32, ()))
    lim.lo.fill(-1.0)
    lim.hi.fill(0.5)
    st = State(qd.Vector.ndarray(3, qd.f32, n), qd.Vector.ndarray(3, qd.f32, n), qd.ndarray(qd.i32, ()), lim)
    st.vel.from_numpy(np.ones((n, 3), np.float32))
    return st


if __name__ == "__main__":
    st = make(4)
    cfg = Config(4, Solver.NEWTON, 2, "count", np.float32(0.5), (2, 3), None)
    out = qd.ndarray(qd.f32, ())
    for _ in range(3):
        advance(st, cfg, 0.1)
        total(st, out)
    print(json.dumps({"pos": st.pos.to_numpy().tolist(), "count": int(st.count.to_numpy()), "total": float(out.to_numpy()),
                      "stats": qd.stats()}))
""".replace("import sys\n", "import json\nimport sys\n", 1)


def _run(proj: Proj, cache: str) -> dict:  # noqa: F811
    out = subprocess.run([sys.executable, "sim.py"], cwd=proj.root, env=proj.env({"QD_CACHE_DIR": cache}),
                         capture_output=True, text=True, timeout=300)  # fmt: skip
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.slow
def test_dataclasses_and_data_oriented_arguments_are_recorded_and_precompiled(proj: Proj) -> None:  # noqa: F811
    proj.write("sim.py", SIM)
    proj.write("qd.toml", 'cache_dir = "build/cache"\nmodules = []\n')
    rec = proj.qd("record", "-o", "qd.toml", "--", sys.executable, "sim.py", env={"QD_CACHE_DIR": str(proj.root / "c0")})
    assert rec.returncode == 0 and "skipped" not in rec.stdout, rec.stdout + rec.stderr
    m = manifest.load(str(proj.root / "qd.toml"))
    assert sorted(k.name for k in m.kernels) == ["sim:advance", "sim:total_serial"]
    assert set(m.objects) == {"State", "Limits", "Config"}
    cfg = m.objects["Config"]
    assert cfg.cls == "sim:Config" and list(cfg.members) == ["n", "solver", "substeps", "tag", "scale", "shape",
                                                              "missing"]  # fmt: skip
    assert cfg.members["solver"] == objects.EnumRef("sim:Solver.NEWTON")
    assert cfg.members["tag"] == objects.Literal("count") and cfg.members["missing"] == objects.Literal(None)
    scale = cfg.members["scale"]
    assert isinstance(scale, objects.Literal) and type(scale.value).__name__ == "float32" and scale.value == 0.5
    assert cfg.members["shape"] == objects.Literal((2, 3))
    state = m.objects["State"].members
    assert state["pos"].text() == "ndarray[vector(3, f32), 1]" and state["count"].text() == "ndarray[i32, 0]"
    assert state["limits"] == objects.ObjectRef("Limits") and state["gain"] == objects.Literal(2.0)
    advance = next(k for k in m.kernels if k.name == "sim:advance")
    assert {n: v.raw for n, v in advance.signatures[0].params.items()} == {
        "state": objects.ObjectRef("State"), "cfg": objects.ObjectRef("Config")}  # fmt: skip
    cold = _run(proj, str(proj.root / "c1"))
    assert cold["stats"]["compiles"] == 2
    rc, report = proj.precompile()
    assert rc == 0 and report["compiled"] == 2 and report["failed"] == 0, report
    warm = _run(proj, str(proj.root / "build" / "cache"))
    assert warm["stats"]["compiles"] == 0 and warm["stats"]["cache"]["fastcache_hits"] == 2, warm["stats"]
    assert (warm["pos"], warm["count"], warm["total"]) == (cold["pos"], cold["count"], cold["total"])
    # velocity 1 halved twice per call (NEWTON, 2 substeps), times dt 0.1 and the compiled-in gain 2, three calls
    assert cold["pos"] == [[pytest.approx(0.065625)] * 3] * 4 and cold["count"] == 36
    assert cold["total"] == pytest.approx(12 * 0.065625)
    # a second recording of the same run adds nothing, and an object of other values gets its own entry
    again = proj.qd("record", "-o", "qd.toml", "--", sys.executable, "sim.py", env={"QD_CACHE_DIR": str(proj.root / "c0")})
    assert again.returncode == 0 and "0 signature(s) added" in again.stdout, again.stdout
    proj.write("sim.py", SIM.replace('Solver.NEWTON, 2, "count"', 'Solver.CG, 2, "count"'))
    other = proj.qd("record", "-o", "qd.toml", "--", sys.executable, "sim.py", env={"QD_CACHE_DIR": str(proj.root / "c0")})
    assert other.returncode == 0, other.stderr
    m = manifest.load(str(proj.root / "qd.toml"))
    assert m.objects["Config_2"].members["solver"] == objects.EnumRef("sim:Solver.CG")
    assert len(next(k for k in m.kernels if k.name == "sim:advance").signatures) == 2


BAD = [
    ('[objects.S]\nclass = "sim:State"\nmembers = { pos = "ndarray[f33, 1]" }\n', 5, "unknown type"),
    ('[objects.S]\nclass = "sim:State"\nmembers = { tag = "text" }\n', 5, "a string is a type"),
    ('[objects.S]\nclass = "sim:State"\nmembers = { n = { objekt = "X" } }\n', 5, "expected a type string"),
    ('[objects.S]\nclass = "sim:State"\nmembers = { n = { object = "Nowhere" } }\n', 5, "no [objects.Nowhere] entry"),
    ('[objects.S]\nclass = "State"\n', 4, 'class must be "module:Class"'),
    ('[objects.S]\nclass = "sim:State"\ncolour = 1\n', 5, "unknown key 'colour'"),
]


@pytest.mark.parametrize("text,line,message", BAD)
def test_malformed_objects_name_their_line(tmp_path, text: str, line: int, message: str) -> None:
    e = error_of(tmp_path, 'modules = ["sim"]\n\n' + text)
    assert e.line == line and message in e.message, (e.line, e.message)


def test_a_signature_naming_a_missing_object_names_its_line(tmp_path) -> None:
    path = tmp_path / "qd.toml"
    path.write_text('modules = ["sim"]\n\n[[kernel]]\nname = "sim:advance"\nsignatures = [\n  { state = { object = '
                    '"State" } },\n]\n')  # fmt: skip
    with pytest.raises(manifest.ManifestError, match=r"no \[objects.State\] entry") as e:
        manifest.load(str(path))
    assert e.value.line == 6


def test_build_sets_members_without_init_and_closes_cycles() -> None:
    class Node:
        def __init__(self) -> None:
            raise AssertionError("a rebuilt object does not run __init__")

    specs = objects.parse_table({
        "A": {"class": "m:Node", "members": {"peer": {"object": "B"}, "x": "ndarray[f32, 2]", "k": [1, [2, 3]]}},
        "B": {"class": "m:Node", "members": {"peer": {"object": "A"}, "none": {"none": True}}},
    })  # fmt: skip
    a = objects.build(specs, "A", lambda ref: Node)
    assert type(a) is Node and a.peer.peer is a and a.peer.none is None and a.k == (1, (2, 3))
    assert a.x.shape == (1, 1) and a.x.dtype.__class__.__name__ == "PrimitiveType"
