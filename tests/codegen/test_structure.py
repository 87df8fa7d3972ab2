"""The shape of codegen/: no import cycle between its modules, no method annotating `self`, no lowering table
changed by importing a backend, and math lowering chosen per backend (the symbols each strategy calls)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

CODEGEN = Path(__file__).resolve().parents[2] / "quadrants" / "codegen"


def _codegen_imports(path: Path) -> set[str]:
    """The codegen modules `path` imports anywhere: at the top, in functions, or under `if TYPE_CHECKING:`."""
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            if node.module == "quadrants.codegen":
                out.update(a.name for a in node.names)
            elif node.module.startswith("quadrants.codegen."):
                out.add(node.module.split(".")[2])
        elif isinstance(node, ast.Import):
            out.update(a.name.split(".")[2] for a in node.names if a.name.startswith("quadrants.codegen."))
    return out


def test_no_import_cycle_in_codegen() -> None:
    graph = {p.stem: _codegen_imports(p) - {p.stem} for p in CODEGEN.glob("*.py")}
    visiting: list[str] = []
    done: set[str] = set()

    def visit(mod: str) -> None:
        if mod in done:
            return
        assert mod not in visiting, f"import cycle: {' -> '.join([*visiting[visiting.index(mod) :], mod])}"
        visiting.append(mod)
        for dep in sorted(graph.get(mod, ())):
            visit(dep)
        visiting.pop()
        done.add(mod)

    for mod in sorted(graph):
        visit(mod)


def test_no_method_annotates_self() -> None:
    found = []
    for path in sorted(CODEGEN.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.args.args:
                first = node.args.args[0]
                if first.arg == "self" and first.annotation is not None:
                    found.append(f"{path.name}:{node.lineno} {node.name}")
    assert not found, f"methods annotating self (a mixin in disguise): {found}"


@pytest.mark.slow
def test_importing_backends_changes_no_shared_lowering_state() -> None:
    """Importing codegen.kernel and codegen.cuda leaves codegen.lower as it was: no statement registered into a
    shared table, no class attribute set from outside."""
    code = """
import quadrants.codegen.lower as lower

def snapshot():
    state = {}
    for owner, names in (("lower", vars(lower)), ("FnLowering", vars(lower.FnLowering))):
        for k, v in names.items():
            state[owner, k] = dict(v) if hasattr(v, "items") and not isinstance(v, type) else v
    return state

before = snapshot()
import quadrants.codegen.kernel, quadrants.codegen.cuda
after = snapshot()
changed = sorted(f"{o}.{k}" for o, k in before.keys() | after.keys() if before.get((o, k)) != after.get((o, k)))
print(changed)
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]", f"importing the backends changed codegen.lower: {out.strip()}"


@pytest.mark.parametrize(
    ("strategy", "expected"),
    [
        ("MathLowering", {"sin": "llvm.sin.f32", "tan": "tanf", "sin64": "llvm.sin.f64", "sin16": "llvm.sin.f32"}),
        ("NvptxMath", {"sin": "__nv_sinf", "tan": "__nv_tanf", "sin64": "__nv_sin", "sin16": "__nv_sinf"}),
        ("HostNvptxMath", {"sin": "sinf", "tan": "tanf", "sin64": "sin", "sin16": "sinf"}),
    ],
)
def test_math_strategy_symbols(strategy: str, expected: dict[str, str]) -> None:
    from llvmlite import ir as ll

    from quadrants.codegen import math
    from quadrants.types import dtypes

    module = ll.Module()
    called = {}
    for key, op, t in (("sin", "sin", dtypes.f32), ("tan", "tan", dtypes.f32), ("sin64", "sin", dtypes.f64),
                       ("sin16", "sin", dtypes.f16)):  # fmt: skip
        ty = ll.HalfType() if t is dtypes.f16 else ll.FloatType() if t is dtypes.f32 else ll.DoubleType()
        fn = ll.Function(module, ll.FunctionType(ty, [ty]), f"k_{key}")
        b = ll.IRBuilder(fn.append_basic_block("entry"))
        lowering = getattr(math, strategy)(module, b, ())
        lowering.unop(op, fn.args[0], t)
        calls = [i for i in b.block.instructions if isinstance(i, ll.CallInstr)]
        called[key] = calls[-1].callee.name
    assert called == expected
