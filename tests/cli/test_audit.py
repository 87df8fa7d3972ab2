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
        x[i] = qd.static(helper())


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
    assert proc.returncode == 0, proc.stderr
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
    assert run(pkg, "audit", "apkg").returncode == 0
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


def test_manifest_signatures_reveal_field_parameters(pkg: Path) -> None:
    (pkg / "apkg" / "factories.py").write_text("from apkg import k\n\ndef tensor_args():\n    return [(k.field,)]\n")
    (pkg / "qd.toml").write_text('modules = ["apkg.k"]\n\n[[kernel]]\nname = "apkg.k:takes_tensor"\n'
                                 'factory = "apkg.factories:tensor_args"\n')  # fmt: skip
    proc = run(pkg, "audit", "--json")
    assert proc.returncode == 0, proc.stderr
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
