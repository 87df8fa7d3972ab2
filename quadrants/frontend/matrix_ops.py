"""Vectors and matrices in kernels: linear algebra (`@`, dot, cross, determinant, inverse, ...), their methods
and attributes (swizzles), and indexing (a runtime index reads through a chain of selects).

Every operation expands to scalar IR, element by element, so nothing is allocated at run time. Construction is
in `vectors.py`, element-wise operators in `operators.py`.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Any

from quadrants.errors import QuadrantsSyntaxError, QuadrantsTypeError
from quadrants.frontend.builder import FrontendBuilder
from quadrants.frontend.operators import binary, matrix_binary
from quadrants.frontend.values import Matrix, is_runtime, matrix_dtype
from quadrants.frontend.vectors import as_matrix, resolve_dt
from quadrants.ir import nodes as ir
from quadrants.types.compound import is_swizzle, swizzle_indices  # noqa: F401  - is_swizzle: lvalues.py imports it here


def swizzle(fb: FrontendBuilder, attr: str, n: int, node: ast.AST) -> list[int]:
    """The components a swizzle selects (types/compound.py), or Quadrants' located QuadrantsSyntaxError."""
    try:
        return swizzle_indices(attr, n)
    except ValueError as e:
        raise QuadrantsSyntaxError(str(e), fb.loc(node)) from None


# ---- linear algebra -----------------------------------------------------------------------------------


def matmul(fb: FrontendBuilder, a: Any, b: Any, node: ast.AST) -> Any:
    ma, mb = as_matrix(fb, a, node), as_matrix(fb, b, node)
    if ma is None or mb is None:
        if ma is None and mb is None:
            return binary(fb, "matmul", a, b, node)
        raise QuadrantsTypeError("'@' needs two vectors or matrices", fb.loc(node))
    if ma.is_vector and mb.is_vector:
        return dot(fb, ma, mb, node)
    a_rows = [ma.elements] if ma.is_vector else ma.rows()
    b_rows = [[e] for e in mb.elements] if mb.is_vector else mb.rows()
    inner = len(b_rows)
    if len(a_rows[0]) != inner:
        raise QuadrantsTypeError(f"cannot multiply shapes {ma.shape} and {mb.shape}", fb.loc(node))
    width = len(b_rows[0])
    out = []
    for i in range(len(a_rows)):
        for j in range(width):
            out.append(sum_products(fb, [(a_rows[i][k], b_rows[k][j]) for k in range(inner)], node))
    if mb.is_vector:
        return Matrix((len(a_rows),), out)
    if ma.is_vector:
        return Matrix((width,), out)
    return Matrix((len(a_rows), width), out)


def sum_products(fb: FrontendBuilder, pairs: list[tuple[Any, Any]], node: ast.AST) -> Any:
    total: Any = None
    for x, y in pairs:
        p = binary(fb, "mul", x, y, node)
        total = p if total is None else binary(fb, "add", total, p, node)
    return total


def dot(fb: FrontendBuilder, a: Matrix, b: Matrix, node: ast.AST) -> Any:
    if a.shape != b.shape:
        raise QuadrantsTypeError(f"dot of shapes {a.shape} and {b.shape}", fb.loc(node))
    return sum_products(fb, list(zip(a.elements, b.elements)), node)


def transpose(m: Matrix) -> Matrix:
    if m.is_vector:
        return Matrix((1, m.n), list(m.elements))
    return Matrix((m.m, m.n), [m.elements[i * m.m + j] for j in range(m.m) for i in range(m.n)])


def determinant(fb: FrontendBuilder, m: Matrix, node: ast.AST) -> Any:
    if m.is_vector or m.n != m.m or m.n > 4:
        raise QuadrantsTypeError(f"determinant needs a square matrix up to 4x4, got {m.shape}", fb.loc(node))
    return _det(fb, m.rows(), node)


def _det(fb: FrontendBuilder, rows: list[list[Any]], node: ast.AST) -> Any:
    n = len(rows)
    if n == 1:
        return rows[0][0]
    if n == 2:
        return binary(
            fb,
            "sub",
            binary(fb, "mul", rows[0][0], rows[1][1], node),
            binary(fb, "mul", rows[0][1], rows[1][0], node),
            node,
        )
    total: Any = None
    for j in range(n):
        minor = [r[:j] + r[j + 1 :] for r in rows[1:]]
        term = binary(fb, "mul", rows[0][j], _det(fb, minor, node), node)
        if total is None:
            total = term
        else:
            total = binary(fb, "add" if j % 2 == 0 else "sub", total, term, node)
    return total


def inverse(fb: FrontendBuilder, m: Matrix, node: ast.AST) -> Matrix:
    """Adjugate over determinant, computed in the float type (an integer matrix inverts to floats)."""
    if m.is_vector or m.n != m.m or m.n > 4:
        raise QuadrantsTypeError(f"inverse needs a square matrix up to 4x4, got {m.shape}", fb.loc(node))
    t = matrix_dtype(m)
    ft = t if t.is_float else fb.options.default_fp
    rows = [[fb.b.cast(e, ft) for e in r] for r in m.rows()]
    n = m.n
    if n == 1:
        return Matrix((1, 1), [binary(fb, "truediv", 1.0, rows[0][0], node)])
    inv_det = binary(fb, "truediv", 1.0, _det(fb, rows, node), node)
    out: list[Any] = [None] * (n * n)
    for i in range(n):
        for j in range(n):
            minor = [r[:j] + r[j + 1 :] for k, r in enumerate(rows) if k != i]
            cof = _det(fb, minor, node)
            if (i + j) % 2:
                cof = fb.ops.unary("neg", cof, fb.loc(node))
            out[j * n + i] = binary(fb, "mul", cof, inv_det, node)  # transposed: the adjugate
    return Matrix((n, n), out)


def reduce_elements(fb: FrontendBuilder, op: str, m: Matrix, node: ast.AST) -> Any:
    out = m.elements[0]
    for e in m.elements[1:]:
        out = binary(fb, op, out, e, node)
    return out


# ---- methods, attributes, indexing --------------------------------------------------------------------


Method = Callable[[FrontendBuilder, Matrix, str, list[Any], dict[str, Any], ast.Call], Any]


def matrix_method(
    fb: FrontendBuilder, m: Matrix, name: str, args: list[Any], kwargs: dict[str, Any], node: ast.Call
) -> Any:
    """`m.name(*args, **kwargs)`: a method of a runtime vector/matrix (the table `METHODS`)."""
    method = METHODS.get(name)
    if method is None:
        raise QuadrantsSyntaxError(f"vectors and matrices have no method {name!r}", fb.loc(node))
    return method(fb, m, name, args, kwargs, node)


def _dot(fb: FrontendBuilder, m: Matrix, name: str, args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> Any:
    return dot(fb, m, _need_matrix(fb, args[0], node), node)


def _cross(fb: FrontendBuilder, m: Matrix, name: str, args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> Any:
    o = _need_matrix(fb, args[0], node)
    a, b = m.elements, o.elements
    if m.shape == o.shape == (2,):
        return binary(fb, "sub", binary(fb, "mul", a[0], b[1], node), binary(fb, "mul", a[1], b[0], node), node)
    if m.shape == o.shape == (3,):
        return Matrix((3,), [
            binary(fb, "sub", binary(fb, "mul", a[(i + 1) % 3], b[(i + 2) % 3], node),
                   binary(fb, "mul", a[(i + 2) % 3], b[(i + 1) % 3], node), node)
            for i in range(3)
        ])  # fmt: skip
    raise QuadrantsTypeError("cross needs two 2-D or two 3-D vectors", fb.loc(node))


def _norm_sqr(
    fb: FrontendBuilder, m: Matrix, name: str, args: list[Any], kwargs: dict[str, Any], node: ast.Call
) -> Any:
    return dot(fb, m, m, node)


def _norm(fb: FrontendBuilder, m: Matrix, name: str, args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> Any:
    """`norm(eps=0)`, `norm_inv(eps=0)` and `normalized(eps=0)`: eps is added under the square root."""
    s = dot(fb, m, m, node)
    if args or "eps" in kwargs:
        s = binary(fb, "add", s, args[0] if args else kwargs["eps"], node)
    r = fb.ops.unary("sqrt", s, fb.loc(node))
    if name == "norm":
        return r
    inv = binary(fb, "truediv", 1.0, r, node)
    return inv if name == "norm_inv" else matrix_binary(fb, "mul", m, inv, node)


def _transpose(
    fb: FrontendBuilder, m: Matrix, name: str, args: list[Any], kwargs: dict[str, Any], node: ast.Call
) -> Any:
    if m.is_vector:
        raise QuadrantsTypeError("`transpose()` cannot apply to a vector. If you want something like "
                                 "`a @ b.transpose()`, write `a.outer_product(b)` instead.", fb.loc(node))  # fmt: skip
    return transpose(m)


def _trace(fb: FrontendBuilder, m: Matrix, name: str, args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> Any:
    if m.is_vector or m.n != m.m:
        raise QuadrantsTypeError(f"trace: expected a square matrix, got shape {m.shape}", fb.loc(node))
    return reduce_elements(fb, "add", Matrix((m.n,), [m.at(i, i) for i in range(m.n)]), node)


def _determinant(
    fb: FrontendBuilder, m: Matrix, name: str, args: list[Any], kwargs: dict[str, Any], node: ast.Call
) -> Any:
    return determinant(fb, m, node)


def _inverse(fb: FrontendBuilder, m: Matrix, name: str, args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> Any:
    return inverse(fb, m, node)


def _outer_product(
    fb: FrontendBuilder, m: Matrix, name: str, args: list[Any], kwargs: dict[str, Any], node: ast.Call
) -> Any:
    o = _need_matrix(fb, args[0], node)
    return Matrix((m.n, o.n), [binary(fb, "mul", x, y, node) for x in m.elements for y in o.elements])


def _reduce(fb: FrontendBuilder, m: Matrix, name: str, args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> Any:
    return reduce_elements(fb, {"sum": "add"}.get(name, name), m, node)


def _any_all(fb: FrontendBuilder, m: Matrix, name: str, args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> Any:
    loc = fb.loc(node)
    conds = [fb.ops.cond(e, loc) for e in m.elements]
    out = conds[0]
    for c in conds[1:]:
        out = fb.ops.binary("or" if name == "any" else "and", out, c, loc)
    return out


def _cast(fb: FrontendBuilder, m: Matrix, name: str, args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> Any:
    t = resolve_dt(fb, args[0])
    return Matrix(m.shape, [fb.b.cast(e, t) for e in m.elements])  # type: ignore[arg-type]


METHODS: dict[str, Method] = {
    "dot": _dot, "cross": _cross, "norm_sqr": _norm_sqr, "norm": _norm, "norm_inv": _norm, "normalized": _norm,
    "transpose": _transpose, "trace": _trace, "determinant": _determinant, "inverse": _inverse,
    "outer_product": _outer_product, "sum": _reduce, "max": _reduce, "min": _reduce, "any": _any_all,
    "all": _any_all, "cast": _cast,
}  # fmt: skip


def _need_matrix(fb: FrontendBuilder, v: Any, node: ast.AST) -> Matrix:
    m = as_matrix(fb, v, node)
    if m is None:
        raise QuadrantsTypeError("expected a vector or matrix argument", fb.loc(node))
    return m


def matrix_attribute(fb: FrontendBuilder, m: Matrix, attr: str, node: ast.AST) -> Any:
    if attr == "n":
        return m.n
    if attr == "m":
        return m.m
    if attr == "shape":
        return m.shape
    if m.is_vector and is_swizzle(attr):
        idx = swizzle(fb, attr, m.n, node)
        return m.elements[idx[0]] if len(idx) == 1 else Matrix((len(idx),), [m.elements[i] for i in idx])
    raise QuadrantsSyntaxError(f"vectors and matrices have no attribute {attr!r}", fb.loc(node))


def index_items(index: Any) -> list[Any]:
    """The indices of a vector/matrix subscript: `m[i, j]`, or a Python-scope vector (`m[J]` with `J` from a
    `qd.static(qd.grouped(...))` loop, as in Quadrants)."""
    if hasattr(index, "__qd_matrix__"):
        return list(index.__qd_matrix__()[1])
    return list(index) if isinstance(index, (tuple, list)) else [index]


def matrix_index(fb: FrontendBuilder, m: Matrix, index: Any, node: ast.AST) -> Any:
    idx = index_items(index)
    if any(isinstance(i, slice) for i in idx):
        return matrix_slice(fb, m, idx, node)
    if len(idx) != len(m.shape):  # as in Quadrants: a matrix takes m[i, j], never m[i] (a row)
        raise QuadrantsSyntaxError(f"Expected {len(m.shape)} indices, got {len(idx)}", fb.loc(node))
    if not any(is_runtime(i) for i in idx):
        if any(not 0 <= int(i) < n for i, n in zip(idx, m.shape)):
            raise QuadrantsTypeError(f"index {tuple(idx)} is out of range for shape {m.shape}", fb.loc(node))
        return m.at(*idx)
    flat = flat_index(fb, m, idx, node)
    if m.clamp:  # an element of a boundary="clamp" ndarray: its row-major index is clamped, as in Quadrants
        loc = fb.loc(node)
        flat = fb.ops.binary("min", fb.ops.binary("max", flat, 0, loc), len(m.elements) - 1, loc)
    else:
        check_index(fb, m.shape, flat, node)
    return select_element(fb, m, flat, node)


def matrix_slice(fb: FrontendBuilder, m: Matrix, idx: list[Any], node: ast.AST) -> Any:
    """`v[1:]`, `T[:3, :3]`, `T[1, 1:3]`: a vector or matrix of the selected elements (an axis given by an
    index drops out, as in Quadrants). Bounds are compile-time; negative ones are refused. The index next
    to a slice may be a runtime value: `R[:, k]` (column k) selects among the candidates."""
    if len(m.shape) == 2 and len(idx) == 2 and any(is_runtime(i) for i in idx):
        return _runtime_line(fb, m, idx, node)
    flat, shape = slice_positions(fb, m.shape, idx, node)
    return Matrix(shape, [m.elements[k] for k in flat])


def _runtime_line(fb: FrontendBuilder, m: Matrix, idx: list[Any], node: ast.AST) -> Matrix:
    """`R[:, k]` / `R[k, 1:]` with `k` known at run time: one select chain per sliced position."""
    axis = 0 if is_runtime(idx[0]) else 1  # the axis the runtime index picks on
    if not isinstance(idx[1 - axis], slice):
        raise QuadrantsSyntaxError("an index next to a slice must be a slice or an index", fb.loc(node))
    positions, _ = slice_positions(fb, (m.shape[1 - axis],), [idx[1 - axis]], node)
    out = []
    for p in positions:
        line = [m.at(k, p) if axis == 0 else m.at(p, k) for k in range(m.shape[axis])]
        out.append(select_element(fb, Matrix((len(line),), line), idx[axis], node))
    return Matrix((len(out),), out)


def slice_positions(fb: FrontendBuilder, shape: tuple[int, ...], idx: list[Any],
                    node: ast.AST) -> tuple[list[int], tuple[int, ...]]:  # fmt: skip
    """The flat positions a slicing index selects in a vector/matrix of `shape`, in row order, and the shape
    of the selection (shared by reads, `matrix_slice`, and assignment targets, `T[:3, 3] = v`)."""
    if len(idx) > len(shape):
        raise QuadrantsTypeError(f"{len(idx)} indices for a value of shape {shape}", fb.loc(node))
    picks: list[list[int]] = []
    kept: list[bool] = []
    for i, n in zip(idx + [slice(None)] * (len(shape) - len(idx)), shape):
        if isinstance(i, slice):
            if any(b is not None and (not isinstance(b, int) or b < 0) for b in (i.start, i.stop)):
                raise QuadrantsSyntaxError("Negative indices are not supported in Quadrants kernels.", fb.loc(node))
            picks.append(list(range(n))[i])
            kept.append(True)
        elif is_runtime(i):
            raise QuadrantsSyntaxError("an index next to a slice must be a compile-time constant", fb.loc(node))
        else:
            if not 0 <= int(i) < n:
                raise QuadrantsTypeError(f"index {i} is out of range for shape {shape}", fb.loc(node))
            picks.append([int(i)])
            kept.append(False)
    if any(not p for p in picks):
        raise QuadrantsSyntaxError("a slice selects no element", fb.loc(node))
    if len(picks) == 1:
        return picks[0], (len(picks[0]),)
    rows, cols = picks
    return [r * shape[1] + c for r in rows for c in cols], tuple(len(p) for p, k in zip(picks, kept) if k)


def flat_index(fb: FrontendBuilder, m: Matrix, idx: list[Any], node: ast.AST) -> Any:
    if m.is_vector or len(idx) == 1:
        return idx[0]
    return binary(fb, "add", binary(fb, "mul", idx[0], m.m, node), idx[1], node)


def check_index(fb: FrontendBuilder, shape: tuple[int, ...], flat: Any, node: ast.AST) -> None:
    """In debug mode, a runtime index into a vector/matrix is checked, as Quadrants does: the flat (row-major)
    index only, so `m[0, 5]` of a 3x3 matrix passes ("Out of bound access to a [3, 3] matrix with index [9]")."""
    if not fb.options.debug:
        return
    loc = fb.loc(node)
    size = 1
    for n in shape:
        size *= n
    ok = fb.ops.binary("and", fb.ops.binary("ge", flat, 0, loc), fb.ops.binary("lt", flat, size, loc), loc)
    site = len(fb.kernel.sites)
    fb.kernel.sites.append(fb.site("matrix_bounds", loc, "[" + ", ".join(map(str, shape)) + "]"))
    fb.b.emit(ir.Assert(cond=ok, site=site, index=fb.ops.value(flat, loc)))


def select_element(fb: FrontendBuilder, m: Matrix, flat: Any, node: ast.AST) -> Any:
    """Element `flat` (a runtime index) of `m`, as a chain of selects (out of range gives the last)."""
    loc = fb.loc(node)
    out = m.elements[-1]
    for k in range(len(m.elements) - 2, -1, -1):
        hit = fb.ops.binary("eq", flat, k, loc)
        out = fb.ops.select(hit, m.elements[k], out, loc)
    return out
