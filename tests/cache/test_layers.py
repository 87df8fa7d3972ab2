"""The cache only looks up and stores: no module under quadrants/cache imports a compiler stage, the driver or
the language layer, at module level, under TYPE_CHECKING, or inside a function."""

from __future__ import annotations

import ast
from pathlib import Path

import quadrants

FORBIDDEN = ("quadrants.codegen", "quadrants.driver", "quadrants.frontend", "quadrants.passes", "quadrants.lang",
             "quadrants.backends")  # fmt: skip


def imported_modules(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
            names.update(f"{node.module}.{a.name}" for a in node.names)
    return names


def test_no_cache_module_imports_a_later_stage() -> None:
    cache = Path(quadrants.__file__).parent / "cache"
    found = {
        f"{p.name}: {name}"
        for p in sorted(cache.glob("*.py"))
        for name in imported_modules(p)
        if name.startswith(FORBIDDEN) or name in ("quadrants.driver", "quadrants.lang")
    }
    assert not found, f"the cache imports later stages: {sorted(found)}"


def test_the_check_sees_function_level_imports(tmp_path: Path) -> None:
    p = tmp_path / "m.py"
    p.write_text("def f():\n    from quadrants.codegen.cpu import cpu_target\n")
    assert "quadrants.codegen.cpu" in imported_modules(p)
