"""Target names are parsed in one place (quadrants/targets.py) and asked what they are everywhere else."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import quadrants
from quadrants.targets import HOST, Target, TargetError, parse_targets


@pytest.mark.parametrize(
    ("text", "kind", "name", "cpu"),
    [("host", "cpu", "host", "host"), ("x86-64-v3", "cpu", "x86-64-v3", "x86-64-v3"), ("cuda:sm_90", "cuda", "sm_90", "host")],
)
def test_a_name_parses_to_what_it_is(text: str, kind: str, name: str, cpu: str) -> None:
    t = Target.parse(text)
    assert (t.kind, t.name, t.cpu_name, str(t)) == (kind, name, cpu, text)
    assert t.is_cuda == (kind == "cuda") and t.is_host == (text == "host")


def test_several_gpu_architectures_expand_in_order() -> None:
    assert [str(t) for t in parse_targets("cuda:sm_80, sm_90,sm_120")] == ["cuda:sm_80", "cuda:sm_90", "cuda:sm_120"]
    assert Target.parse("host") == HOST


@pytest.mark.parametrize("text", ["cuda", "cuda:80", "cudax:sm_80", "Host", "", "x86 64", "cuda:sm_80,sm_9"])
def test_a_malformed_name_says_what_was_expected(text: str) -> None:
    with pytest.raises(TargetError, match="expected"):
        parse_targets(text)


def test_one_target_means_one() -> None:
    with pytest.raises(TargetError, match="one GPU architecture"):
        Target.parse("cuda:sm_80,sm_90")


def _string_tests_on_target_names(path: Path) -> list[str]:
    """`x == "host"`, `x != "host"`, `x.startswith("cuda")` / `("cuda:")`: testing a target name's text."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Compare) and any(isinstance(op, (ast.Eq, ast.NotEq)) for op in node.ops):
            if any(isinstance(c, ast.Constant) and c.value == "host" for c in [node.left, *node.comparators]):
                found.append(f"{path.name}:{node.lineno}")
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "startswith"
              and node.args and isinstance(node.args[0], ast.Constant) and node.args[0].value in ("cuda", "cuda:")):  # fmt: skip
            found.append(f"{path.name}:{node.lineno}")
    return found


def test_no_module_outside_the_backends_tests_a_target_names_text() -> None:
    root = Path(quadrants.__file__).parent
    allowed = {root / "targets.py", root / "codegen" / "cpu.py"}  # codegen/cpu.py consumes the cpu_target setting
    found = [hit for p in sorted(root.rglob("*.py")) if "backends" not in p.parts and p not in allowed
             for hit in _string_tests_on_target_names(p)]  # fmt: skip
    assert not found, f"target names tested as text (use quadrants.targets.Target): {found}"


def test_the_guard_sees_a_string_test(tmp_path: Path) -> None:
    p = tmp_path / "m.py"
    p.write_text('def f(t):\n    return t.startswith("cuda:") or t != "host"\n')
    assert _string_tests_on_target_names(p) == ["m.py:2", "m.py:2"]
