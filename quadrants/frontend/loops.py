"""Loops (a mixin of the frontend `Visitor`): `range`, `qd.ndrange`, `qd.grouped`, loops over an ndarray's
index space, `qd.static` unrolling, and `while`.

A `for` at the kernel's top level (through static ifs, static fors and inlined funcs, as in Quadrants) becomes a
parallel `RangeFor`; every other loop is serial. Multi-dimensional loops are flattened to one range whose
index is split back into coordinates at the top of the body.
"""

from __future__ import annotations

import ast
import builtins
import copy
from typing import TYPE_CHECKING, Any

from quadrants._logging import warn
from quadrants.errors import QuadrantsTypeError
from quadrants.frontend.expressions import is_runtime
from quadrants.frontend.intrinsic_calls import Grouped
from quadrants.frontend.intrinsics import _NdRange
from quadrants.frontend.scope import Alias, Fixed, MatVar
from quadrants.frontend.values import Matrix
from quadrants.ir import nodes as ir
from quadrants.types.dtypes import PrimitiveType, i32, i64

if TYPE_CHECKING:
    from quadrants.frontend.visitor import Visitor


class LoopMixin:
    loop_config: dict[str, Any] | None  # qd.loop_config(...) for the next loop (set by calls.py, read here)
    def visit_For(self: Visitor, node: ast.For) -> None:
        if node.orelse:
            raise self.error(node, "for ... else is not supported in kernels")
        chosen = node.iter
        while isinstance(chosen, ast.IfExp) and self.is_static_call(chosen.test):  # `A if qd.static(c) else B`
            chosen = chosen.body if self.expr(chosen.test) else chosen.orelse
        if chosen is not node.iter:
            node = copy.copy(node)  # the chosen iterable, without changing the user's AST
            node.iter = chosen
        it_node = node.iter
        if isinstance(it_node, ast.Call):
            fn = self.expr(it_node.func)
            if fn is builtins.range:
                args, kwargs = self.call_args(it_node)
                if kwargs or not 1 <= len(args) <= 2:
                    raise self.error(
                        it_node, "range(a, b, step) is not supported in kernels; use range(n) or range(a, b)"
                    )
                begin, end = (0, args[0]) if len(args) == 1 else args
                self.range_loop(node, [(begin, end)], grouped=False)
                return
            if getattr(fn, "__qd_intrinsic__", None) == "static":
                self.static_for(node)
                return
        it = self.expr(it_node)
        grouped = isinstance(it, Grouped)
        if grouped:
            it = it.inner
        if isinstance(it, _NdRange):
            self.range_loop(node, it.bounds, grouped)
        elif self.is_ndarray(it):
            shape = self.ndarray_attribute(self.ndarray_handle(it), "shape", it_node)
            self.range_loop(node, [(0, s) for s in shape], grouped)
        else:
            raise self.error(
                it_node,
                f"cannot loop over {type(it).__name__} in a kernel; use range(), qd.ndrange(), qd.grouped() "
                "or qd.static()",
            )

    # ---- runtime loops ----------------------------------------------------------------------------------

    def _bound(self: Visitor, v: Any, node: ast.AST) -> Any:
        """A loop bound: a Python int, or an integer IR value (not yet cast to the loop's type)."""
        if not is_runtime(v):
            if isinstance(v, float) and v != int(v):
                raise self.error(node, "loop bounds must be integers: every argument of ndrange should be an "
                                 "integer scalar or a tuple/list of (int, int)", QuadrantsTypeError)  # fmt: skip
            return int(v)
        val = self.ops.value(v, self.loc(node))
        assert isinstance(val.type, PrimitiveType)
        if val.type.is_float:
            raise self.error(node, f"loop bounds must be integers, not {val.type}: every argument of ndrange should be "
                             "an integer scalar or a tuple/list of (int, int)", QuadrantsTypeError)  # fmt: skip
        return val

    def _as_index(self: Visitor, v: Any, t: PrimitiveType, loc: Any) -> Any:
        """A bound as a value of the index type `t` (Python ints stay Python ints: they fold)."""
        return v if not is_runtime(v) else self.ops.cast(v, t, loc)

    def _index_value(self: Visitor, v: Any, t: PrimitiveType, loc: Any) -> ir.Value:
        """An IR value of the index type `t`."""
        if is_runtime(v):
            return self.ops.cast(v, t, loc)
        with self.b.at(loc):
            return self.b.const(int(v), t)

    def range_loop(self: Visitor, node: ast.For, bounds: list[tuple[Any, Any]], grouped: bool) -> None:
        it_node = node.iter
        loc = self.loc(it_node)
        raw = [(self._bound(b, it_node), self._bound(e, it_node)) for b, e in bounds]
        # Indices are i32 as in Quadrants, unless a bound is 64-bit (or a constant beyond i32): then i64, so a
        # loop over more than 2**31 elements runs them all. The flat index of a multi-dimensional loop is i64
        # unless its extents are constants whose product fits in i32.
        dim_types = [i64 if _wide(b) or _wide(e) else i32 for b, e in raw]
        begins = [self._as_index(b, t, loc) for (b, _), t in zip(raw, dim_types)]
        ends = [self._as_index(e, t, loc) for (_, e), t in zip(raw, dim_types)]
        extents: list[Any] = []
        if len(bounds) == 1:
            flat_t = dim_types[0]
            begin_v, end_v = self._index_value(begins[0], flat_t, loc), self._index_value(ends[0], flat_t, loc)
        else:
            for b0, e0 in zip(begins, ends):
                extents.append(self.binary("max", self.binary("sub", e0, b0, it_node) if b0 != 0 else e0, 0, it_node))
            flat_t = i64 if any(is_runtime(e) for e in extents) or _product(extents) >= 2**31 else i32
            extents = [self._as_index(e, flat_t, loc) for e in extents]
            total: Any = None
            for ext in extents:  # in the flat type: the product of i32 extents may not fit in i32
                total = ext if total is None else self.binary("mul", total, ext, it_node)
            begin_v, end_v = self._index_value(0, flat_t, loc), self._index_value(total, flat_t, loc)
        targets = _target_names(node.target, self)
        if grouped and len(targets) != 1:
            raise self.error(node.target, "qd.grouped(...) binds the whole index to a single name")
        if not grouped and len(targets) != len(bounds):
            raise self.error(node.target, "Ndrange for loop with number of the loop variables not equal to the "
                             f"dimension of the ndrange is not supported ({len(bounds)} dimension(s), "
                             f"{len(targets)} name(s))")  # fmt: skip

        config, self.loop_config = self.loop_config or {}, None
        serialize = config.get("serialize") or config.get("parallelize") == 1
        parallel = self.runtime_depth == 0 and self.parallel_id == 0 and not serialize
        ext_values = tuple(self._index_value(e, flat_t, loc) for e in extents)
        loop = self.b.emit(
            ir.RangeFor(
                begin=begin_v, end=end_v, parallel=parallel, type=flat_t, name=",".join(targets), extents=ext_values,
                block_dim=int(config.get("block_dim") or 0) if parallel else 0,
            )
        )
        scope = self.new_scope()
        self.runtime_depth += 1
        self.loops.append("parallel" if parallel else "serial")
        saved_pid = self.parallel_id
        if parallel:
            self._next_parallel_id += 1
            self.parallel_id = self._next_parallel_id
        try:
            with self.b.into(loop.body):
                coords = [loop] if len(bounds) == 1 else self._coords(loop, begins, dim_types, it_node)
                if grouped:
                    scope.names[targets[0]] = Fixed(Matrix((len(coords),), list(coords)), "loop index")
                else:
                    for name, c in zip(targets, coords):
                        scope.names[name] = Fixed(c, "loop index")
                self.stmts(node.body)
        finally:
            self.parallel_id = saved_pid
            self.loops.pop()
            self.runtime_depth -= 1
            self.pop_scope(scope)

    def _coords(self: Visitor, loop: ir.RangeFor, begins: list[Any], types: list[PrimitiveType], node: ast.AST) -> list[Any]:
        coords: list[Any] = []
        for k, b0 in enumerate(begins):
            c = self.b.emit(ir.LoopCoord(loop=loop, dim=k, type=types[k]))
            coords.append(self.binary("add", c, b0, node) if (is_runtime(b0) or b0) else c)
        return coords

    # ---- compile-time unrolling -------------------------------------------------------------------------

    def static_for(self: Visitor, node: ast.For) -> None:
        call = node.iter
        assert isinstance(call, ast.Call)
        if len(call.args) != 1:
            raise self.error(call, "for ... in qd.static(...) takes one iterable")
        arg = call.args[0]
        bound = self.frame.scope.find(arg.id)[1] if isinstance(arg, ast.Name) else None
        if isinstance(bound, (MatVar, Fixed, Alias)):  # unrolling over the elements of a runtime vector
            m = self.as_matrix(self.read(bound), arg)
            if m is None:
                raise self.error(arg, "qd.static(...) needs a compile-time iterable or a vector")
            items = m.unpack_values()
        else:
            items = list(self.static_eval(arg))
        if len(items) > self.options.unrolling_limit:
            warn(
                f"{self.loc(call).short()}: qd.static loop unrolls {len(items)} iterations "
                f"(unrolling_limit={self.options.unrolling_limit})",
                tag="frontend",
            )
        self.loops.append("static")
        try:
            for item in items:
                scope = self.new_scope()
                try:
                    self.assign(node.target, item, node, static=True)
                    self.stmts(node.body)
                finally:
                    self.pop_scope(scope)
                if self.frame.terminated:
                    break
        finally:
            self.loops.pop()

    # ---- while ------------------------------------------------------------------------------------------

    def visit_While(self: Visitor, node: ast.While) -> None:
        if node.orelse:
            raise self.error(node, "while ... else is not supported in kernels")
        loop = self.b.emit(ir.While())
        scope = self.new_scope()
        self.runtime_depth += 1
        self.loops.append("while")
        try:
            with self.b.into(loop.body):
                cond = self.expr(node.test)
                if is_runtime(cond):
                    c = self.ops.unary("lnot", self.ops.cond(cond, self.loc(node.test)), self.loc(node.test))
                    stop = self.b.emit(ir.If(cond=c))
                    stop.then.stmts.append(ir.Break(loc=self.b.loc))
                elif not cond:
                    self.b.emit(ir.Break())
                self.stmts(node.body)
        finally:
            self.loops.pop()
            self.runtime_depth -= 1
            self.pop_scope(scope)


def _target_names(target: ast.expr, v: Visitor) -> list[str]:
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, (ast.Tuple, ast.List)) and all(isinstance(e, ast.Name) for e in target.elts):
        return [e.id for e in target.elts]  # type: ignore[attr-defined]
    raise v.error(target, "loop targets must be names")


def _wide(bound: Any) -> bool:
    """A loop bound that needs a 64-bit index: a 64-bit (or u32) integer value, or a constant beyond i32."""
    if isinstance(bound, int):
        return not -(2**31) <= bound < 2**31
    t = bound.type
    return t.bits == 64 or (t.bits == 32 and t.kind == "uint")


def _product(values: list[int]) -> int:
    out = 1
    for v in values:
        out *= v
    return out
