"""Python lists, tuples and dicts of local variables: `verts = [a, b, c]` followed by `verts[1] = verts[2]`.

In Quadrants, assigning a list (tuple, dict) to a name makes every item a local variable, so an item can be
assigned later (`lst[k] = v`, `lst[k] += v`, `m[1][0] = v`), also under a runtime `if` or loop, and a name given a
new list inside a runtime block updates those variables. Here a container stays a plain Python object (no
variables, nothing for LLVM to clean up) unless the function needs that: `mutable_names` scans its source once
for names assigned through a subscript or assigned more than once, and only those, given a container whose
leaves are all numbers, runtime scalars or vectors, become a `VarSeq` (scope.py). Reading the name gives the
container of the variables' current values; `lvalues.py` resolves `name[k]` to the item's variable.
"""

from __future__ import annotations

import ast
from collections import Counter
from typing import Any

import numpy as np

from quadrants.frontend.builder import FrontendBuilder
from quadrants.frontend.ops import is_static_number
from quadrants.frontend.scope import MatVar, Var, VarSeq
from quadrants.frontend.source import FunctionSource
from quadrants.frontend.values import Matrix
from quadrants.frontend.vectors import as_matrix
from quadrants.ir import nodes as ir
from quadrants.types.dtypes import PrimitiveType

CONTAINERS = (list, tuple, dict)


def mutable_names(source: FunctionSource) -> frozenset[str]:
    """The names of `source`'s function assigned through a subscript (`lst[k] = ...`, `lst[k] += ...`,
    `qd.atomic_add(lst[k], ...)`) or assigned more than once, less those whose methods it calls (`lst.append`
    works on the Python object: a name whose container is rebuilt on each read would lose it)."""
    if source.mutable_names is not None:
        return source.mutable_names
    counts: Counter[str] = Counter()
    through: set[str] = set()
    methods: set[str] = set()
    todo: list[ast.AST] = list(source.tree.body)
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        if isinstance(node, ast.Assign):
            for t in node.targets:
                _targets(t, counts, through)
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            _targets(node.target, counts, through)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            if isinstance(node.func.value, ast.Name):
                methods.add(node.func.value.id)
            if node.func.attr.startswith("atomic_") and node.args:
                root = _root(node.args[0])
                if root is not None:
                    through.add(root)
        todo.extend(ast.iter_child_nodes(node))
    source.mutable_names = frozenset((through | {n for n, c in counts.items() if c > 1}) - methods)
    return source.mutable_names


def _targets(t: ast.expr, counts: Counter[str], through: set[str]) -> None:
    if isinstance(t, ast.Name):
        counts[t.id] += 1
    elif isinstance(t, (ast.Tuple, ast.List)):
        for e in t.elts:
            _targets(e, counts, through)
    elif isinstance(t, ast.Starred):
        _targets(t.value, counts, through)
    elif isinstance(t, ast.Subscript):
        root = _root(t)
        if root is not None:
            through.add(root)


def _root(node: ast.expr) -> str | None:
    """`m` of `m[1][0]` or `m[0].x`."""
    while isinstance(node, (ast.Subscript, ast.Attribute)):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def wanted(fb: FrontendBuilder, name: str, value: Any) -> bool:
    """Whether `name = value` makes a container of variables."""
    return isinstance(value, CONTAINERS) and name in mutable_names(fb.frame.source) and _plain(value)


def _plain(value: Any) -> bool:
    if isinstance(value, CONTAINERS):
        items = value.values() if isinstance(value, dict) else value
        return len(value) > 0 and all(_plain(v) for v in items)
    if isinstance(value, ir.Value):
        return isinstance(value.type, PrimitiveType)
    return isinstance(value, Matrix) or is_static_number(value)


def make(fb: FrontendBuilder, name: str, value: Any, node: ast.AST) -> VarSeq:
    """A variable for every leaf of `value` (a `_plain` container), named after its place (`verts[1]`)."""
    keys = list(value) if isinstance(value, dict) else range(len(value))
    items: dict[Any, Any] = {}
    for k in keys:
        item, label = value[k], f"{name}[{k!r}]"
        if isinstance(item, CONTAINERS):
            items[k] = make(fb, label, item, node)
            continue
        m = as_matrix(fb, item, node) if isinstance(item, Matrix) else None
        if m is not None:
            items[k] = fb.new_matrix_var(label, m)
        else:
            v = fb.ops.value(item, fb.loc(node))
            items[k] = fb.new_var(label, v, v.type)  # type: ignore[arg-type]
    return VarSeq(type(value), items)


def fits(seq: VarSeq, value: Any) -> bool:
    """Whether `value` can be stored into `seq`'s variables item by item (the same keys, nested alike)."""
    if not isinstance(value, CONTAINERS) or isinstance(value, dict) != (seq.kind is dict) or len(value) != len(seq.items):
        return False
    for k, item in seq.items.items():
        if isinstance(value, dict) and k not in value:
            return False
        v = value[k]
        if isinstance(item, VarSeq) and not fits(item, v):
            return False
        if isinstance(item, Var) and (isinstance(v, (Matrix, *CONTAINERS))):
            return False
        if isinstance(item, MatVar) and not isinstance(v, (Matrix, list, tuple)):
            return False
    return True


def item(fb: FrontendBuilder, seq: VarSeq, index: ast.expr, node: ast.AST) -> Any:
    """The binding of `seq[index]`: a compile-time key (Python lists are not indexed at run time)."""
    key = fb.expr(index)
    if isinstance(key, (ir.Value, Matrix)):
        raise fb.error(index, f"a Python {seq.kind.__name__} is indexed with a compile-time key; this index is a "
                              "runtime value (use a qd.Vector for runtime indexing)")  # fmt: skip
    if isinstance(key, np.integer):
        key = int(key)
    if seq.kind is not dict and isinstance(key, int) and -len(seq.items) <= key < 0:
        key += len(seq.items)
    try:
        return seq.items[key]
    except (KeyError, TypeError):
        raise fb.error(node, f"index {key!r} is out of this {seq.kind.__name__} of {len(seq.items)} items") from None
