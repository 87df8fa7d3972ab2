"""All knobs in one module: no library code outside quadrants/_config.py reads a QD_* variable (or the CUDA
toolkit's CUDA_HOME / CUDA_PATH) from the environment. The source of quadrants/ and cli/ is scanned with `ast`."""

from __future__ import annotations

import ast
from pathlib import Path

from quadrants import _config

ROOT = Path(__file__).resolve().parent.parent
CONFIG = ROOT / "quadrants" / "_config.py"


def _is_environ(node: ast.AST) -> bool:
    """`os.environ` or a bare `environ`."""
    return (isinstance(node, ast.Attribute) and node.attr == "environ") or (
        isinstance(node, ast.Name) and node.id == "environ"
    )


def _knob(node: ast.AST) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        if node.value.startswith("QD_") or node.value in _config.PROCESS_VARIABLES:
            return node.value
    return None


def env_reads(source: str) -> list[tuple[int, str]]:
    """(line, variable) of every read of a knob from the environment in `source`."""
    found = []
    for node in ast.walk(ast.parse(source)):
        name = None
        if isinstance(node, ast.Call) and node.args:
            f = node.func
            if isinstance(f, ast.Attribute) and f.attr in ("get", "pop", "setdefault") and _is_environ(f.value):
                name = _knob(node.args[0])
            elif isinstance(f, ast.Attribute) and f.attr == "getenv" or isinstance(f, ast.Name) and f.id == "getenv":
                name = _knob(node.args[0])
        elif isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load) and _is_environ(node.value):
            name = _knob(node.slice)
        elif isinstance(node, ast.Compare) and any(_is_environ(c) for c in node.comparators):
            name = _knob(node.left)
        if name is not None:
            found.append((node.lineno, name))
    return found


def test_the_scanner_finds_reads() -> None:
    sample = (
        'import os\nos.environ.get("QD_A")\nos.environ["QD_B"]\n"QD_C" in os.environ\nos.getenv("CUDA_HOME")\n'
        'os.environ["QD_D"] = "1"\nos.environ.get("HOME")\n'
    )
    assert env_reads(sample) == [(2, "QD_A"), (3, "QD_B"), (4, "QD_C"), (5, "CUDA_HOME")]


def test_only_config_reads_knobs() -> None:
    offenders = []
    for folder in ("quadrants", "cli"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            if path == CONFIG:
                continue
            for line, name in env_reads(path.read_text()):
                offenders.append(f"{path.relative_to(ROOT)}:{line}: reads {name}")
    assert not offenders, "read these through quadrants/_config.py:\n" + "\n".join(offenders)


def test_config_reads_only_documented_knobs() -> None:
    documented = {_config.env_name(name) for name in _config.FIELDS} | set(_config.PROCESS_VARIABLES)
    read = {name for _, name in env_reads(CONFIG.read_text())}
    assert read <= documented, sorted(read - documented)
