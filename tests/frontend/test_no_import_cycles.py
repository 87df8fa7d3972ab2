"""The frontend's modules import each other without a cycle, also not through `if TYPE_CHECKING:` blocks or
imports inside functions (issue 9): each construct module sees the builder, never a module that imports it."""

from __future__ import annotations

import ast
from pathlib import Path

FRONTEND = Path(__file__).resolve().parents[2] / "quadrants" / "frontend"
PACKAGE = "quadrants.frontend"


def _module_name(path: Path) -> str:
    return PACKAGE if path.stem == "__init__" else f"{PACKAGE}.{path.stem}"


def _imports(path: Path, modules: set[str]) -> set[str]:
    """The frontend modules `path` imports anywhere in its text (top level, functions, TYPE_CHECKING)."""
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name in modules)
        elif isinstance(node, ast.ImportFrom) and node.module is not None:
            base = node.module if node.level == 0 else _relative(path, node.module, node.level)
            if base in modules:
                out.add(base)
            out.update(f"{base}.{a.name}" for a in node.names if f"{base}.{a.name}" in modules)
    out.discard(_module_name(path))
    out.discard(PACKAGE)  # importing the package itself runs only its (empty) __init__
    return out


def _relative(path: Path, module: str, level: int) -> str:
    parts = PACKAGE.split(".")[: len(PACKAGE.split(".")) - (level - 1)]
    return ".".join([*parts, module]) if module else ".".join(parts)


def import_graph() -> dict[str, set[str]]:
    files = sorted(FRONTEND.glob("*.py"))
    modules = {_module_name(f) for f in files}
    return {_module_name(f): _imports(f, modules) for f in files}


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle of `graph` (as a path that returns to its start), or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(m: str) -> list[str] | None:
        state[m] = 1
        path.append(m)
        for dep in sorted(graph.get(m, ())):
            if state.get(dep) == 1:
                return path[path.index(dep) :] + [dep]
            if dep not in state:
                found = visit(dep)
                if found:
                    return found
        path.pop()
        state[m] = 2
        return None

    for m in sorted(graph):
        if m not in state:
            found = visit(m)
            if found:
                return found
    return None


def test_cycle_finder_sees_a_cycle() -> None:
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def test_no_import_cycles_in_the_frontend() -> None:
    graph = import_graph()
    assert len(graph) > 5
    cycle = find_cycle(graph)
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])
