"""Vector/matrix fields stored as one scalar field per component, each placed on its own.

Quadrants lets a matrix field's components be placed apart: `x.get_scalar_field(i, j)` gives component (i, j)
as a scalar field to place (`qd.root.dense(qd.i, n).place(x.get_scalar_field(0, 0))`, or in a
`qd.BitpackedFields`), and a matrix field of quantized types always works so (its components are bits in
words). Such a field is a `SplitMatrixField`: Python scope reads and writes it component by component, and
kernels index each component's own field (frontend/ndarrays.py, `element_ptrs_at`), so nothing below the
frontend knows about it. A matrix field made with `shape=` keeps its components together (lang/field.py).
"""

from __future__ import annotations

from math import prod
from typing import Any

import numpy as np

from quadrants.errors import QuadrantsRuntimeError
from quadrants.lang import field as fields
from quadrants.lang import program
from quadrants.types.compound import MatrixType
from quadrants.types.quant import QuantType


class SplitMatrixField(fields.MatrixField):
    """A vector/matrix field whose components are scalar fields of their own (`_split`, row-major)."""

    _parts: list[fields.ScalarField]

    def _components(self) -> list[fields.ScalarField]:
        return self._parts

    def get_scalar_field(self, *indices: int) -> fields.ScalarField:
        es = self.element_shape
        if len(indices) != len(es) or not all(0 <= k < n for k, n in zip(indices, es)):
            raise IndexError(f"get_scalar_field{indices}: a component index per dimension of {es}")
        flat = 0
        for k, n in zip(indices, es):
            flat = flat * n + k
        return self._parts[flat]

    def _ready(self) -> None:
        for c in self._parts:
            c._ready()
        check_shapes(self)
        self.shape, self.offset = self._parts[0].shape, self._parts[0].offset

    def __qd_field__(self) -> Any:
        self._ready()
        region, offset, dtype, shape, _ = self._parts[0].__qd_field__()
        return region, offset, dtype, shape, self.element_shape

    def _memory(self) -> np.ndarray:
        self._ready()
        parts = [c._memory() for c in self._parts]
        return np.stack(parts, axis=-1).reshape(self.shape + self.element_shape)

    def to_numpy(self, dtype: Any = None, keep_dims: bool = False, *, copy: bool | None = True) -> np.ndarray:
        if copy is False:
            raise ValueError("copy=False: this field's components are placed apart, so it is not one array")
        out = self._memory()
        if dtype is not None:
            out = out.astype(np.dtype(getattr(dtype, "np_dtype", dtype)))
        if self._vector_like():
            out = out.reshape(self.shape + ((self.n, 1) if keep_dims else (self.n,)))
        return out

    def from_numpy(self, arr: Any) -> None:
        self._ready()
        a = np.asarray(arr).reshape(self.shape + (-1,))
        for k, c in enumerate(self._parts):
            c.from_numpy(np.ascontiguousarray(a[..., k]))

    def fill(self, value: Any) -> None:
        self._ready()
        vals = np.broadcast_to(np.asarray(value), self.element_shape).reshape(-1)
        for c, v in zip(self._parts, vals):
            c.fill(v.item())

    def __getitem__(self, index: Any) -> Any:
        from quadrants.lang.matrix import Matrix

        self._ready()
        vals = [c[index] for c in self._parts]
        return Matrix._wrap(np.array(vals, self._prim.np_dtype).reshape(self.element_shape))

    def __setitem__(self, index: Any, value: Any) -> None:
        self._ready()
        vals = np.broadcast_to(np.asarray(value), self.element_shape).reshape(-1)
        for c, v in zip(self._parts, vals):
            c[index] = v.item()


def check_shapes(f: SplitMatrixField) -> None:
    """Quadrants' error when a matrix field's components were placed with different shapes."""
    shapes = {c.shape for c in f._parts if not c._unplaced}
    if len(shapes) > 1:
        raise QuadrantsRuntimeError(f"Members of the following field have different shapes {sorted(shapes)}:\n{f!r}")


def split(f: fields.MatrixField, dtypes: list[Any] | None = None) -> SplitMatrixField:
    """Turn an unplaced matrix field into one scalar field per component (of `dtypes`, row-major, or all of
    the field's type)."""
    if not f._unplaced or f._place is not None:
        raise QuadrantsRuntimeError("get_scalar_field() of a matrix field placed whole (or made with shape=) is not "
                                    "supported: declare it without shape= and place its components")  # fmt: skip
    n = prod(f.element_shape)
    kinds = dtypes if dtypes is not None else [getattr(f, "_quant", None) or f._prim] * n
    f.__class__ = SplitMatrixField
    assert isinstance(f, SplitMatrixField)
    f._parts = [fields.scalar_unplaced(t) for t in kinds]
    return f


def matrix_field(shape: tuple[int, ...], dtype: Any, field_shape: Any = None, **kw: Any) -> fields.Field:
    """`qd.Matrix.field(n, m, dtype=...)` where `dtype` is quantized or a list (per row, per component) of
    types: a field of one scalar field per component, to be placed apart."""
    n = prod(shape)
    kinds = list(np.array(dtype, dtype=object).reshape(-1)) if isinstance(dtype, (list, tuple)) else [dtype] * n
    if len(kinds) != n:
        raise ValueError(f"a {shape} matrix field needs {n} component types, got {len(kinds)}")
    computes = {k.compute if isinstance(k, QuantType) else program.resolve_dtype(k) for k in kinds}
    if len(computes) != 1:
        raise QuadrantsRuntimeError("Member fields of a matrix field must have the same compute type")
    if field_shape is not None:
        raise QuadrantsRuntimeError("a matrix field of quantized or mixed component types is declared without shape= "
                                    "and its components placed (qd.BitpackedFields, quant_array, or dense levels)")  # fmt: skip
    compute = computes.pop()
    f = fields.MatrixField(compute, None, MatrixType(shape, compute), ())
    return split(f, kinds)
