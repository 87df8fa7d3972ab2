"""How a graph construct is spelled in source: `qd.graph.<name>` (canonical) or the flat `qd.graph_<name>`
(deprecated in Quadrants, which warns at compile time; so does frontend/graph.py, through `warn_if_deprecated`).

Consumes a call's `func` AST node and a construct name (`do_while`, `parallel_context`, `parallel`); produces
booleans and warnings. Pure syntax: the frontend decides what a call is by the object it names, and asks this
module only how it was written. (`quadrants.lang.ast.ast_transformers.graph_api`, Quadrants' import path,
re-exports it.)
"""

from __future__ import annotations

import ast
import warnings

_FLAT = {"do_while": "graph_do_while", "parallel_context": "graph_parallel_context", "parallel": "graph_parallel"}


def _is_graph_namespace(value: ast.expr) -> bool:
    """`graph` in `qd.graph.do_while`, or a bare `graph` (`from quadrants import graph`)."""
    return (isinstance(value, ast.Attribute) and value.attr == "graph") or (
        isinstance(value, ast.Name) and value.id == "graph"
    )


def is_deprecated_spelling(func: ast.expr, name: str) -> bool:
    """`qd.graph_<name>` or a bare `graph_<name>`."""
    flat = _FLAT[name]
    return (isinstance(func, ast.Attribute) and func.attr == flat) or (isinstance(func, ast.Name) and func.id == flat)


def matches(func: ast.expr, name: str) -> bool:
    """Whether `func` spells the construct `name`, either way."""
    if isinstance(func, ast.Attribute) and func.attr == name and _is_graph_namespace(func.value):
        return True
    return is_deprecated_spelling(func, name)


def warn_if_deprecated(func: ast.expr, name: str) -> None:
    if is_deprecated_spelling(func, name):
        warnings.warn(
            f"qd.{_FLAT[name]}() is deprecated and will be removed in a future release; use qd.graph.{name}() "
            "instead.",
            DeprecationWarning,
            stacklevel=2,
        )
