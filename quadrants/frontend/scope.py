"""Name bindings inside kernels and funcs.

A name is bound to one of: a `Var` (a mutable local variable, i.e. an IR alloca) or a `MatVar` (a vector/matrix
of them), an `Alias` of a memory location (a template func parameter passed an element), a `Fixed` runtime value that
cannot be reassigned (kernel arguments, loop indices), or any Python object known at compile time (template
arguments, `qd.static` results, modules, tuples of values...). Scopes nest per runtime block, as in Quadrants:
a variable first assigned inside an `if` or a loop body is not visible after it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from quadrants.frontend.source import FunctionSource
from quadrants.frontend.values import Matrix
from quadrants.ir import nodes as ir
from quadrants.types.dtypes import PrimitiveType


@dataclass(eq=False, slots=True)
class Var:
    ptr: ir.Alloca
    dtype: PrimitiveType
    name: str
    parallel_id: int  # the parallel loop it was defined in (0: outside any)


@dataclass(eq=False, slots=True)
class MatVar:
    """A vector/matrix local variable: one scalar variable per element (row-major)."""

    shape: tuple[int, ...]
    vars: list[Var]


@dataclass(eq=False, slots=True)
class Alias:
    """A `qd.template()` func parameter given an ndarray/field element (or a vector component): the name
    refers to that memory, as in Quadrants: reads load it, assignments and `+=` write it (`ref` is a frontend
    `Ref` from refs.py)."""

    ref: Any
    node: Any  # the call argument it came from (locations of reads through a runtime index)


@dataclass(eq=False, slots=True)
class VarSeq:
    """A Python list, tuple or dict of local variables (seqvars.py): `items` maps each index or key to a `Var`,
    a `MatVar` or a nested `VarSeq`."""

    kind: type  # list, tuple or dict
    items: dict[Any, Any]

    def rebuild(self, read: Callable[[Any], Any]) -> Any:
        """The container of `read(item)` for every item."""
        if self.kind is dict:
            return {k: read(v) for k, v in self.items.items()}
        return self.kind(read(v) for v in self.items.values())


@dataclass(eq=False, slots=True)
class Fixed:
    value: Any  # an ir.Value, or a structure of them
    what: str  # "kernel argument", "loop index"


_MISSING = object()


@dataclass(eq=False, slots=True)
class Scope:
    parent: Scope | None = None
    names: dict[str, Any] = field(default_factory=dict)
    depths: dict[str, int] = field(default_factory=dict)  # runtime depth where a name got a non-variable binding

    def find(self, name: str) -> tuple[Scope | None, Any]:
        s: Scope | None = self
        while s is not None:
            v = s.names.get(name, _MISSING)
            if v is not _MISSING:
                return s, v
            s = s.parent
        return None, _MISSING


MISSING = _MISSING


@dataclass(eq=False)
class Frame:
    """One kernel or inlined func being translated."""

    source: FunctionSource
    scope: Scope
    is_kernel: bool
    entry_depth: int  # runtime nesting depth at the call site
    return_annotation: Any = None
    returned: Any = _MISSING
    terminated: bool = False
    closure: dict[str, Any] = field(default_factory=dict)
    real: ir.Function | None = None  # the IR function of a real function (`return` may be anywhere in it)
    template_args: frozenset[str] = frozenset()  # a kernel's template parameters: bound to values, yet immutable

    @property
    def globals(self) -> dict[str, Any]:
        return self.source.fn.__globals__  # type: ignore[no-any-return]


def closure_of(fn: Any) -> dict[str, Any]:
    code = getattr(fn, "__code__", None)
    cells = getattr(fn, "__closure__", None) or ()
    out: dict[str, Any] = {}
    if code is None:
        return out
    for name, cell in zip(code.co_freevars, cells):
        try:
            out[name] = cell.cell_contents
        except ValueError:  # empty cell: referenced before assignment in the enclosing function
            pass
    return out


def bind_loop_index(scope: Any, targets: list[str], coords: list[Any], grouped: bool) -> None:
    """The loop's targets name its coordinates: one vector of them (`for I in qd.grouped(...)`), or one each."""
    if grouped:
        scope.names[targets[0]] = Fixed(Matrix((len(coords),), list(coords)), "loop index")
    else:
        for name, c in zip(targets, coords):
            scope.names[name] = Fixed(c, "loop index")
