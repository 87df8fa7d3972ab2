"""Assignment targets (a mixin of the frontend `Visitor`): where `x = ...`, `a[i] += ...`, `v.y = ...`,
`m[i, j] -= ...` and `qd.atomic_add(a[i], ...)` write.

A target resolves to a reference: one memory location (`ScalarRef`: an ndarray element, a field element or a
local variable), a vector/matrix of them (`MatrixRef`), or one element of a `MatrixRef` chosen at run time
(`DynamicRef`, written with selects). One resolution serves assignment, augmented assignment and atomics.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from quadrants.errors import QuadrantsSyntaxError, QuadrantsTypeError
from quadrants.frontend.matrix_ops import COMPONENTS, is_swizzle
from quadrants.frontend.scope import Alias, Fixed, MatVar, Var
from quadrants.frontend.values import Matrix
from quadrants.ir import nodes as ir
from quadrants.types.dtypes import PrimitiveType

if TYPE_CHECKING:
    from quadrants.frontend.visitor import Visitor

ATOMIC_AUG = {"add", "sub", "and", "or", "xor"}


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


Ref = ScalarRef | MatrixRef | DynamicRef


class LValueMixin:
    def resolve_ref(self: Visitor, node: ast.expr) -> Ref | None:
        """The reference `node` denotes, or None for a plain name that is not a variable yet."""
        if isinstance(node, ast.Name):
            _, binding = self.frame.scope.find(node.id)
            if isinstance(binding, Var):
                return self.var_ref(binding)
            if isinstance(binding, MatVar):
                return MatrixRef(binding.shape, [self.var_ref(v) for v in binding.vars])
            if isinstance(binding, Alias):
                return binding.ref  # type: ignore[no-any-return]
            if isinstance(binding, Fixed):
                raise self.error(node, f"cannot assign to {binding.what} {node.id!r}")
            return None
        if isinstance(node, ast.Subscript):
            inner = self._sub_ref(node.value)
            if inner is None:
                base = self.expr(node.value)
                self.reject_captured_array(base, node)
                if not self.is_ndarray(base):
                    raise self.error(node, "only ndarray, field, vector and matrix elements can be assigned through []")
                handle = self.ndarray_handle(base)
                ptrs = self.element_ptrs(handle, node)
                elem_shape = handle.type.elem_shape  # type: ignore[union-attr]
                refs = [ScalarRef(p, p.type.pointee, shared=True) for p in ptrs]  # type: ignore[union-attr]
                return refs[0] if not elem_shape else MatrixRef(elem_shape, refs)
            if not isinstance(inner, MatrixRef):
                raise self.error(node, "a scalar cannot be indexed")
            return self.index_ref(inner, self.expr(node.slice), node)
        if isinstance(node, ast.Attribute):
            inner = self._sub_ref(node.value)
            if isinstance(inner, MatrixRef) and len(inner.shape) == 1 and is_swizzle(node.attr):
                idx = [COMPONENTS[c] for c in node.attr]
                if max(idx) >= inner.shape[0]:
                    raise self.error(node, f"a vector of size {inner.shape[0]} has no component {node.attr!r}")
                return inner.refs[idx[0]] if len(idx) == 1 else MatrixRef((len(idx),), [inner.refs[i] for i in idx])
            raise self.error(node, f"cannot assign to attribute {node.attr!r} in a kernel")
        raise self.error(node, f"cannot assign to {type(node).__name__} in a kernel")

    def _sub_ref(self: Visitor, node: ast.expr) -> Ref | None:
        """The reference of the base of a subscript or attribute target, or None when the base is a value to
        evaluate (an ndarray, a field, a struct member)."""
        if isinstance(node, ast.Name):
            _, binding = self.frame.scope.find(node.id)
            if isinstance(binding, MatVar):
                return MatrixRef(binding.shape, [self.var_ref(v) for v in binding.vars])
            if isinstance(binding, Var):
                return self.var_ref(binding)
            if isinstance(binding, Alias):
                return binding.ref  # type: ignore[no-any-return]
            return None
        if isinstance(node, ast.Subscript):
            return self.resolve_ref(node)
        if isinstance(node, ast.Attribute):
            inner = self._sub_ref(node.value)
            return self.resolve_ref(node) if isinstance(inner, MatrixRef) else None
        return None

    def var_ref(self: Visitor, var: Var) -> ScalarRef:
        shared = self.parallel_id != 0 and var.parallel_id != self.parallel_id
        return ScalarRef(var.ptr, var.dtype, shared, var)

    def index_ref(self: Visitor, ref: MatrixRef, index: Any, node: ast.AST) -> Ref:
        from quadrants.frontend.expressions import is_runtime

        idx = list(index) if isinstance(index, (tuple, list)) else [index]
        if not any(is_runtime(i) for i in idx):
            if len(ref.shape) == 1 or len(idx) == 2:
                flat = idx[0] if len(ref.shape) == 1 else idx[0] * ref.m + idx[1]
                return ref.refs[flat]
            return MatrixRef((ref.m,), ref.refs[idx[0] * ref.m : (idx[0] + 1) * ref.m])
        if len(ref.shape) == 2 and len(idx) == 1:
            raise self.error(node, "a matrix row cannot be assigned with a runtime index; index both dimensions")
        flat = (
            idx[0] if len(ref.shape) == 1 else self.binary("add", self.binary("mul", idx[0], ref.m, node), idx[1], node)
        )
        return DynamicRef(ref, flat)

    # ---- reading and writing references ---------------------------------------------------------------

    def load_ref(self: Visitor, ref: Ref, node: ast.AST) -> Any:
        if isinstance(ref, ScalarRef):
            return self.b.load(ref.ptr)
        if isinstance(ref, MatrixRef):
            return Matrix(ref.shape, [self.b.load(r.ptr) for r in ref.refs])
        return self.select_element(Matrix(ref.base.shape, [self.b.load(r.ptr) for r in ref.base.refs]), ref.index, node)

    def store_ref(self: Visitor, ref: Ref, value: Any, node: ast.AST) -> None:
        loc = self.loc(node)
        if isinstance(ref, ScalarRef):
            if self.as_matrix(value, node) is not None:
                raise QuadrantsTypeError("cannot assign a vector/matrix to a scalar", loc)
            if ref.var is not None:
                self.assign_var(ref.var, value, node)
            else:
                self.b.store(ref.ptr, self.ops.cast(value, ref.dtype, loc))
            return
        if isinstance(ref, MatrixRef):
            m = self.as_matrix(value, node)
            if m is None or len(m.elements) != len(ref.refs):
                got = m.shape if m is not None else "a scalar"
                raise QuadrantsTypeError(f"cannot assign {got} to a vector/matrix of shape {ref.shape}", loc)
            for r, e in zip(ref.refs, m.elements):
                self.store_ref(r, e, node)
            return
        for k, r in enumerate(ref.base.refs):
            hit = self.ops.binary("eq", ref.index, k, loc)
            self.store_ref(r, self.ops.select(hit, value, self.b.load(r.ptr), loc), node)

    def augassign_ref(self: Visitor, ref: Ref, op: str, value: Any, node: ast.AST) -> None:
        if isinstance(ref, ScalarRef):
            if ref.shared and op in ATOMIC_AUG:
                self.atomic_ref(ref, op, value, node)
            else:
                self.store_ref(ref, self.binary(op, self.b.load(ref.ptr), value, node), node)
            return
        if isinstance(ref, MatrixRef):
            m = self.as_matrix(value, node)
            for k, r in enumerate(ref.refs):
                self.augassign_ref(r, op, m.elements[k] if m is not None else value, node)
            return
        self.store_ref(ref, self.binary(op, self.load_ref(ref, node), value, node), node)

    def atomic_ref(self: Visitor, ref: Ref, op: str, value: Any, node: ast.AST) -> Any:
        """`qd.atomic_<op>(target, value)`: the old value(s)."""
        loc = self.loc(node)
        if isinstance(ref, ScalarRef):
            if op in ("and", "or", "xor") and ref.dtype.is_float:
                raise QuadrantsTypeError(f"atomic_{op} needs an integer target, not {ref.dtype}", loc)
            v = self.ops.cast(value, ref.dtype, loc)
            return self.b.emit(ir.AtomicRMW(op=op, ptr=ref.ptr, value=v, type=ref.dtype))
        if isinstance(ref, MatrixRef):
            m = self.as_matrix(value, node)
            return Matrix(
                ref.shape,
                [
                    self.atomic_ref(r, op, m.elements[k] if m is not None else value, node)
                    for k, r in enumerate(ref.refs)
                ],
            )
        raise QuadrantsSyntaxError("atomics need a compile-time index into vectors and matrices", loc)

    def lvalue(self: Visitor, node: ast.expr, what: str) -> Ref:
        ref = self.resolve_ref(node)
        if ref is None:
            raise self.error(node, f"cannot use a non-writable target as the first operand of '{what}'")
        return ref

    def assign_target(self: Visitor, target: ast.expr, value: Any, node: ast.AST, static: bool = False) -> None:
        """`target = value` for targets other than plain names and tuples (those live in the visitor)."""
        ref = self.resolve_ref(target)
        if ref is None:
            raise self.error(target, "cannot assign here")
        self.store_ref(ref, value, node)


__all__ = ["LValueMixin", "ScalarRef", "MatrixRef", "DynamicRef", "QuadrantsSyntaxError"]
