"""`qd.linalg.SparseMatrixBuilder` parameters in kernels: `A[i, j] += x` (and `-= x`) appends a triplet.

The builder (quadrants/linalg/sparse_matrix.py) passes four ndarrays: row indices, column indices, values (its
dtype) and a one-element i32 counter. An update is, in IR:

    k = atomic_add(count[0], 1)
    if k < rows.shape[0]:            # past max_num_triplets: dropped here, counted, refused by build()
        rows[k] = i; cols[k] = j; vals[k] = x   (-x for -=)

Triplets of one entry are summed when the matrix is built, so the order threads append in does not matter.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any, NoReturn

from quadrants.errors import QuadrantsSyntaxError, QuadrantsTypeError
from quadrants.frontend.builder import FrontendBuilder
from quadrants.frontend.ndarrays import element_ptrs_at
from quadrants.frontend.values import Matrix
from quadrants.ir import nodes as ir
from quadrants.types.dtypes import PrimitiveType, i32


@dataclass(eq=False)
class Builder:
    rows: ir.Value
    cols: ir.Value
    vals: ir.Value
    count: ir.Value

    def __repr__(self) -> str:
        return "<SparseMatrixBuilder in a kernel>"


@dataclass
class TripletRef:
    """`A[i, j]` of a builder: a target that only `+=` and `-=` may update."""

    builder: Builder
    i: ir.Value
    j: ir.Value
    node: ast.Subscript  # where the entry is named (its bounds-check site)


def bind(rows: ir.Value, cols: ir.Value, vals: ir.Value, count: ir.Value) -> Builder:
    return Builder(rows, cols, vals, count)


def entry_ref(fb: FrontendBuilder, b: Builder, node: ast.Subscript) -> TripletRef:
    index = fb.expr(node.slice)
    if not isinstance(index, tuple) or len(index) != 2:
        raise fb.error(node, "a SparseMatrixBuilder is indexed with two integers: A[i, j]")
    i, j = (_index(fb, x, node) for x in index)
    return TripletRef(b, i, j, node)


def add(fb: FrontendBuilder, ref: TripletRef, op: str, value: Any, node: ast.AST) -> None:
    """`A[i, j] += x` / `-= x`: append the triplet (i, j, ±x)."""
    if op not in ("add", "sub"):
        raise fb.error(node, "a SparseMatrixBuilder entry can only be updated with += or -=", QuadrantsSyntaxError)
    if isinstance(value, Matrix):
        raise fb.error(node, "a SparseMatrixBuilder entry takes a scalar", QuadrantsTypeError)
    loc = fb.loc(node)
    b = ref.builder
    vt = b.vals.type
    assert isinstance(vt, ir.NdType)
    dtype = vt.dtype
    x = fb.ops.cast(value, dtype, loc)
    if op == "sub":
        x = fb.ops.unary("neg", x, loc)
    zero = fb.ops.value(0, loc)
    (count_ptr,) = element_ptrs_at(fb, b.count, [zero], ref.node)
    k = fb.b.emit(ir.AtomicRMW(op="add", ptr=count_ptr, value=fb.ops.value(1, loc), type=i32))
    capacity = fb.b.emit(ir.NdShape(arr=b.rows, dim=0, type=i32))
    branch = fb.b.emit(ir.If(cond=fb.ops.binary("lt", k, capacity, loc)))
    with fb.b.into(branch.then):
        for arr, v in ((b.rows, ref.i), (b.cols, ref.j), (b.vals, x)):
            (p,) = element_ptrs_at(fb, arr, [k], ref.node)
            fb.b.store(p, v)


def refuse_store(fb: FrontendBuilder, node: ast.AST) -> NoReturn:
    raise fb.error(node, "a SparseMatrixBuilder entry can only be updated with += or -= (entries are summed)",
                   QuadrantsSyntaxError)  # fmt: skip


def _index(fb: FrontendBuilder, x: Any, node: ast.AST) -> ir.Value:
    v = fb.ops.value(x, fb.loc(node))
    t = v.type
    if not isinstance(t, PrimitiveType) or not t.is_integral:
        raise fb.error(node, f"SparseMatrixBuilder indices must be integers, not {t}", QuadrantsTypeError)
    return v if t is i32 else fb.b.cast(v, i32)
