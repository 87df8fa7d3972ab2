"""Bad input to `qd` is a clear message and exit status 2, never a traceback or a silent exit 0: manifests
(empty targets, bad [init] values, unknown CPU targets, impossible vector sizes, deep nesting), QD_* variables,
factories that raise, exit or return the wrong thing, projects that exit at import; `--json` prints one JSON
document even when the project prints; `qd record -o` into a missing folder."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

KERNELS = '''
import quadrants as qd

print("the project prints at import")


@qd.kernel(fastcache=True)
def inc(x: qd.types.NDArray[qd.f32, 1], k: qd.template()):
    for i in range(x.shape[0]):
        x[i] += k


@qd.kernel(fastcache=True)
def anyv(x: qd.types.ndarray(), k: qd.template()):
    for i in range(x.shape[0]):
        x[i] += 1
'''

FACTORIES = '''
import os
import sys

import numpy as np


def boom():
    raise RuntimeError("factory failed")


def wrong():
    return "a string"


def leave():
    sys.exit(3)


def vanish():
    os._exit(0)


def arrays():
    print("the factory prints")
    return np.zeros(4, np.float32)
'''

MANIFEST = """modules = ["app.k"]
cache_dir = "cache"
targets = {targets}

[init]
{init}

[[kernel]]
name = "app.k:{kernel}"
signatures = [{{ x = {x}, k = {k} }}]
"""


class Project:
    def __init__(self, root: Path) -> None:
        self.root = root
        (root / "app").mkdir(parents=True)
        (root / "app" / "__init__.py").write_text("")
        (root / "app" / "k.py").write_text(KERNELS)
        (root / "app" / "f.py").write_text(FACTORIES)
        self.manifest()

    def manifest(self, targets: str = '["host"]', init: str = "", kernel: str = "inc", x: str = '"ndarray[f32, 1]"',
                 k: str = "1") -> None:  # fmt: skip
        (self.root / "qd.toml").write_text(MANIFEST.format(targets=targets, init=init, kernel=kernel, x=x, k=k))

    def qd(self, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
        full = {k: v for k, v in os.environ.items() if not k.startswith("QD_")}
        return subprocess.run([sys.executable, "-m", "quadrants_cli.main", *args], cwd=self.root,
                              env={**full, **(env or {})}, capture_output=True, text=True, timeout=300)  # fmt: skip


@pytest.fixture
def proj(tmp_path: Path) -> Project:
    return Project(tmp_path / "p")


def usage_error(proc: subprocess.CompletedProcess, *words: str) -> None:
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr + proc.stdout
    for w in words:
        assert w in proc.stderr, (w, proc.stderr)


MANIFEST_CASES = {
    "empty targets": ({"targets": "[]"}, ["qd.toml:3", '"targets" is empty']),
    "unknown CPU target": ({"targets": '["x86-64-v9"]'}, ["qd.toml:3", "'x86-64-v9'", "does not know"]),
    "bad default_fp": ({"init": 'default_fp = "f65"'}, ["qd.toml:6", "init.default_fp"]),
    "bad opt_level": ({"init": 'opt_level = "high"'}, ["qd.toml:6", "init.opt_level"]),
    "zero-size vector": ({"kernel": "anyv", "x": '"ndarray[vector(0, f32), 1]"'}, ["qd.toml:10", "at least 1"]),
    "huge vector": ({"kernel": "anyv", "x": '"ndarray[vector(100000000, f32), 1]"'}, ["qd.toml:10", "at most"]),
    "huge matrix": ({"kernel": "anyv", "x": '"ndarray[matrix(5000, 5000, f32), 1]"'}, ["qd.toml:10", "at most"]),
    "deep value": ({"k": "[" * 300 + "1" + "]" * 300}, ["qd.toml", "nested"]),
    "factory raises": ({"x": '{ factory = "app.f:boom" }'}, ["qd.toml:10", "RuntimeError: factory failed"]),
    "factory exits": ({"x": '{ factory = "app.f:leave" }'}, ["qd.toml:10", "sys.exit(3)"]),
    "factory os._exit": ({"x": '{ factory = "app.f:vanish" }'}, ["qd.toml:10", "os._exit"]),
    "factory wrong type": ({"x": '{ factory = "app.f:wrong" }'}, ["qd.toml:10", "do not fit the kernel"]),
}


@pytest.mark.parametrize("case", sorted(MANIFEST_CASES))
def test_manifest_and_project_errors_exit_2(proj: Project, case: str) -> None:
    fields, words = MANIFEST_CASES[case]
    proj.manifest(**fields)
    usage_error(proj.qd("precompile"), *words)
    as_json = proj.qd("precompile", "--json")
    assert as_json.returncode == 2 and json.loads(as_json.stdout)["exit_code"] == 2


@pytest.mark.parametrize("how", ["sys.exit(0)", "os._exit(0)"])
def test_a_project_that_exits_at_import(proj: Project, how: str) -> None:
    (proj.root / "app" / "k.py").write_text(f"import os, sys\n{how}\n" + KERNELS)
    usage_error(proj.qd("precompile"), "importing app.k", "sys.exit(0)")
    usage_error(proj.qd("audit", "app.k"), "importing app.k")


@pytest.mark.parametrize(("var", "value"), [("QD_DEFAULT_FP", "f65"), ("QD_OPT_LEVEL", "high"), ("QD_DEBUG", "maybe"),
                                            ("QD_ARCH", "tpu")])  # fmt: skip
def test_bad_qd_variables_are_usage_errors(proj: Project, var: str, value: str) -> None:
    for args in (("precompile",), ("cache", "ls", "--cache-dir", "cache"), ("audit", "app.k")):
        usage_error(proj.qd(*args, env={var: value}), f"invalid {var}={value!r}")


def test_json_is_one_document_even_when_the_project_prints(proj: Project) -> None:
    proj.manifest(x='{ factory = "app.f:arrays" }')
    for args in (("precompile", "--json", "-j", "1"), ("precompile", "--json", "--check"), ("audit", "--json")):
        proc = proj.qd(*args)
        doc = json.loads(proc.stdout)  # the whole of stdout is one JSON document
        assert isinstance(doc, dict) and "the project prints at import" in proc.stderr, args


def test_no_spurious_log_level_warning(proj: Project) -> None:
    (proj.root / "app" / "k.py").write_text("import quadrants as qd\nqd.init(arch=qd.cpu, log_level='error')\n" + KERNELS)
    for args in (("precompile",), ("audit", "app.k"), ("cache", "ls", "--cache-dir", "cache")):
        proc = proj.qd(*args)
        assert proc.returncode == 0 and "QD_LOG_LEVEL" not in proc.stderr, (args, proc.stderr)


def test_record_into_a_missing_folder(proj: Project) -> None:
    usage_error(proj.qd("record", "-o", "no/such/folder/qd.toml", "--", sys.executable, "-c", "pass"),
                "does not exist")  # fmt: skip
    assert not (proj.root / "no").exists()


def test_audit_a_module_from_inside_the_project(proj: Project) -> None:
    qd_script = Path(sys.executable).parent / "qd"
    if not qd_script.exists():
        pytest.skip("the qd script is not installed beside this Python")
    env = {k: v for k, v in os.environ.items() if not k.startswith("QD_") and k != "PYTHONPATH"}
    proc = subprocess.run([str(qd_script), "audit", "app.k"], cwd=proj.root, env=env, capture_output=True, text=True)
    assert proc.returncode == 0 and "2 kernels in 1 module(s)" in proc.stdout, proc.stderr
