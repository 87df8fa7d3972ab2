"""The arguments of a call inside a kernel, evaluated; a `qd.func`'s template parameters get theirs by reference.

Consumes a call's AST; produces its positional and keyword argument values. An argument bound to a template
parameter that names a local variable or an element (`x`, `v`, `a[i]`, `v[1]`) is passed as that location (a
`Var`, `MatVar` or `Alias`), as in Quadrants; any other runtime value given to one is wrapped in `ByValue`.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from typing import Any

from quadrants.errors import QuadrantsCompilationError
from quadrants.frontend.builder import FrontendBuilder
from quadrants.frontend.lvalues import resolve_ref
from quadrants.frontend.scope import Alias, MatVar, Var
from quadrants.frontend.values import Matrix, is_runtime


class ByValue:
    """A runtime value (not a variable or an element) given to a template parameter: readable, not assignable."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value


def call_args(fb: FrontendBuilder, node: ast.Call, by_ref: set[Any] | None = None) -> tuple[list[Any], dict[str, Any]]:
    """A call's evaluated arguments. With `by_ref` (a qd.func's template parameters, by position and name), an
    argument that names a local variable or an element (`x`, `v`, `a[i]`, `v[1]`) is passed as that location
    (a `Var`, `MatVar` or `Alias`)."""
    refs = by_ref or set()
    args: list[Any] = []
    for k, a in enumerate(node.args):
        if isinstance(a, ast.Starred):
            v = fb.expr(a.value)
            if isinstance(v, Iterator):  # consumed by the first compile: a second would see nothing
                raise ValueError(f"{fb.loc(a).short()}: a generator cannot be unpacked into a call in a kernel "
                                 "(it is used up after the first compile); make it a tuple")  # fmt: skip
            args.extend(v.unpack_values() if isinstance(v, Matrix) else v)
        else:
            args.append(_reference_arg(fb, a) if k in refs and len(args) == k else fb.expr(a))
    kwargs: dict[str, Any] = {}
    for kw in node.keywords:
        if kw.arg is None:
            kwargs.update(fb.expr(kw.value))
        else:
            kwargs[kw.arg] = _reference_arg(fb, kw.value) if kw.arg in refs else fb.expr(kw.value)
    return args, kwargs


def _reference_arg(fb: FrontendBuilder, a: ast.expr) -> Any:
    if isinstance(a, ast.Name):
        _, binding = fb.frame.scope.find(a.id)
        if isinstance(binding, (Var, MatVar, Alias)):
            return binding
        return fb.expr(a)
    if isinstance(a, (ast.Subscript, ast.Attribute)) and _rooted_at_name(a):
        try:
            ref = resolve_ref(fb, a)
        except QuadrantsCompilationError:  # not a location (a struct member, an item of a tuple...): a value
            ref = None
        if ref is not None:
            return Alias(ref, a)
    value = fb.expr(a)
    return ByValue(value) if is_runtime(value) else value


def _rooted_at_name(node: ast.expr) -> bool:
    """Attributes and subscripts of a name (`a[i]`, `v[i][0]`, `self.state.pos`)."""
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        node = node.value
    return isinstance(node, ast.Name)
