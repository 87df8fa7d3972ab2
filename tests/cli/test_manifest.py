"""Manifest validation: every error names the file, the line and what was expected."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from quadrants.aot import manifest
from quadrants.aot.manifest import ManifestError
from quadrants.aot.tomlpos import key_lines


def write(tmp_path: Path, text: str, name: str = "qd.toml") -> str:
    p = tmp_path / name
    p.write_text(textwrap.dedent(text).lstrip("\n"))
    return str(p)


def error_of(tmp_path: Path, text: str, name: str = "qd.toml") -> ManifestError:
    with pytest.raises(ManifestError) as info:
        manifest.load(write(tmp_path, text, name))
    return info.value


GOOD = """
modules = ["app.kernels"]
python_path = ["src"]
cache_dir = "build/cache"
targets = ["host", "x86-64-v3"]

[init]
default_fp = "f64"

[[kernel]]
name = "app.kernels:step"
signatures = [
    { x = "ndarray[f32, 1]", n = 4, mode = "FAST" },
    { x = "numpy[f64, 2]", n = [1, 2], s = { factory = "app.setup:state" }, t = { dtype = "f16" } },
]

[[kernel]]
name = "app.kernels:Sim.advance"
factory = "app.setup:advance_args"
"""


def test_a_good_manifest(tmp_path: Path) -> None:
    m = manifest.load(write(tmp_path, GOOD))
    assert m.modules == ["app.kernels"] and m.python_path == ["src"] and m.cache_dir == "build/cache"
    assert m.targets == ["host", "x86-64-v3"] and m.init == {"default_fp": "f64"}
    step, adv = m.kernels
    assert step.module == "app.kernels" and step.qualname == "step" and len(step.signatures) == 2
    sig = step.signatures[1].params
    assert sig["n"] == manifest.Value((1, 2)) and sig["s"] == manifest.Factory("app.setup:state")
    assert sig["t"] == manifest.Value("f16", is_dtype=True)
    assert adv.qualname == "Sim.advance" and adv.factory == "app.setup:advance_args" and adv.signatures == []
    assert m.error("x", ("kernel", 0, "signatures", 1, "s")).line == 13


def test_the_same_in_pyproject(tmp_path: Path) -> None:
    text = '[project]\nname = "x"\n\n[tool.quadrants]\nmodules = ["a"]\n\n[[tool.quadrants.kernel]]\nname = "a:k"\n' \
           'signatures = [{ x = 1 }, { x = "f33" }]\n'  # fmt: skip
    m = manifest.load(write(tmp_path, text, "pyproject.toml"))
    assert m.kernels[0].name == "a:k"
    assert m.error("", ("kernel", 0, "signatures", 1)).line == 9
    assert str(m.error("boom", ("kernel", 0, "name"))) == f"{m.file}:8: boom"


@pytest.mark.parametrize(
    "text, line, expected",
    [
        ('modules = ["a"\ncache_dir = 1\n', 2, "invalid TOML"),
        ('modules = ["a"]\nmodule = ["b"]\n', 2, "unknown key 'module'; expected one of"),
        ('cache_dir = "c"\n', None, 'missing "modules"'),
        ('modules = "a"\n', 1, '"modules" must be a list of strings'),
        ("modules = []\n", 1, '"modules" is empty'),
        ('modules = ["a/b.py"]\n', 1, "is not a module name"),
        ('modules = ["a"]\ncache_dir = 3\n', 2, '"cache_dir" must be a folder path'),
        ('modules = ["a"]\ntargets = ["host",\n  "X86 64"]\n', 3, 'expected "host", a CPU name'),
        ('modules = ["a"]\ntargets = ["cuda:ampere"]\n', 2, 'expected "cuda:sm_80" or "cuda:sm_80,sm_90"'),
        ('modules = ["a"]\n[init]\ndefault_fp = "f64"\nfast_maths = true\n', 4, "unknown qd.init option 'fast_maths'"),
        ('modules = ["a"]\n[init]\noffline_cache_file_path = "x"\n', 3, "is set by qd precompile"),
        ('modules = ["a"]\nkernel = "a:k"\n', 2, "must be an array of tables"),
        ('modules = ["a"]\n\n[[kernel]]\nname = "a:k"\nsignature = []\n', 5, "unknown key 'signature' in [[kernel]]"),
        ('modules = ["a"]\n\n[[kernel]]\nname = "k"\n', 4, 'needs name = "module:kernel"'),
        ('modules = ["a"]\n\n[[kernel]]\nsignatures = []\n', 3, 'needs name = "module:kernel"'),
        ('modules = ["a"]\n\n[[kernel]]\nname = "a:k"\nfactory = "f"\n', 5, 'factory must be "module:function"'),
        ('modules = ["a"]\n\n[[kernel]]\nname = "a:k"\nsignatures = { x = "f32" }\n', 5, "must be an array"),
        ('modules = ["a"]\n\n[[kernel]]\nname = "a:k"\nsignatures = [\n  "f32",\n]\n', 6, "must be an inline table"),
        ('modules = ["a"]\n\n[[kernel]]\nname = "a:k"\nsignatures = [\n  {},\n  { x = { fact = "m:f" } },\n]\n', 7,
         "expected { factory"),
        ('modules = ["a"]\n[[kernel]]\nname = "a:k"\n[[kernel]]\nname = "a:k"\n', 4, "listed twice"),
    ],
)
def test_errors_name_the_line_and_what_was_expected(tmp_path: Path, text: str, line: int | None, expected: str) -> None:
    e = error_of(tmp_path, text)
    assert expected in e.message
    assert e.line == line
    assert str(e).startswith(f"{e.file}:{line}: " if line else f"{e.file}: ")
    assert e.file.endswith("qd.toml")


def test_gpu_targets_expand_per_architecture(tmp_path: Path) -> None:
    m = manifest.load(write(tmp_path, 'modules = ["a"]\ntargets = ["host", "cuda:sm_80,sm_90", "cuda:sm_80"]\n'))
    assert m.targets == ["host", "cuda:sm_80", "cuda:sm_90"]


def test_pyproject_without_a_tool_table(tmp_path: Path) -> None:
    e = error_of(tmp_path, '[project]\nname = "x"\n', "pyproject.toml")
    assert "no [tool.quadrants] table" in str(e)


def test_missing_file_and_binary_file(tmp_path: Path) -> None:
    with pytest.raises(ManifestError, match="cannot read"):
        manifest.load(str(tmp_path / "nope.toml"))
    p = tmp_path / "qd.toml"
    p.write_bytes(b"\xff\xfe\x00")
    with pytest.raises(ManifestError, match="UTF-8"):
        manifest.load(str(p))


def test_find_walks_up_and_prefers_qd_toml(tmp_path: Path) -> None:
    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / "pyproject.toml").write_text("[project]\nname='x'\n")  # no tool table: not a manifest
    assert manifest.find(str(tmp_path / "a" / "b")) is None or not manifest.find(str(tmp_path / "a" / "b")).startswith(
        str(tmp_path)
    )
    (tmp_path / "pyproject.toml").write_text("[tool.quadrants]\nmodules=['m']\n")
    assert manifest.find(str(tmp_path / "a" / "b")) == str(tmp_path / "pyproject.toml")
    (tmp_path / "a" / "qd.toml").write_text("modules=['m']\n")
    assert manifest.find(str(tmp_path / "a" / "b")) == str(tmp_path / "a" / "qd.toml")


def test_key_lines_follow_headers_arrays_and_inline_tables() -> None:
    text = 'a = [[1, 2], [3]]\n# c\n[t]\n"q.k".s = 1\n[[arr]]\nx = { y = 2, z = [\n  4,\n  5] }\n[[arr]]\nx = 1\n'
    lines = key_lines(text)
    assert lines[("a", 1, 0)] == 1
    assert lines[("t", "q.k", "s")] == 4
    assert lines[("arr", 0, "x", "z", 1)] == 8
    assert lines[("arr", 1, "x")] == 10


def test_remote_cache_goes_to_the_environment_unless_the_user_set_one(tmp_path: Path, monkeypatch) -> None:
    from quadrants.aot.opened import environment

    m = manifest.load(write(tmp_path, 'modules = ["app"]\nremote_cache = "redis://cache:6379/1"\n'))
    monkeypatch.delenv("QD_REMOTE_CACHE", raising=False)
    assert m.remote_cache == "redis://cache:6379/1"
    assert environment(m, "host")["QD_REMOTE_CACHE"] == "redis://cache:6379/1"
    monkeypatch.setenv("QD_REMOTE_CACHE", "redis://:password@cache:6379/1")
    assert "QD_REMOTE_CACHE" not in environment(m, "host")
    e = error_of(tmp_path, 'modules = ["app"]\nremote_cache = "http://cache"\n')
    assert e.line == 2 and "redis://" in str(e)
