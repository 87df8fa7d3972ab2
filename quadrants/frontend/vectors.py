"""Building vectors and matrices in kernels: `qd.Vector([...])`, `qd.Matrix([[...]])`, `vec3(x, y, z)`, and a
Python-scope `qd.Vector` met inside a kernel.

Invariant: the elements of a `Matrix` built here are IR values of one dtype (constructors materialize and unify
them, as Quadrants does: `qd.Vector([1, 2.5])` is an f32 vector). Operations on them are in `operators.py`
(element-wise) and `matrix_ops.py` (linear algebra, methods, indexing).
"""

from __future__ import annotations

import ast
from typing import Any

from quadrants.errors import QuadrantsSyntaxError, QuadrantsTypeError
from quadrants.frontend.builder import FrontendBuilder
from quadrants.frontend.values import Matrix
from quadrants.types.compound import MatrixType
from quadrants.types.dtypes import PrimitiveType, to_dtype
from quadrants.types.promotion import promote


def make_matrix(fb: FrontendBuilder, shape: tuple[int, ...], elements: list[Any], dtype: Any, node: ast.AST) -> Matrix:
    """A Matrix of `elements` (row-major), all cast to `dtype`, or to their common type when None."""
    loc = fb.loc(node)
    values = [fb.ops.value(e, loc) for e in elements]
    if dtype is None:
        t = values[0].type
        for v in values[1:]:
            assert isinstance(v.type, PrimitiveType) and isinstance(t, PrimitiveType)
            t = promote(t, v.type)
        dtype = t
    return Matrix(tuple(shape), [fb.b.cast(v, dtype) for v in values])


def as_matrix(fb: FrontendBuilder, v: Any, node: ast.AST) -> Matrix | None:
    """`v` as a frontend Matrix if it is one (or a Python-scope qd.Vector / qd.Matrix), else None."""
    if isinstance(v, Matrix):
        return v
    conv = getattr(v, "__qd_matrix__", None)
    if conv is not None:
        shape, elements = conv()
        return make_matrix(fb, shape, elements, None, node)
    return None


def flatten(fb: FrontendBuilder, value: Any, node: ast.AST) -> list[Any]:
    """The scalars of `value`, row-major: nested lists and tuples and the elements of vectors/matrices in it."""
    if isinstance(value, (list, tuple)):
        return [e for v in value for e in flatten(fb, v, node)]
    m = as_matrix(fb, value, node)
    return list(m.elements) if m is not None else [value]


def construct(fb: FrontendBuilder, mtype: MatrixType, args: list[Any], node: ast.AST) -> Matrix:
    """`vec3(x, y, z)`, `vec3(1)` (broadcast), `vec3(v2, z)` (concatenation), `mat2(a, b, c, d)`,
    `mat2([[a, b], [c, d]])` (rows as lists)."""
    flat = flatten(fb, args, node)
    if len(flat) == 1:
        flat = flat * mtype.size
    if len(flat) != mtype.size:
        raise QuadrantsTypeError(f"{mtype!r} needs {mtype.size} values, got {len(flat)}", fb.loc(node))
    dtype = mtype.resolve(fb.options.default_ip, fb.options.default_fp)
    return make_matrix(fb, mtype.shape, flat, dtype, node)


def vector_from_list(fb: FrontendBuilder, items: Any, dt: Any, node: ast.AST) -> Matrix:
    """`qd.Vector([a, b, c], dt=...)`"""
    elems: list[Any] = []
    for it in items:
        m = as_matrix(fb, it, node)
        elems.extend(m.elements if m is not None else [it])
    return make_matrix(fb, (len(elems),), elems, resolve_dt(fb, dt), node)


def matrix_from_rows(fb: FrontendBuilder, rows: Any, dt: Any, node: ast.AST) -> Matrix:
    """`qd.Matrix([[a, b], [c, d]], dt=...)` (a 1-D list makes a column vector, as in Quadrants)."""
    rows = list(rows)
    if rows and not isinstance(rows[0], (list, tuple)) and as_matrix(fb, rows[0], node) is None:
        return vector_from_list(fb, rows, dt, node)
    grid = []
    for r in rows:
        m = as_matrix(fb, r, node)
        grid.append(list(m.elements) if m is not None else list(r))
    width = len(grid[0]) if grid else 0
    if any(len(r) != width for r in grid):
        raise QuadrantsSyntaxError("matrix rows have different lengths", fb.loc(node))
    return make_matrix(fb, (len(grid), width), [e for r in grid for e in r], resolve_dt(fb, dt), node)


def resolve_dt(fb: FrontendBuilder, dt: Any) -> PrimitiveType | None:
    """A `dt=` argument as a dtype (None stays None: the elements' common type)."""
    if dt is None:
        return None
    return to_dtype(dt, fb.options.default_ip, fb.options.default_fp)
