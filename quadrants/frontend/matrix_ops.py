"""Vectors and matrices in kernels (a mixin of the frontend `Visitor`).

Every operation expands to scalar IR, element by element, so nothing is allocated at run time. Invariant: the
elements of a `Matrix` built here are IR values of one dtype (constructors materialize and unify them, as
Quadrants does: `qd.Vector([1, 2.5])` is an f32 vector).
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Any

from quadrants.errors import QuadrantsSyntaxError, QuadrantsTypeError
from quadrants.frontend.values import Matrix
from quadrants.types.compound import MatrixType
from quadrants.types.dtypes import PrimitiveType
from quadrants.types.promotion import promote

if TYPE_CHECKING:
    from quadrants.frontend.visitor import Visitor

COMPONENTS = {"x": 0, "y": 1, "z": 2, "w": 3, "r": 0, "g": 1, "b": 2, "a": 3}


def is_swizzle(attr: str) -> bool:
    return 1 <= len(attr) <= 4 and (all(c in "xyzw" for c in attr) or all(c in "rgba" for c in attr))


class MatrixMixin:
    # ---- construction -----------------------------------------------------------------------------------

    def make_matrix(self: Visitor, shape: tuple[int, ...], elements: list[Any], dtype: Any, node: ast.AST) -> Matrix:
        """A Matrix of `elements` (row-major), all cast to `dtype`, or to their common type when None."""
        loc = self.loc(node)
        values = [self.ops.value(e, loc) for e in elements]
        if dtype is None:
            t = values[0].type
            for v in values[1:]:
                assert isinstance(v.type, PrimitiveType) and isinstance(t, PrimitiveType)
                t = promote(t, v.type)
            dtype = t
        return Matrix(tuple(shape), [self.b.cast(v, dtype) for v in values])

    def as_matrix(self: Visitor, v: Any, node: ast.AST) -> Matrix | None:
        """`v` as a frontend Matrix if it is one (or a Python-scope qd.Vector / qd.Matrix), else None."""
        if isinstance(v, Matrix):
            return v
        conv = getattr(v, "__qd_matrix__", None)
        if conv is not None:
            shape, elements = conv()
            return self.make_matrix(shape, elements, None, node)
        return None

    def matrix_dtype(self: Visitor, m: Matrix) -> PrimitiveType:
        t = m.elements[0].type
        assert isinstance(t, PrimitiveType)
        return t

    def construct(self: Visitor, mtype: MatrixType, args: list[Any], node: ast.AST) -> Matrix:
        """`vec3(x, y, z)`, `vec3(1)` (broadcast), `vec3(v2, z)` (concatenation), `mat2(a, b, c, d)`,
        `mat2([[a, b], [c, d]])` (rows as lists)."""
        flat: list[Any] = []

        def add(a: Any) -> None:
            if isinstance(a, (list, tuple)):
                for x in a:
                    add(x)
                return
            m = self.as_matrix(a, node)
            flat.extend(m.elements if m is not None else [a])

        for a in args:
            add(a)
        if len(flat) == 1:
            flat = flat * mtype.size
        if len(flat) != mtype.size:
            raise QuadrantsTypeError(f"{mtype!r} needs {mtype.size} values, got {len(flat)}", self.loc(node))
        dtype = mtype.resolve(self.options.default_ip, self.options.default_fp)
        return self.make_matrix(mtype.shape, flat, dtype, node)

    def vector_from_list(self: Visitor, items: Any, dt: Any, node: ast.AST) -> Matrix:
        """`qd.Vector([a, b, c], dt=...)`"""
        elems: list[Any] = []
        for it in items:
            m = self.as_matrix(it, node)
            elems.extend(m.elements if m is not None else [it])
        return self.make_matrix((len(elems),), elems, self.resolve_dt(dt), node)

    def matrix_from_rows(self: Visitor, rows: Any, dt: Any, node: ast.AST) -> Matrix:
        """`qd.Matrix([[a, b], [c, d]], dt=...)` (a 1-D list makes a column vector, as in Quadrants)."""
        rows = list(rows)
        if rows and not isinstance(rows[0], (list, tuple)) and self.as_matrix(rows[0], node) is None:
            return self.vector_from_list(rows, dt, node)
        grid = []
        for r in rows:
            m = self.as_matrix(r, node)
            grid.append(list(m.elements) if m is not None else list(r))
        width = len(grid[0]) if grid else 0
        if any(len(r) != width for r in grid):
            raise QuadrantsSyntaxError("matrix rows have different lengths", self.loc(node))
        return self.make_matrix((len(grid), width), [e for r in grid for e in r], self.resolve_dt(dt), node)

    def resolve_dt(self: Visitor, dt: Any) -> PrimitiveType | None:
        if dt is None:
            return None
        from quadrants.types.dtypes import to_dtype

        return to_dtype(dt, self.options.default_ip, self.options.default_fp)

    # ---- element-wise and linear algebra --------------------------------------------------------------

    def matrix_binary(self: Visitor, op: str, a: Any, b: Any, node: ast.AST) -> Matrix:
        ma, mb = self.as_matrix(a, node), self.as_matrix(b, node)
        if ma is not None and mb is not None and ma.shape != mb.shape:
            raise QuadrantsTypeError(f"shapes {ma.shape} and {mb.shape} do not match for '{op}'", self.loc(node))
        shape = (ma or mb).shape  # type: ignore[union-attr]
        n = len((ma or mb).elements)  # type: ignore[union-attr]
        out = [
            self.binary(op, ma.elements[i] if ma is not None else a, mb.elements[i] if mb is not None else b, node)
            for i in range(n)
        ]
        return Matrix(shape, out)

    def matrix_unary(self: Visitor, fn: Any, m: Matrix) -> Matrix:
        return Matrix(m.shape, [fn(e) for e in m.elements])

    def matmul(self: Visitor, a: Any, b: Any, node: ast.AST) -> Any:
        ma, mb = self.as_matrix(a, node), self.as_matrix(b, node)
        if ma is None or mb is None:
            if ma is None and mb is None:
                return self.binary("matmul", a, b, node)
            raise QuadrantsTypeError("'@' needs two vectors or matrices", self.loc(node))
        if ma.is_vector and mb.is_vector:
            return self.dot(ma, mb, node)
        a_rows = [ma.elements] if ma.is_vector else ma.rows()
        b_rows = [[e] for e in mb.elements] if mb.is_vector else mb.rows()
        inner = len(b_rows)
        if len(a_rows[0]) != inner:
            raise QuadrantsTypeError(f"cannot multiply shapes {ma.shape} and {mb.shape}", self.loc(node))
        width = len(b_rows[0])
        out = []
        for i in range(len(a_rows)):
            for j in range(width):
                out.append(self.sum_products([(a_rows[i][k], b_rows[k][j]) for k in range(inner)], node))
        if mb.is_vector:
            return Matrix((len(a_rows),), out)
        if ma.is_vector:
            return Matrix((width,), out)
        return Matrix((len(a_rows), width), out)

    def sum_products(self: Visitor, pairs: list[tuple[Any, Any]], node: ast.AST) -> Any:
        total: Any = None
        for x, y in pairs:
            p = self.binary("mul", x, y, node)
            total = p if total is None else self.binary("add", total, p, node)
        return total

    def dot(self: Visitor, a: Matrix, b: Matrix, node: ast.AST) -> Any:
        if a.shape != b.shape:
            raise QuadrantsTypeError(f"dot of shapes {a.shape} and {b.shape}", self.loc(node))
        return self.sum_products(list(zip(a.elements, b.elements)), node)

    def transpose(self: Visitor, m: Matrix) -> Matrix:
        if m.is_vector:
            return Matrix((1, m.n), list(m.elements))
        return Matrix((m.m, m.n), [m.elements[i * m.m + j] for j in range(m.m) for i in range(m.n)])

    def determinant(self: Visitor, m: Matrix, node: ast.AST) -> Any:
        if m.is_vector or m.n != m.m or m.n > 4:
            raise QuadrantsTypeError(f"determinant needs a square matrix up to 4x4, got {m.shape}", self.loc(node))
        return self._det(m.rows(), node)

    def _det(self: Visitor, rows: list[list[Any]], node: ast.AST) -> Any:
        n = len(rows)
        if n == 1:
            return rows[0][0]
        if n == 2:
            return self.binary(
                "sub",
                self.binary("mul", rows[0][0], rows[1][1], node),
                self.binary("mul", rows[0][1], rows[1][0], node),
                node,
            )
        total: Any = None
        for j in range(n):
            minor = [r[:j] + r[j + 1 :] for r in rows[1:]]
            term = self.binary("mul", rows[0][j], self._det(minor, node), node)
            if total is None:
                total = term
            else:
                total = self.binary("add" if j % 2 == 0 else "sub", total, term, node)
        return total

    def inverse(self: Visitor, m: Matrix, node: ast.AST) -> Matrix:
        """Adjugate over determinant, computed in the float type (an integer matrix inverts to floats)."""
        if m.is_vector or m.n != m.m or m.n > 4:
            raise QuadrantsTypeError(f"inverse needs a square matrix up to 4x4, got {m.shape}", self.loc(node))
        t = self.matrix_dtype(m)
        ft = t if t.is_float else self.options.default_fp
        rows = [[self.b.cast(e, ft) for e in r] for r in m.rows()]
        n = m.n
        if n == 1:
            return Matrix((1, 1), [self.binary("truediv", 1.0, rows[0][0], node)])
        inv_det = self.binary("truediv", 1.0, self._det(rows, node), node)
        out: list[Any] = [None] * (n * n)
        for i in range(n):
            for j in range(n):
                minor = [r[:j] + r[j + 1 :] for k, r in enumerate(rows) if k != i]
                cof = self._det(minor, node)
                if (i + j) % 2:
                    cof = self.ops.unary("neg", cof, self.loc(node))
                out[j * n + i] = self.binary("mul", cof, inv_det, node)  # transposed: the adjugate
        return Matrix((n, n), out)

    def reduce_elements(self: Visitor, op: str, m: Matrix, node: ast.AST) -> Any:
        out = m.elements[0]
        for e in m.elements[1:]:
            out = self.binary(op, out, e, node)
        return out

    # ---- methods, attributes, indexing --------------------------------------------------------------

    def matrix_method(
        self: Visitor, m: Matrix, name: str, args: list[Any], kwargs: dict[str, Any], node: ast.Call
    ) -> Any:
        loc = self.loc(node)
        if name == "dot":
            return self.dot(m, self._need_matrix(args[0], node), node)
        if name == "cross":
            o = self._need_matrix(args[0], node)
            a, b = m.elements, o.elements
            if m.shape == o.shape == (2,):
                return self.binary(
                    "sub", self.binary("mul", a[0], b[1], node), self.binary("mul", a[1], b[0], node), node
                )
            if m.shape == o.shape == (3,):
                return Matrix((3,), [
                    self.binary("sub", self.binary("mul", a[(i + 1) % 3], b[(i + 2) % 3], node),
                                self.binary("mul", a[(i + 2) % 3], b[(i + 1) % 3], node), node)
                    for i in range(3)
                ])  # fmt: skip
            raise QuadrantsTypeError("cross needs two 2-D or two 3-D vectors", loc)
        if name == "norm_sqr":
            return self.dot(m, m, node)
        if name in ("norm", "norm_inv"):
            s = self.dot(m, m, node)
            if args or "eps" in kwargs:
                s = self.binary("add", s, args[0] if args else kwargs["eps"], node)
            r = self.ops.unary("sqrt", s, loc)
            return r if name == "norm" else self.binary("truediv", 1.0, r, node)
        if name == "normalized":
            s = self.dot(m, m, node)
            if args or "eps" in kwargs:
                s = self.binary("add", s, args[0] if args else kwargs["eps"], node)
            inv = self.binary("truediv", 1.0, self.ops.unary("sqrt", s, loc), node)
            return self.matrix_binary("mul", m, inv, node)
        if name == "transpose":
            if m.is_vector:
                raise QuadrantsTypeError("`transpose()` cannot apply to a vector. If you want something like "
                                         "`a @ b.transpose()`, write `a.outer_product(b)` instead.", loc)  # fmt: skip
            return self.transpose(m)
        if name == "trace":
            if m.is_vector or m.n != m.m:
                raise QuadrantsTypeError("trace needs a square matrix", loc)
            return self.reduce_elements("add", Matrix((m.n,), [m.at(i, i) for i in range(m.n)]), node)
        if name == "determinant":
            return self.determinant(m, node)
        if name == "inverse":
            return self.inverse(m, node)
        if name == "outer_product":
            o = self._need_matrix(args[0], node)
            return Matrix((m.n, o.n), [self.binary("mul", x, y, node) for x in m.elements for y in o.elements])
        if name in ("sum", "max", "min"):
            return self.reduce_elements({"sum": "add"}.get(name, name), m, node)
        if name in ("any", "all"):
            conds = [self.ops.cond(e, loc) for e in m.elements]
            out = conds[0]
            for c in conds[1:]:
                out = self.ops.binary("or" if name == "any" else "and", out, c, loc)
            return out
        if name == "cast":
            t = self.resolve_dt(args[0])
            return Matrix(m.shape, [self.b.cast(e, t) for e in m.elements])  # type: ignore[arg-type]
        raise QuadrantsSyntaxError(f"vectors and matrices have no method {name!r}", loc)

    def _need_matrix(self: Visitor, v: Any, node: ast.AST) -> Matrix:
        m = self.as_matrix(v, node)
        if m is None:
            raise QuadrantsTypeError("expected a vector or matrix argument", self.loc(node))
        return m

    def matrix_attribute(self: Visitor, m: Matrix, attr: str, node: ast.AST) -> Any:
        if attr == "n":
            return m.n
        if attr == "m":
            return m.m
        if attr == "shape":
            return m.shape
        if m.is_vector and is_swizzle(attr):
            idx = [COMPONENTS[c] for c in attr]
            if max(idx) >= m.n:
                raise QuadrantsSyntaxError(f"a vector of size {m.n} has no component {attr!r}", self.loc(node))
            return m.elements[idx[0]] if len(idx) == 1 else Matrix((len(idx),), [m.elements[i] for i in idx])
        raise QuadrantsSyntaxError(f"vectors and matrices have no attribute {attr!r}", self.loc(node))

    def matrix_index(self: Visitor, m: Matrix, index: Any, node: ast.AST) -> Any:
        idx = list(index) if isinstance(index, (tuple, list)) else [index]
        from quadrants.frontend.expressions import is_runtime

        if not any(is_runtime(i) for i in idx):
            if len(idx) > len(m.shape) or any(not 0 <= int(i) < n for i, n in zip(idx, m.shape)):
                raise QuadrantsTypeError(f"index {tuple(idx)} is out of range for shape {m.shape}", self.loc(node))
            if m.is_vector or len(idx) == 2:
                return m.at(*idx)
            return m.row(idx[0])
        flat = self.flat_index(m, idx, node)
        if not m.is_vector and len(idx) == 1:
            return Matrix((m.m,), [self.select_element(m, self.binary("add", self.binary("mul", flat, m.m, node), j, node), node)
                                   for j in range(m.m)])  # fmt: skip
        return self.select_element(m, flat, node)

    def flat_index(self: Visitor, m: Matrix, idx: list[Any], node: ast.AST) -> Any:
        if m.is_vector or len(idx) == 1:
            return idx[0]
        return self.binary("add", self.binary("mul", idx[0], m.m, node), idx[1], node)

    def select_element(self: Visitor, m: Matrix, flat: Any, node: ast.AST) -> Any:
        """Element `flat` (a runtime index) of `m`, as a chain of selects (out of range gives the last)."""
        loc = self.loc(node)
        out = m.elements[-1]
        for k in range(len(m.elements) - 2, -1, -1):
            hit = self.ops.binary("eq", flat, k, loc)
            out = self.ops.select(hit, m.elements[k], out, loc)
        return out
