"""`qd precompile` end to end, in subprocesses: fill a cache, move it, run the program from it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from quadrants.backends.host import host_runs
from quadrants.cache.keys import FORMAT
from tests.cache.conftest import make_read_only

pytestmark = pytest.mark.slow  # every test runs `qd` and the program in subprocesses

KERNELS = '''
import dataclasses
import enum

import quadrants as qd


class Mode(enum.Enum):
    ADD = 1
    MUL = 2


@qd.func
def twice(v):
    return v * 2.0


@qd.kernel(fastcache=True)
def saxpy(a: qd.f32, x: qd.types.NDArray[qd.f32, 1], y: qd.types.NDArray[qd.f32, 1]):
    for i in range(x.shape[0]):
        y[i] = a * twice(x[i]) + y[i]


@qd.kernel(fastcache=True)
def apply(x: qd.types.ndarray(), n: qd.template(), mode: Mode):
    for i in range(x.shape[0]):
        if qd.static(mode == Mode.ADD):
            x[i] += n
        else:
            x[i] *= n


@qd.kernel(fastcache=True)
def spin(v: qd.types.NDArray[qd.math.vec3, 1], angle: qd.f32):
    for i in range(v.shape[0]):
        c, s = qd.cos(angle), qd.sin(angle)
        p = v[i]
        v[i] = qd.math.vec3(c * p[0] - s * p[1], s * p[0] + c * p[1], p[2])


@dataclasses.dataclass
class Params:
    gain: qd.f32
    out: qd.types.NDArray[qd.f32, 1]


@qd.kernel(fastcache=True)
def fill(p: Params):
    for i in range(p.out.shape[0]):
        p.out[i] = p.gain


@qd.data_oriented
class Counter:
    def __init__(self, n):
        self.values = qd.ndarray(qd.i32, (n,))
        self.step = 3

    @qd.kernel(fastcache=True)
    def advance(self):
        for i in range(self.values.shape[0]):
            self.values[i] += self.step


@qd.kernel
def plain(x: qd.types.NDArray[qd.f32, 1]):
    for i in range(x.shape[0]):
        x[i] = 0.0


@qd.kernel(fastcache=True)
def unlisted(x: qd.types.NDArray[qd.f32, 1]):
    for i in range(x.shape[0]):
        x[i] = 1.0
'''

FACTORIES = '''
import numpy as np
import quadrants as qd
from app import kernels


def params():
    return kernels.Params(1.0, qd.ndarray(qd.f32, (1,)))


def counter():
    return kernels.Counter(1)


def fill_args():
    return [{"p": params()}]
'''

MANIFEST = '''
modules = ["app.kernels"]
cache_dir = "build/cache"

[[kernel]]
name = "app.kernels:saxpy"

[[kernel]]
name = "app.kernels:apply"
signatures = [
    { x = "ndarray[f32, 1]", n = 2, mode = "ADD" },
    { x = "numpy[f64, 1]", n = 3, mode = "Mode.MUL" },
]

[[kernel]]
name = "app.kernels:spin"

[[kernel]]
name = "app.kernels:fill"
factory = "app.factories:fill_args"

[[kernel]]
name = "app.kernels:Counter.advance"
signatures = [{ self = { factory = "app.factories:counter" } }]

[[kernel]]
name = "app.kernels:plain"
'''

MAIN = '''
import json
import os
import sys

if os.environ.get("TEST_NO_SCAN"):  # the loader may read entries by key, never list the cache's folders
    _cache = os.path.realpath(os.environ["QD_CACHE_DIR"])

    def _guarded(real):
        def guard(path=".", *a, **kw):
            if os.path.realpath(str(path)).startswith(_cache):
                raise AssertionError(f"the cache folder {path} was listed at start")
            return real(path, *a, **kw)
        return guard

    os.scandir, os.listdir = _guarded(os.scandir), _guarded(os.listdir)

import numpy as np
import quadrants as qd
from app import kernels as k

qd.init(arch=qd.cpu)
x = qd.ndarray(qd.f32, (4,))
y = qd.ndarray(qd.f32, (4,))
x.fill(1.0)
k.saxpy(2.0, x, y)
sax = y.to_numpy().tolist()
k.apply(x, 2, k.Mode.ADD)
z = np.ones(3)
k.apply(z, 3, k.Mode.MUL)
v = qd.Vector.ndarray(3, qd.f32, (2,))
v.from_numpy(np.array([[1.0, 0.0, 5.0], [0.0, 1.0, 5.0]], dtype=np.float32))
k.spin(v, 3.14159265 / 2)
p = k.Params(7.0, qd.ndarray(qd.f32, (2,)))
k.fill(p)
c = k.Counter(2)
c.advance()
c.advance()
k.plain(y)
print(json.dumps({
    "saxpy": sax, "x": x.to_numpy().tolist(), "z": z.tolist(), "v": np.round(v.to_numpy(), 5).tolist(),
    "fill": p.out.to_numpy().tolist(), "counter": c.values.to_numpy().tolist(), "y": y.to_numpy().tolist(),
    "stats": qd.stats(), "llvmlite": "llvmlite" in sys.modules,
    "cuda": sorted(m for m in sys.modules if m.split(".")[0] in ("cuda", "cupy")),
}))
'''

SIGNATURES = 7  # saxpy 1, apply 2, spin 1, fill 1, Counter.advance 1, plain 1


class Proj:
    def __init__(self, root: Path) -> None:
        self.root = root

    def write(self, name: str, text: str) -> None:
        p = self.root / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(textwrap.dedent(text).lstrip("\n"))

    def env(self, extra: dict[str, str] | None = None) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("QD_")}
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["QD_LOG_LEVEL"] = "warn"
        return {**env, **(extra or {})}

    def qd(self, *args: str, env: dict[str, str] | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "quadrants_cli.main", *args], cwd=cwd or self.root,
                              env=self.env(env), capture_output=True, text=True, timeout=600)  # fmt: skip

    def precompile(self, *args: str, env: dict[str, str] | None = None) -> tuple[int, dict]:
        proc = self.qd("precompile", "--json", *args, env=env)
        assert proc.stdout.strip(), proc.stderr
        return proc.returncode, json.loads(proc.stdout)

    def main(self, root: Path | None = None, env: dict[str, str] | None = None) -> dict:
        env = {"QD_CACHE_DIR": str(self.root / "build" / "cache"), **(env or {})}
        proc = subprocess.run([sys.executable, "main.py"], cwd=root or self.root, env=self.env(env),
                              capture_output=True, text=True, timeout=300)  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.fixture
def proj(tmp_path: Path) -> Proj:
    p = Proj(tmp_path / "proj")
    p.write("app/__init__.py", "")
    p.write("app/kernels.py", KERNELS)
    p.write("app/factories.py", FACTORIES)
    p.write("qd.toml", MANIFEST)
    p.write("main.py", MAIN)
    return p


def check_results(out: dict) -> None:
    assert out["saxpy"] == [4.0] * 4  # 2 * twice(1) + 0
    assert out["x"] == [3.0] * 4  # 1 + 2
    assert out["z"] == [3.0] * 3
    assert out["v"] == [[0.0, 1.0, 5.0], [-1.0, 0.0, 5.0]]
    assert out["fill"] == [7.0, 7.0]
    assert out["counter"] == [6, 6]
    assert out["y"] == [0.0] * 4


def test_precompile_then_run_from_a_moved_read_only_copy(proj: Proj, tmp_path: Path) -> None:
    rc, report = proj.precompile("-j", "2")
    assert rc == 0, report
    assert report["signatures"] == SIGNATURES and report["compiled"] == SIGNATURES and report["failed"] == 0
    assert report["not_in_manifest"] == ["app.kernels:unlisted"] and report["not_fastcache"] == ["app.kernels:plain"]
    assert report["bundles"]["host"]

    elsewhere = tmp_path / "deploy" / "app-root"
    shutil.copytree(proj.root, elsewhere, ignore=shutil.ignore_patterns("build"))
    cache = tmp_path / "image-cache"
    shutil.copytree(proj.root / "build" / "cache", cache)
    undo = make_read_only(cache)
    try:
        out = proj.main(elsewhere, env={"QD_CACHE_DIR": str(cache), "TEST_NO_SCAN": "1"})
    finally:
        if undo:
            subprocess.run(undo)
    check_results(out)
    stats = out["stats"]
    assert stats["compiles"] == 0, stats
    assert stats["cache"]["fastcache_hits"] == SIGNATURES - 1 and stats["cache"]["offline_hits"] == 1
    assert not out["llvmlite"] and out["cuda"] == []


def test_incremental_runs_and_check(proj: Proj) -> None:
    rc, first = proj.precompile()
    assert rc == 0 and first["compiled"] == SIGNATURES
    rc, second = proj.precompile()
    assert rc == 0 and second["compiled"] == 0 and second["cached"] == SIGNATURES
    assert second["bundles"] == first["bundles"]  # unchanged: the bundle is not relinked
    rc, check = proj.precompile("--check")
    assert rc == 0 and check["missing"] == 0

    src = (proj.root / "app" / "kernels.py").read_text()
    (proj.root / "app" / "kernels.py").write_text(src.replace("a * twice(x[i]) + y[i]", "a * twice(x[i]) - y[i]"))
    rc, check = proj.precompile("--check")
    assert rc == 1 and check["missing"] == 1
    (missing,) = [i for i in check["items"] if i["status"] == "missing"]
    assert missing["kernel"] == "app.kernels:saxpy" and missing["where"] == "qd.toml:4"
    human = proj.qd("precompile", "--check")
    assert human.returncode == 1 and "NOT CACHED app.kernels:saxpy" in human.stdout

    rc, third = proj.precompile()
    assert rc == 0 and third["compiled"] == 1 and third["cached"] == SIGNATURES - 1
    assert proj.precompile("--check")[0] == 0


def test_an_empty_cache_fails_the_check(proj: Proj) -> None:
    rc, check = proj.precompile("--check")
    assert rc == 1 and check["missing"] == SIGNATURES and check["compiled"] == 0
    assert not (proj.root / "build" / "cache" / f"v{FORMAT}" / "artifact").exists()  # nothing was compiled


def test_a_kernel_that_fails_to_compile_exits_1_and_is_named(proj: Proj) -> None:
    proj.write("qd.toml", MANIFEST.replace('"numpy[f64, 1]"', '"numpy[f64, 2]"'))
    rc, report = proj.precompile()
    assert rc == 1 and report["failed"] == 1 and report["compiled"] == SIGNATURES - 1
    (bad,) = [i for i in report["items"] if i["status"] == "failed"]
    assert bad["kernel"] == "app.kernels:apply" and bad["where"] == "qd.toml:11"
    assert "kernels.py" in bad["detail"] and "x[i] *= n" in bad["detail"] and "dimension" in bad["detail"]
    human = proj.qd("precompile")
    assert human.returncode == 1 and "FAILED app.kernels:apply" in human.stdout


@pytest.mark.parametrize(
    "old, new, line, expected",
    [
        ('{ x = "ndarray[f32, 1]", n = 2, mode = "ADD" }', '{ x = "ndarray[f32, 1]", n = 2, mode = "ADD", q = 1 }', 10,
         "has no parameter 'q'"),
        ('{ x = "ndarray[f32, 1]", n = 2, mode = "ADD" }', '{ x = "ndarray[f32, 1]", mode = "ADD" }', 10,
         "parameter 'n' of apply needs a value"),
        ('{ x = "ndarray[f32, 1]", n = 2, mode = "ADD" }', '{ x = "ndarray[f32, 1]", n = 2, mode = "SUB" }', 10,
         "expected a member of Mode (ADD, MUL)"),
        ('{ x = "ndarray[f32, 1]", n = 2, mode = "ADD" }', '{ x = "ndarry[f32, 1]", n = 2, mode = "ADD" }', 10,
         "unknown type 'ndarry[f32, 1]'"),
        ('name = "app.kernels:saxpy"', 'name = "app.kernels:saxpy"\nsignatures = [{ x = "ndarray[f64, 1]" }]', 6,
         "annotated with elements of f32"),
        ('name = "app.kernels:saxpy"', 'name = "app.kernels:saxpy"\nsignatures = [{ a = "f64" }]', 6,
         "is annotated f32"),
        ('name = "app.kernels:spin"', 'name = "app.kernels:spinn"', 15, "kernel 'app.kernels:spinn' not found"),
        ('factory = "app.factories:fill_args"', 'factory = "app.factories:nope"', 19, "factory 'app.factories:nope'"),
        ('modules = ["app.kernels"]', 'modules = ["app.kernelz"]', 1, "module 'app.kernelz' not found"),
        ('signatures = [{ self = { factory = "app.factories:counter" } }]', "", 21,
         "parameter 'self' of Counter.advance needs an instance"),
    ],
)
def test_manifest_errors_found_on_import_exit_2_with_the_line(proj: Proj, old: str, new: str, line: int,
                                                              expected: str) -> None:  # fmt: skip
    assert old in MANIFEST
    proj.write("qd.toml", MANIFEST.replace(old, new))
    proc = proj.qd("precompile")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert f"qd.toml:{line}: " in proc.stderr and expected in proc.stderr, proc.stderr
    as_json = proj.qd("precompile", "--json")
    assert as_json.returncode == 2 and json.loads(as_json.stdout)["error"].startswith(f"qd.toml:{line}: ")


def test_a_project_that_fails_to_import_exits_2(proj: Proj) -> None:
    proj.write("app/kernels.py", KERNELS + "\nraise RuntimeError('broken on import')\n")
    proc = proj.qd("precompile")
    assert proc.returncode == 2 and "broken on import" in proc.stderr and "kernels.py" in proc.stderr


def test_no_manifest_is_a_usage_error(tmp_path: Path) -> None:
    p = Proj(tmp_path)
    proc = p.qd("precompile")
    assert proc.returncode == 2 and "no manifest" in proc.stderr


@pytest.mark.skipif(not host_runs("x86-64-v3"), reason="this CPU cannot run x86-64-v3 code")
def test_a_portable_target_serves_a_machine_it_was_not_built_on(proj: Proj) -> None:
    rc, report = proj.precompile("--target", "x86-64-v3")
    assert rc == 0 and report["targets"] == ["x86-64-v3"] and report["compiled"] == SIGNATURES
    out = proj.main(env={"QD_CACHE_DIR": str(proj.root / "build" / "cache")})
    check_results(out)
    assert out["stats"]["compiles"] == 0 and out["stats"]["cache"]["baseline_hits"] == SIGNATURES - 1
    assert not out["llvmlite"]


def test_without_a_linker_precompile_fails_before_compiling_with_the_install_hint(proj: Proj) -> None:
    """An object pack would make the precompiled start link its kernels with llvmlite (the compiler): refused,
    exit 1, naming what to install, and nothing compiled."""
    rc, report = proj.precompile(env={"QD_LINKER": "none"})
    assert rc == 1 and "no linker found" in report["error"]
    assert "binutils" in report["error"] and "quadrants-fastcache[linker]" in report["error"]
    assert not list((proj.root / "build" / "cache").rglob("*.qd"))


def _elf_type(path: str) -> int:
    """e_type of the ELF image a bundle entry starts with: 3 a shared object, 1 relocatable objects (a pack)."""
    with open(path, "rb") as f:
        head = f.read(18)
    assert head[:4] == b"\x7fELF"
    return int.from_bytes(head[16:18], "little")


def test_the_linker_extra_links_the_bundle_where_ld_is_missing(proj: Proj, tmp_path: Path) -> None:
    """`pip install 'quadrants-fastcache[linker]'` (the ziglang wheel's `zig ld.lld`) instead of binutils: the
    bundle is a shared object and the precompiled start compiles nothing and never imports llvmlite."""
    pytest.importorskip("ziglang")
    (tmp_path / "empty-bin").mkdir()
    rc, report = proj.precompile(env={"PATH": str(tmp_path / "empty-bin")})  # no `ld` anywhere on PATH
    assert rc == 0, report
    assert report["compiled"] == SIGNATURES and _elf_type(report["bundles"]["host"]) == 3
    out = proj.main()
    check_results(out)
    assert out["stats"]["compiles"] == 0 and not out["llvmlite"]


def test_pyproject_manifest(proj: Proj) -> None:
    (proj.root / "qd.toml").unlink()
    body = MANIFEST.replace("[[kernel]]", "[[tool.quadrants.kernel]]")
    proj.write("pyproject.toml", '[project]\nname = "demo"\nversion = "0"\n\n[tool.quadrants]\n' + body.lstrip())
    rc, report = proj.precompile()
    assert rc == 0 and report["manifest"] == "pyproject.toml" and report["compiled"] == SIGNATURES
