"""`qd record`: run a program, merge what it called into the manifest, then precompile from it."""

from __future__ import annotations

import json
import sys

import pytest

from quadrants.aot import manifest
from tests.cli.test_precompile import SIGNATURES, Proj, check_results
from tests.cli.test_precompile import proj as proj  # noqa: F401 - the fixture

pytestmark = pytest.mark.slow  # every test runs `qd record` in subprocesses


def test_record_round_trip(proj: Proj) -> None:  # noqa: F811
    (proj.root / "qd.toml").write_text('# my manifest: keep this comment\ncache_dir = "build/cache"\nmodules = []\n')
    cmd = proj.qd("record", "-o", "qd.toml", "--", sys.executable, "main.py", env={"QD_CACHE_DIR": str(proj.root / "c0")})
    assert cmd.returncode == 0, cmd.stderr
    text = (proj.root / "qd.toml").read_text()
    assert "# my manifest: keep this comment" in text
    m = manifest.load(str(proj.root / "qd.toml"))
    assert m.modules == ["app.kernels"]
    names = {k.name: k for k in m.kernels}
    # dataclass and data_oriented arguments are written as [objects] entries (aot/objects.py): nothing skipped
    assert set(names) == {"app.kernels:saxpy", "app.kernels:apply", "app.kernels:spin", "app.kernels:plain",
                          "app.kernels:fill", "app.kernels:Counter.advance"}  # fmt: skip
    assert "skipped" not in cmd.stdout and set(m.objects) == {"Params", "Counter"}
    apply_sigs = [{k: v.raw for k, v in s.params.items()} for s in names["app.kernels:apply"].signatures]
    assert apply_sigs == [{"x": "ndarray[f32, 1]", "n": 2, "mode": "ADD"}, {"x": "numpy[f64, 1]", "n": 3, "mode": "MUL"}]
    assert names["app.kernels:saxpy"].signatures == []  # every parameter fixed by its annotation

    again = proj.qd("record", "-o", "qd.toml", "--", sys.executable, "main.py", env={"QD_CACHE_DIR": str(proj.root / "c0")})
    assert again.returncode == 0 and "0 kernel(s) and 0 signature(s) added" in again.stdout
    assert (proj.root / "qd.toml").read_text() == text  # nothing new: unchanged

    # everything precompiles from the recorded manifest alone, and the program starts without compiling
    rc, report = proj.precompile()
    assert rc == 0 and report["signatures"] == SIGNATURES and report["failed"] == 0, report
    out = proj.main()
    check_results(out)
    assert out["stats"]["compiles"] == 0


def test_record_into_pyproject_and_a_failing_program(proj: Proj) -> None:  # noqa: F811
    (proj.root / "qd.toml").unlink()
    (proj.root / "pyproject.toml").write_text('[project]\nname = "demo"\nversion = "0"\n')
    (proj.root / "fails.py").write_text(
        "import numpy as np\nimport quadrants as qd\nfrom app import kernels as k\nqd.init(arch=qd.cpu)\n"
        "k.apply(np.zeros(2, np.float32), 4, k.Mode.ADD)\nraise SystemExit(3)\n"
    )
    cmd = proj.qd("record", "-o", "pyproject.toml", "--", sys.executable, "fails.py", env={"QD_CACHE_DIR": str(proj.root / "c")})
    assert cmd.returncode == 3 and "exited with status 3" in cmd.stdout
    m = manifest.load(str(proj.root / "pyproject.toml"))
    (k,) = m.kernels
    assert k.name == "app.kernels:apply" and {n: v.raw for n, v in k.signatures[0].params.items()} == {
        "x": "numpy[f32, 1]", "n": 4, "mode": "ADD"
    }
    assert json.loads(json.dumps(m.modules)) == ["app.kernels"]


SCRIPT = """
import enum
import sys

import numpy as np
import quadrants as qd

qd.init(arch=qd.cpu)


class Mode(enum.Enum):
    A = 1
    B = 2


@qd.kernel(fastcache=True)
def k(x: qd.types.NDArray[qd.f32, 1], mode: Mode, t: qd.template()):
    for i in range(x.shape[0]):
        if qd.static(mode == Mode.A):
            x[i] += t[0][1] + t[1][0]


if __name__ == "__main__" and len(sys.argv) > 1:
    a = np.zeros(3, np.float32)
    k(a, Mode.A, ((1, 2), (3, 4)))
    print(a.tolist(), qd.stats()["compiles"])
"""


def test_a_run_that_records_nothing_writes_nothing(proj: Proj, tmp_path) -> None:  # noqa: F811
    (proj.root / "script.py").write_text(SCRIPT)
    (proj.root / "qd.toml").unlink()
    quiet = proj.qd("record", "-o", "qd.toml", "--", sys.executable, "script.py")
    assert quiet.returncode == 0 and "0 kernel(s) called" in quiet.stdout
    assert not (proj.root / "qd.toml").exists()
    (proj.root / "qd.toml").write_text('modules = ["script"]\nkernel = []\n')  # what an older qd record wrote
    before = (proj.root / "qd.toml").read_text()
    assert proj.qd("record", "-o", "qd.toml", "--", sys.executable, "script.py").returncode == 0
    assert (proj.root / "qd.toml").read_text() == before
    twice = [proj.qd("record", "-o", "qd.toml", "--", sys.executable, "script.py", "run") for _ in range(2)]
    assert all(t.returncode == 0 for t in twice), twice[-1].stderr
    m = manifest.load(str(proj.root / "qd.toml"))  # valid TOML and a valid manifest after each run
    assert [k.name for k in m.kernels] == ["script:k"] and len(m.kernels[0].signatures) == 1


def test_scripts_enums_and_nested_tuples_are_recorded_and_precompiled(proj: Proj) -> None:  # noqa: F811
    (proj.root / "script.py").write_text(SCRIPT)
    (proj.root / "qd.toml").write_text('cache_dir = "build/cache"\nmodules = []\n')
    env = {"QD_CACHE_DIR": str(proj.root / "c0")}
    rec = proj.qd("record", "-o", "qd.toml", "--", sys.executable, "script.py", "run", env=env)
    assert rec.returncode == 0 and "skipped" not in rec.stdout, rec.stdout
    m = manifest.load(str(proj.root / "qd.toml"))
    (entry,) = m.kernels
    assert entry.name == "script:k" and m.modules == ["script"]
    assert {n: v.raw for n, v in entry.signatures[0].params.items()} == {"mode": "A", "t": ((1, 2), (3, 4))}
    rc, report = proj.precompile()
    assert rc == 0 and report["compiled"] == 1, report
    run = proj.qd("record", "-o", "other.toml", "--", sys.executable, "script.py", "run",
                  env={"QD_CACHE_DIR": str(proj.root / "build" / "cache")})  # fmt: skip
    assert run.returncode == 0 and "[5.0, 5.0, 5.0] 0" in run.stdout  # 2 + 3 added, nothing compiled


HOLDER = """
import quadrants as qd

qd.init(arch=qd.cpu)


@qd.data_oriented
class Holder:
    def __init__(self):
        self.f = qd.field(qd.f32, 4)


@qd.kernel
def bump(h: qd.template()):
    for i in h.f:
        h.f[i] += 1


def example():
    return Holder()


if __name__ == "__main__":
    bump(Holder())
"""


def test_factory_advice_for_what_a_manifest_cannot_spell_unless_it_has_one(proj: Proj) -> None:  # noqa: F811
    (proj.root / "holder.py").write_text(HOLDER)
    (proj.root / "qd.toml").write_text('cache_dir = "build/cache"\nmodules = []\n')
    env = {"QD_CACHE_DIR": str(proj.root / "c0")}
    cmd = proj.qd("record", "-o", "qd.toml", "--", sys.executable, "holder.py", env=env)
    # a field member: no manifest spells it, so the run itself becomes the kernel's warm-up (tests/cli/test_warmup.py)
    assert cmd.returncode == 0 and "warm-up run = python holder.py: 1 kernel(s) added" in cmd.stdout, cmd.stdout
    assert "  holder:bump: h is a Holder whose member 'f' is a field" in cmd.stdout and "factory" in cmd.stdout
    assert [w.kernels for w in manifest.load(str(proj.root / "qd.toml")).warmups] == [("holder:bump",)]
    (proj.root / "qd.toml").write_text('cache_dir = "build/cache"\nmodules = ["holder"]\n\n[[kernel]]\nname = '
                                       '"holder:bump"\nsignatures = [{ h = { factory = "holder:example" } }]\n')  # fmt: skip
    again = proj.qd("record", "-o", "qd.toml", "--", sys.executable, "holder.py", env=env)
    assert again.returncode == 0 and "skipped" not in again.stdout and "warm-up" not in again.stdout, again.stdout


def test_an_update_that_would_be_invalid_is_not_written(proj: Proj) -> None:  # noqa: F811
    (proj.root / "qd.toml").write_text('modules = []\ntargets = ["cuda:sm_1x"]\n')
    before = (proj.root / "qd.toml").read_text()
    cmd = proj.qd("record", "-o", "qd.toml", "--", sys.executable, "main.py", env={"QD_CACHE_DIR": str(proj.root / "c0")})
    assert cmd.returncode == 1 and "would be invalid" in cmd.stderr and "qd.toml:2" in cmd.stderr
    assert (proj.root / "qd.toml").read_text() == before


def test_a_recorded_manifest_precompiles_into_the_cache_the_run_used(proj: Proj, tmp_path) -> None:  # noqa: F811
    """A manifest written by qd record names its cache_dir: the folder the run chose (relative to the manifest
    inside the project), else a project-relative default; never the user cache of the recording machine."""
    (proj.root / "qd.toml").unlink()
    env = {"QD_CACHE_DIR": str(proj.root / "build" / "cache")}
    rec = proj.qd("record", "-o", "qd.toml", "--", sys.executable, "main.py", env=env)
    assert rec.returncode == 0, rec.stderr
    assert "cache_dir = 'build/cache' added" in rec.stdout
    assert ", 0 already there" in rec.stdout  # a new manifest: every kernel is new, none "already there"
    assert manifest.load(str(proj.root / "qd.toml")).cache_dir == "build/cache"
    user_cache = tmp_path / "xdg"  # where a precompile without cache_dir would go (QD_* are stripped)
    pc = proj.qd("precompile", env={"XDG_CACHE_HOME": str(user_cache)})
    assert pc.returncode == 0, pc.stdout + pc.stderr
    assert f"the cache is {proj.root / 'build' / 'cache'}" in pc.stdout
    assert not user_cache.exists()
    assert proj.main()["stats"]["compiles"] == 0  # the program, pointed at build/cache, compiles nothing

    (proj.root / "qd.toml").unlink()
    rec = proj.qd("record", "-o", "qd.toml", "--", sys.executable, "main.py", env={"XDG_CACHE_HOME": str(user_cache)})
    assert rec.returncode == 0, rec.stderr
    assert manifest.load(str(proj.root / "qd.toml")).cache_dir == ".qd-cache"  # record.DEFAULT_CACHE_DIR
    pc = proj.qd("precompile", env={"XDG_CACHE_HOME": str(user_cache)})  # stdout is a pipe, as in CI
    assert pc.returncode == 0 and f"the cache is {proj.root / '.qd-cache'}" in pc.stdout, pc.stdout + pc.stderr
    lines = [ln for ln in pc.stdout.splitlines() if ln.startswith("[") and f"/{SIGNATURES}] compiled " in ln]
    assert len(lines) == SIGNATURES, pc.stdout  # one line per compiled signature: a CI log shows progress
