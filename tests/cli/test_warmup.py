"""`[[warmup]]`: kernels whose arguments only the program can build (a data_oriented solver holding fields and the
simulator that owns it, as Genesis' non-rigid solvers are) are cached by running the program: `qd record` writes
the command it ran, `qd precompile` runs it against the cache, and a fresh start of the program compiles nothing."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from quadrants.aot import manifest
from tests.cli.test_manifest import error_of
from tests.cli.test_precompile import Proj
from tests.cli.test_precompile import proj as proj  # noqa: F401 - the fixture

APP = """
import argparse
import json

import numpy as np
import quadrants as qd

qd.init(arch=qd.cpu)


class Simulator:  # an arbitrary object: no manifest can rebuild it
    def __init__(self, dt):
        self.dt = dt
        self.solvers = []


@qd.data_oriented
class Solver:
    def __init__(self, sim, n, stiffness):
        self.sim = sim
        self.n = n
        self.stiffness = stiffness
        self.x = qd.field(qd.f32, n)
        self.v = qd.field(qd.f32, n)
        self.y = qd.field(qd.f32, n, needs_grad=True)
        self.loss = qd.field(qd.f32, (), needs_grad=True)
        sim.solvers.append(self)

    @qd.kernel
    def compute_loss(self):
        for i in range(self.n):
            self.loss[None] += self.y[i] ** 2

    @qd.kernel
    def substep(self):
        for i in range(self.n):
            self.v[i] += -self.stiffness * self.x[i] * self.sim.dt
            self.x[i] += self.v[i] * self.sim.dt

    @qd.kernel
    def energy(self) -> qd.f32:
        e = 0.0
        for i in range(self.n):
            e += 0.5 * self.v[i] ** 2 + 0.5 * self.stiffness * self.x[i] ** 2
        return e


@qd.kernel(fastcache=True)
def scale(x: qd.types.ndarray(), k: qd.f32):
    for i in range(x.shape[0]):
        x[i] *= k


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--fail", action="store_true")
    args = ap.parse_args()
    if args.fail:
        raise SystemExit("the scene file is missing")
    sim = Simulator(0.01)
    solver = Solver(sim, 8, 40.0)
    solver.x.from_numpy(np.linspace(-1, 1, 8, dtype=np.float32))
    for _ in range(args.steps):
        solver.substep()
    solver.y.from_numpy(np.arange(8, dtype=np.float32))
    solver.loss.grad[None] = 1.0
    solver.compute_loss.grad()
    a = np.ones(4, np.float32)
    scale(a, 3.0)
    print(json.dumps({"x": solver.x.to_numpy().tolist(), "energy": solver.energy(), "a": a.tolist(),
                      "dy": solver.y.grad.to_numpy().tolist(), "stats": qd.stats()}))
"""


def _run(proj: Proj, cache: str, *args: str) -> dict:  # noqa: F811
    out = subprocess.run([sys.executable, "scene.py", *args], cwd=proj.root, env=proj.env({"QD_CACHE_DIR": cache}),
                         capture_output=True, text=True, timeout=300)  # fmt: skip
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def _record(proj: Proj, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:  # noqa: F811
    rec = proj.qd("record", "-o", str(proj.root / "qd.toml"), "--", sys.executable, str(proj.root / "scene.py"), *args,
                  env={"QD_CACHE_DIR": str(proj.root / "c0"), **(env or {})}, cwd=proj.root.parent)  # fmt: skip
    assert rec.returncode == 0, rec.stdout + rec.stderr
    return rec


@pytest.mark.slow
def test_kernels_of_objects_only_the_program_builds_are_cached_by_a_warm_up_run(proj: Proj) -> None:  # noqa: F811
    proj.write("scene.py", APP)
    proj.write("qd.toml", 'cache_dir = "build/cache"\nmodules = []\n')
    rec = _record(proj, "--steps", "2")
    assert "warm-up run = python scene.py --steps 2: 3 kernel(s) added" in rec.stdout and "skipped" not in rec.stdout, rec.stdout
    m = manifest.load(str(proj.root / "qd.toml"))
    # recorded from another folder with absolute paths: the command is written to run in the manifest's folder
    assert [(w.run, w.kernels, w.env) for w in m.warmups] == [
        (("python", "scene.py", "--steps", "2"), ("scene:Solver.substep", "scene:Solver.compute_loss.grad",
                                                  "scene:Solver.energy"), ())]  # fmt: skip
    assert [k.name for k in m.kernels] == ["scene:scale"]  # a signature a manifest spells stays a signature

    cold = _run(proj, str(proj.root / "c1"), "--steps", "5")
    assert cold["stats"]["compiles"] == 4
    rc, report = proj.precompile()
    assert rc == 0 and report["compiled"] == 1, report
    [w] = report["warmups"]
    # the signature was compiled first, so the warm-up found `scale` cached and compiled the solver's three kernels
    assert (w["status"], w["compiles"], w["hits"], w["target"]) == ("compiled", 3, 1, "host"), w
    assert w["called"] == ["scene:Solver.compute_loss.grad", "scene:Solver.energy", "scene:Solver.substep", "scene:scale"]
    warm = _run(proj, str(proj.root / "build" / "cache"), "--steps", "5")  # more steps than the warm-up ran
    assert warm["stats"]["compiles"] == 0, warm["stats"]
    assert (warm["x"], warm["energy"], warm["a"], warm["dy"]) == (cold["x"], cold["energy"], cold["a"], cold["dy"])
    assert cold["dy"] == [2.0 * i for i in range(8)]
    assert cold["a"] == [3.0] * 4 and cold["energy"] == pytest.approx(0.5 * 40 * sum(x * x for x in cold["x"]),
                                                                       rel=0.5)  # fmt: skip

    rc, check = proj.precompile("--check")
    assert rc == 0 and check["warmups"][0]["status"] == "cached", check["warmups"]
    # the solver's code changed: the check runs the warm-up, which compiles, and that is a miss
    proj.write("scene.py", APP.replace("0.5 * self.v[i] ** 2", "0.5 * self.v[i] * self.v[i]"))
    rc, check = proj.precompile("--check")
    assert rc == 1 and check["warmups"][0]["status"] == "missing" and check["warmups"][0]["compiles"] == 1, check
    text = proj.qd("precompile")
    assert text.returncode == 0 and "1 warm-up run(s): 0 kernel(s) compiled" in text.stdout, text.stdout


@pytest.mark.slow
def test_a_warm_up_that_fails_or_calls_less_than_listed_fails_the_precompile(proj: Proj) -> None:  # noqa: F811
    proj.write("scene.py", APP)
    proj.write("qd.toml", """
        cache_dir = "build/cache"
        modules = ["scene"]

        [[warmup]]
        run = ["python", "scene.py", "--fail"]

        [[warmup]]
        run = ["python", "scene.py", "--steps", "0"]
        kernels = ["scene:Solver.substep", "scene:Solver.energy"]
    """)
    rc, report = proj.precompile()
    failed, short = report["warmups"]
    assert rc == 1 and failed["status"] == "failed" and "the scene file is missing" in failed["detail"], failed
    assert "exited with 1" in failed["detail"]
    assert short["status"] == "failed" and short["not_called"] == ["scene:Solver.substep"], short
    text = proj.qd("precompile")
    assert text.returncode == 1 and "FAILED warm-up python scene.py --fail (qd.toml:4, target host)" in text.stdout, \
        text.stdout


def test_compile_relevant_variables_of_the_recorded_run_go_with_its_warm_up(tmp_path) -> None:
    from quadrants.aot.record import merge

    (tmp_path / "scene.py").write_text("")
    rec = {"kernel": "scene:Solver.substep", "fastcache": False, "cache_dir": None,
           "params": {"self": {"__unrecordable__": "a Solver whose member 'sim' is a Simulator"}}}  # fmt: skip
    environ = {"QD_DEBUG": "1", "QD_LOG_LEVEL": "info", "QD_CPU_TARGET": "znver3", "QD_CACHE_DIR": "/tmp/x"}
    path = str(tmp_path / "qd.toml")
    summary = merge(path, [rec], command=["/usr/bin/python3.11", "scene.py", "-n", "3"], cwd=str(tmp_path),
                    environ=environ)  # fmt: skip
    assert summary.warmups == {"python scene.py -n 3": ["scene:Solver.substep"]} and summary.skipped == []
    [w] = manifest.load(path).warmups
    assert w.env == (("QD_DEBUG", "1"),) and w.run == ("python", "scene.py", "-n", "3")
    # without a command (the library call of older callers) the signature is skipped with what to do
    summary = merge(str(tmp_path / "other.toml"), [rec])
    assert "give it a factory" in summary.skipped[0]


BAD = [
    ('[[warmup]]\nrun = "python scene.py"\n', 4, "the command, as a list of strings"),
    ('[[warmup]]\nrun = []\n', 4, "the command, as a list of strings"),
    ('[[warmup]]\nrun = ["python"]\nkernels = ["substep"]\n', 5, '"module:kernel" names'),
    ('[[warmup]]\nrun = ["python"]\nenv = { QD_DEBUG = 1 }\n', 5, "env must be a table of strings"),
    ('[[warmup]]\nrun = ["python"]\ntimeout = 0\n', 5, "positive number of seconds"),
    ('[[warmup]]\nrun = ["python"]\ncwd = "."\n', 5, "unknown key 'cwd' in [[warmup]]"),
    ('warmup = 3\n', 3, "write each as [[warmup]]"),
]


@pytest.mark.parametrize("text,line,message", BAD)
def test_malformed_warm_ups_name_their_line(tmp_path, text: str, line: int, message: str) -> None:
    e = error_of(tmp_path, 'modules = ["scene"]\n\n' + text)
    assert e.line == line and message in e.message, (e.line, e.message)


@pytest.mark.slow
def test_a_warm_up_kernel_that_does_not_exist_is_a_manifest_error(proj: Proj) -> None:  # noqa: F811
    proj.write("scene.py", APP)
    proj.write("qd.toml", 'modules = ["scene"]\n\n[[warmup]]\nrun = ["python", "scene.py"]\nkernels = ["scene:Solver.step"]\n')
    proc = proj.qd("precompile")
    assert proc.returncode == 2 and "qd.toml:5: warm-up kernel 'scene:Solver.step' not found" in proc.stderr, proc.stderr


@pytest.mark.slow
def test_the_stats_file_is_written_at_exit_and_an_unwritable_one_is_a_warning(tmp_path) -> None:
    code = "import quadrants as qd\nqd.init(arch=qd.cpu)\n\n@qd.kernel\ndef k() -> qd.i32:\n    return 7\n\nprint(k())\n"
    (tmp_path / "k.py").write_text(code)
    env = {k: v for k, v in os.environ.items() if not k.startswith("QD_")}
    good = subprocess.run([sys.executable, str(tmp_path / "k.py")], env={**env, "QD_CACHE_DIR": str(tmp_path / "c"),
                          "QD_STATS_FILE": str(tmp_path / "s.json")}, capture_output=True, text=True, timeout=120)  # fmt: skip
    assert good.returncode == 0 and good.stdout.strip().endswith("7"), good.stderr
    stats = json.loads((tmp_path / "s.json").read_text())
    assert stats["compiles"] == 1 and stats["cache"]["offline_misses"] == 1, stats
    bad = subprocess.run([sys.executable, str(tmp_path / "k.py")], env={**env, "QD_CACHE_DIR": str(tmp_path / "c"),
                         "QD_STATS_FILE": str(tmp_path / "no" / "s.json")}, capture_output=True, text=True, timeout=120)  # fmt: skip
    assert bad.returncode == 0 and "QD_STATS_FILE: cannot write" in bad.stderr, bad.stderr
