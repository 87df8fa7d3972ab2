"""The package's import graph, read from the source (module-level, TYPE_CHECKING and function-level imports alike):
files import one another in circles only inside one room (folder), and the cache, the lowest room with network
code, has no circle at all. A circle across rooms means a lower room reaches up: the language layer, the top, hands
its value types down through registries (types/python_values.py) and hooks (lang/kernel.RECORDER) instead."""

from __future__ import annotations

import ast
from pathlib import Path

import quadrants

ROOT = Path(quadrants.__file__).parent
# Rooms that still use each other (each through a function-level import), with why: keep this list short.
KNOWN_ROOM_CIRCLES = {
    frozenset({"codegen", "runtime"}): "codegen reads runtime/abi.py's records; the loader links the native runtime "
    "in process (ORC) and the emulator names codegen's special registers",
}


def module_files(root: Path) -> dict[str, Path]:
    out = {}
    for p in root.rglob("*.py"):
        parts = p.relative_to(root.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = p
    return out


def import_graph(root: Path) -> dict[str, set[str]]:
    """module -> the package's modules it imports anywhere in its text (`from pkg import mod` counts as mod)."""
    files = module_files(root)
    package = root.name

    def known(name: str) -> str | None:
        while name and name not in files:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {m: set() for m in files}
    for mod, path in files.items():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    here = mod.split(".") if path.name == "__init__.py" else mod.split(".")[:-1]
                    base = ".".join(here[: len(here) - node.level + 1] + ([base] if base else []))
                names = [f"{base}.{a.name}" if f"{base}.{a.name}" in files else base for a in node.names]
            else:
                continue
            for n in names:
                target = known(n) if n.split(".")[0] == package else None
                if target and target != mod:
                    graph[mod].add(target)
    return graph


def circles(graph: dict[str, set[str]]) -> list[set[str]]:
    """The strongly connected components with more than one member (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[set[str]] = []
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                elif w in on_stack:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = set()
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.add(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    found.append(comp)
    return found


def room(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "(package)"


def room_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for a, bs in graph.items():
        out.setdefault(room(a), set())
        for b in bs:
            if room(a) != room(b):
                out[room(a)].add(room(b))
                out.setdefault(room(b), set())
    return out


def test_files_import_in_circles_only_inside_one_room() -> None:
    crossing = [sorted(c) for c in circles(import_graph(ROOT)) if len({room(m) for m in c}) > 1]
    assert not crossing, f"import circles across rooms: {crossing}"


def test_the_cache_has_no_import_circle() -> None:
    inside = [sorted(c) for c in circles(import_graph(ROOT)) if {room(m) for m in c} == {"cache"}]
    assert not inside, f"import circles in quadrants/cache: {inside}"


def test_rooms_use_only_rooms_below_them() -> None:
    found = {frozenset(c) for c in circles(room_graph(import_graph(ROOT)))}
    assert found <= set(KNOWN_ROOM_CIRCLES), f"rooms that use each other: {[sorted(c) for c in found - set(KNOWN_ROOM_CIRCLES)]}"


def test_the_check_sees_a_circle_through_a_function_level_import(tmp_path: Path) -> None:
    pkg = tmp_path / "pkg"
    (pkg / "low").mkdir(parents=True)
    (pkg / "high").mkdir()
    for d in (pkg, pkg / "low", pkg / "high"):
        (d / "__init__.py").write_text("")
    (pkg / "high" / "a.py").write_text("from pkg.low import b\n")
    (pkg / "low" / "b.py").write_text("def f():\n    from pkg.high.a import x\n")
    graph = import_graph(pkg)
    assert circles(graph) == [{"pkg.high.a", "pkg.low.b"}]
    assert circles(room_graph(graph)) == [{"high", "low"}]
