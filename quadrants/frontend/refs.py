"""References to memory, and reading them: what an assignment target, an element alias or a variable denotes.

A reference is one memory location (`ScalarRef`: an ndarray element, a field element or a local variable), a
vector/matrix of them (`MatrixRef`), or one element of a `MatrixRef` chosen at run time (`DynamicRef`, written
with selects), or a vector of those (`LineRef`). `lvalues.py` resolves targets to references and writes them; `read` gives a name binding's value.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any

from quadrants.frontend.builder import FrontendBuilder
from quadrants.frontend.matrix_ops import select_element
from quadrants.frontend.scope import Alias, Fixed, MatVar, Var, VarSeq
from quadrants.frontend.values import Matrix
from quadrants.ir import nodes as ir
from quadrants.types.dtypes import PrimitiveType


@dataclass
class ScalarRef:
    ptr: ir.Value
    dtype: PrimitiveType
    shared: bool  # other threads may update it: `+=` etc. are atomic
    var: Var | None = None


@dataclass
class MatrixRef:
    shape: tuple[int, ...]
    refs: list[ScalarRef]

    @property
    def m(self) -> int:
        return self.shape[1] if len(self.shape) == 2 else 1


@dataclass
class DynamicRef:
    base: MatrixRef
    index: Any  # runtime flat index into base.refs


@dataclass
class LineRef:
    """`M[:, n]` / `M[n, 1:]` as a target, `n` known at run time: per selected position, the element `n`
    picks on its line."""

    shape: tuple[int, ...]
    items: list[DynamicRef]


Ref = ScalarRef | MatrixRef | DynamicRef | LineRef


def var_ref(fb: FrontendBuilder, var: Var) -> ScalarRef:
    shared = fb.parallel_id != 0 and var.parallel_id != fb.parallel_id
    return ScalarRef(var.ptr, var.dtype, shared, var)


def load_ref(fb: FrontendBuilder, ref: Ref, node: ast.AST) -> Any:
    if isinstance(ref, ScalarRef):
        return fb.b.load(ref.ptr)
    if isinstance(ref, MatrixRef):
        return Matrix(ref.shape, [fb.b.load(r.ptr) for r in ref.refs])
    if isinstance(ref, LineRef):
        return Matrix(ref.shape, [load_ref(fb, r, node) for r in ref.items])
    return select_element(fb, Matrix(ref.base.shape, [fb.b.load(r.ptr) for r in ref.base.refs]), ref.index, node)


def read(fb: FrontendBuilder, binding: Any) -> Any:
    """The value a name's binding has when read in an expression."""
    if isinstance(binding, Var):
        return fb.b.load(binding.ptr)
    if isinstance(binding, MatVar):
        return Matrix(binding.shape, [fb.b.load(v.ptr) for v in binding.vars])
    if isinstance(binding, Fixed):
        return binding.value
    if isinstance(binding, Alias):
        return load_ref(fb, binding.ref, binding.node)
    if isinstance(binding, VarSeq):
        return binding.rebuild(lambda item: read(fb, item))
    return binding
