"""`qd audit`: findings, locations, exit codes, and agreement with what the compiler does at a call."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # every test runs `qd audit` in a subprocess

KERNELS = '''
import enum
import math
import os

import numpy as np
import quadrants as qd

scale = 2.0
LIMIT = 10
table = (1, 2, 3)
field = qd.field(qd.f32, (4,))


class Mode(enum.Enum):
    A = 1


def helper():
    return int(os.environ.get("N", "3"))


@qd.func
def bad_func(v):
    return v * scale


@qd.func
def good_func(v):
    return v * math.e


@qd.kernel(fastcache=True)
def good(x: qd.types.NDArray[qd.f32, 1], m: Mode):
    for i in range(x.shape[0]):
        x[i] = good_func(x[i]) * math.pi + np.pi + (1.0 if qd.static(m == Mode.A) else 0.0) + qd.math.pi


@qd.kernel(fastcache=True)
def reads_global(x: qd.types.NDArray[qd.f32, 1]):
    for i in range(x.shape[0]):
        x[i] = x[i] * scale + LIMIT


@qd.kernel(fastcache=True)
def via_func(x: qd.types.NDArray[qd.f32, 1]):
    for i in range(x.shape[0]):
        x[i] = bad_func(x[i])


@qd.kernel(fastcache=True)
def static_helper(x: qd.types.NDArray[qd.f32, 1]):
    for i in range(x.shape[0]):
        x[i] = 1.0 * qd.static(helper())  # (`x[i] = qd.static(...)` is a static element assignment: an error)


@qd.kernel(fastcache=True)
def static_tuple(x: qd.types.NDArray[qd.f32, 1]):
    for j in qd.static(table):
        x[0] += j


@qd.kernel(fastcache=True)
def captures_field(x: qd.types.NDArray[qd.f32, 1]):
    for i in range(4):
        x[i] = field[i]


@qd.kernel(fastcache=True)
def takes_tensor(f: qd.Tensor):
    for i in range(4):
        f[i] = 1.0


@qd.kernel
def not_pure(x: qd.types.NDArray[qd.f32, 1]):
    x[0] = 1.0
'''

EXPECTED = {
    "good": set(),
    "reads_global": {"violation", "warning"},
    "via_func": {"violation"},
    "static_helper": {"fallback"},
    "static_tuple": {"warning"},
    "captures_field": {"violation"},
    "takes_tensor": set(),  # a field through qd.Tensor: only visible with a signature (below)
    "not_pure": {"not_fastcache"},
}


def run(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("QD_")}
    return subprocess.run([sys.executable, "-m", "quadrants_cli.main", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)  # fmt: skip


@pytest.fixture
def pkg(tmp_path: Path) -> Path:
    (tmp_path / "apkg").mkdir()
    (tmp_path / "apkg" / "__init__.py").write_text("")
    (tmp_path / "apkg" / "k.py").write_text(textwrap.dedent(KERNELS).lstrip())
    return tmp_path


def findings_by_kernel(report: dict) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for f in report["findings"]:
        out.setdefault(f["kernel"].split(":")[1], set()).add(f["kind"])
    return out


@pytest.mark.parametrize("target", ["apkg/k.py", "apkg", "apkg.k"])
def test_findings_per_kernel_with_locations(pkg: Path, target: str) -> None:
    proc = run(pkg, "audit", "--json", target)
    assert proc.returncode == 1, proc.stderr  # violations: those kernels cannot run
    report = json.loads(proc.stdout)
    got = findings_by_kernel(report)
    assert {k: got.get(k, set()) for k in EXPECTED} == EXPECTED
    lines = (pkg / "apkg" / "k.py").read_text().splitlines()
    for f in report["findings"]:
        file, line = f["where"].rsplit(":", 1)
        assert file == os.path.join("apkg", "k.py")
        text = lines[int(line) - 1]
        if f["kind"] == "violation" and "'scale'" in f["message"]:
            assert "scale" in text  # the line that reads it (in the func, for via_func)
        if f["kind"] == "not_fastcache":
            assert text.startswith("@qd.kernel")


def test_strict_exit_codes_and_human_output(pkg: Path) -> None:
    assert run(pkg, "audit", "apkg").returncode == 1  # a violation fails at the first call: never exit 0
    (pkg / "warns.py").write_text("import quadrants as qd\nLIMIT = 3\n\n@qd.kernel(fastcache=True)\n"
                                  "def k(x: qd.types.NDArray[qd.f32, 1]):\n    x[0] = LIMIT\n")  # fmt: skip
    assert run(pkg, "audit", "warns.py").returncode == 0  # only a warning: findings count under --strict
    assert run(pkg, "audit", "--strict", "warns.py").returncode == 1
    strict = run(pkg, "audit", "--strict", "apkg")
    assert strict.returncode == 1
    assert "violation" in strict.stdout and "apkg/k.py:" in strict.stdout and "8 kernels" in strict.stdout
    (pkg / "clean.py").write_text("import quadrants as qd\n\n@qd.kernel(fastcache=True)\ndef k(x: qd.types.NDArray[qd.f32, 1]):\n"
                                  "    x[0] = 1.0\n")  # fmt: skip
    assert run(pkg, "audit", "--strict", "clean.py").returncode == 0


def test_usage_errors_exit_2(pkg: Path) -> None:
    assert run(pkg, "audit").returncode == 2  # nothing given, no manifest
    missing = run(pkg, "audit", "nope/x.py")
    assert missing.returncode == 2 and "no such file" in missing.stderr
    broken = pkg / "broken.py"
    broken.write_text("raise ValueError('boom at import')\n")
    proc = run(pkg, "audit", "broken.py")
    assert proc.returncode == 2 and "boom at import" in proc.stderr
    for args in (("nosuchmod",), ("--json", "nosuchmod")):  # one line, as qd precompile says it; no traceback
        proc = run(pkg, "audit", *args)
        out = proc.stdout if "--json" in args else proc.stderr
        assert proc.returncode == 2 and "module 'nosuchmod' not found" in out and "Traceback" not in proc.stderr
        assert len(out.strip().splitlines()) == 1, out


def test_manifest_signatures_reveal_field_parameters(pkg: Path) -> None:
    (pkg / "apkg" / "factories.py").write_text("from apkg import k\n\ndef tensor_args():\n    return [(k.field,)]\n")
    (pkg / "qd.toml").write_text('modules = ["apkg.k"]\n\n[[kernel]]\nname = "apkg.k:takes_tensor"\n'
                                 'factory = "apkg.factories:tensor_args"\n')  # fmt: skip
    proc = run(pkg, "audit", "--json")
    assert proc.returncode == 1, proc.stderr  # apkg.k has violations
    got = findings_by_kernel(json.loads(proc.stdout))
    assert got["takes_tensor"] == {"fallback"}


def test_the_audit_agrees_with_the_compiler(pkg: Path) -> None:
    """Each violation is a compile error at the first call, each fallback a warning that fastcache is off, and a
    kernel with no finding compiles silently."""
    script = textwrap.dedent('''
        import json, sys, logging, warnings
        import numpy as np
        import quadrants as qd
        qd.init(arch=qd.cpu, offline_cache=True)
        from apkg import k
        out = {}
        records = []
        class H(logging.Handler):
            def emit(self, r):
                records.append(r.getMessage())
        logging.getLogger("quadrants").addHandler(H())
        calls = {"good": (np.zeros(4, np.float32), k.Mode.A), "reads_global": (np.zeros(4, np.float32),),
                 "via_func": (np.zeros(4, np.float32),), "static_helper": (np.zeros(4, np.float32),),
                 "static_tuple": (np.zeros(4, np.float32),), "captures_field": (np.zeros(4, np.float32),)}
        for name, args in calls.items():
            del records[:]
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                try:
                    getattr(k, name)(*args)
                    kinds = set()
                except qd.QuadrantsCompilationError:
                    kinds = {"violation"}
            records += [str(w.message) for w in caught]
            if any("fastcache is off" in m or "[FASTCACHE][INVALID_FUNC]" in m for m in records):
                kinds.add("fallback")
            if any("checked at every lookup" in m for m in records):
                kinds.add("warning")
            out[name] = sorted(kinds)
        print(json.dumps(out))
    ''')
    (pkg / "call_all.py").write_text(script)
    env = {k: v for k, v in os.environ.items() if not k.startswith("QD_")}
    env["QD_CACHE_DIR"] = str(pkg / "cache")
    proc = subprocess.run([sys.executable, "call_all.py"], cwd=pkg, env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    compiled = {k: set(v) for k, v in json.loads(proc.stdout.strip().splitlines()[-1]).items()}
    audited = findings_by_kernel(json.loads(run(pkg, "audit", "--json", "apkg").stdout))
    for name, kinds in compiled.items():
        want = audited.get(name, set())
        if "violation" in want:
            assert kinds == {"violation"} or "violation" in kinds, (name, kinds, want)  # stops at the first error
        else:
            assert kinds == want, (name, kinds, want)


UNSUPPORTED = """
import quadrants as qd


@qd.kernel(fastcache=True)
def k_try(x: qd.types.NDArray[qd.f32, 1]):
    for i in range(x.shape[0]):
        try:
            x[i] = 1.0
        except Exception:
            pass


@qd.kernel
def k_set(x: qd.types.NDArray[qd.f32, 1]):
    d = {1, 2}
    x[0] = 1.0


@qd.kernel(fastcache=True)
def k_lambda(x: qd.types.NDArray[qd.f32, 1]):
    f = lambda v: v + 1  # noqa: E731
    x[0] = 1.0


@qd.func
def imports(v):
    import math
    return v


@qd.kernel(fastcache=True)
def k_import(x: qd.types.NDArray[qd.f32, 1]):
    x[0] = imports(1.0)


@qd.kernel(fastcache=True)
def k_ok(x: qd.types.NDArray[qd.f32, 1], n: qd.template()):
    for i in range(x.shape[0]):
        v = qd.math.vec3(*[1.0, 2.0, 3.0])
        if qd.static(n > 1):
            x[i] = v[0] + len([j for j in range(3)]) + qd.static({"a": 2}["a"])
        print(f"{i} {x[i]}")
"""


def test_unsupported_python_is_a_violation_where_the_compiler_reports_it(tmp_path: Path) -> None:
    """try / dict / lambda / import in a kernel or a func: a violation at the compiler's file:line:col, found
    without compiling; valid code evaluated at compile time (call arguments, qd.static) is not reported."""
    (tmp_path / "unsup.py").write_text(UNSUPPORTED)
    proc = run(tmp_path, "audit", "--json", "unsup.py")
    assert proc.returncode == 1, proc.stderr  # no --strict needed
    audited = {f["kernel"].split(":")[1]: (f["where"], f["message"]) for f in json.loads(proc.stdout)["findings"]
               if f["kind"] == "violation"}  # fmt: skip
    script = textwrap.dedent('''
        import json, numpy as np, quadrants as qd, unsup
        qd.init(arch=qd.cpu, offline_cache=False)
        out = {}
        for name in ("k_try", "k_set", "k_lambda", "k_import"):
            try:
                getattr(unsup, name)(np.zeros(4, np.float32))
            except qd.QuadrantsCompilationError as e:
                out[name] = (f"unsup.py:{e.loc.lineno}:{e.loc.col + 1}", e.message)
        unsup.k_ok(np.zeros(4, np.float32), 2)
        print(json.dumps(out))
    ''')
    (tmp_path / "call.py").write_text(script)
    env = {k: v for k, v in os.environ.items() if not k.startswith("QD_")}
    called = subprocess.run([sys.executable, "call.py"], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert called.returncode == 0, called.stderr
    compiled = {k: tuple(v) for k, v in json.loads(called.stdout.strip().splitlines()[-1]).items()}
    assert set(compiled) == {"k_try", "k_set", "k_lambda", "k_import"}
    assert audited == compiled
