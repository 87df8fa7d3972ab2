"""Forward-mode automatic differentiation: a kernel's typed IR -> its dual kernel (what `qd.ad.FwdMode` runs).

Consumes a kernel straight from the frontend (funcs inlined, `qd.static` unrolled, vectors scalarized; before
the pass pipeline) whose `duals` map the arrays that have a `.dual` to their dual handles; rewrites it in place
so that every statement keeps its primal meaning and is followed by its tangent (the directional derivative
along the seed written into the parameters' `.dual`):

    %1 = load x[i]                  %1 = load x[i] ; %d1 = load x.dual[i]
    %2 = sin %1                     %2 = sin %1 ; %c = cos %1 ; %d2 = %c * %d1
    store y[i], %2                  store y[i], %2 ; store y.dual[i], %d2

A tangent is defined right after its primal, in the same block, so control flow needs nothing special: `if`s,
runtime loops and `while` keep their shape (no adstack: forward mode carries tangents along with values). A
float local variable gets a dual local, written wherever the primal is. The operator rules are the reverse
table's (`derivatives.py`) applied to a unit adjoint: each rule adds `g * d(result)/d(operand)` to an
operand's adjoint, so with `g = 1` the tangent is the sum of those partials times the operands' tangents.
Values without a tangent (integers, constants, arguments, data without a `.dual`) are zero and emit nothing.
"""

from __future__ import annotations

from typing import Any, cast

from quadrants.errors import QuadrantsCompilationError
from quadrants.ir import nodes as ir
from quadrants.passes.autodiff import derivatives
from quadrants.passes.autodiff.emitter import Emitter
from quadrants.passes.autodiff.emitter import is_float as _is_float


def make_dual(kernel: ir.Kernel) -> None:
    """Rewrite `kernel` into its forward-mode (dual) kernel, in place; its text then says `[forward]`."""
    kernel.mode = "forward"
    DualBuilder(kernel).block(kernel.body)


class DualBuilder(Emitter):
    """Walks a kernel's blocks once, in program order, emitting each statement's tangent after it. It offers
    the small emitting interface the derivative rules use (`adjoint.AdjointBuilder` offers the same one)."""

    def __init__(self, kernel: ir.Kernel) -> None:
        self.duals = kernel.duals
        self.tangent: dict[ir.Value, ir.Value] = {}  # float value -> its tangent value
        self.local_dual: dict[ir.Value, ir.Alloca] = {}  # float local variable -> its dual local
        self.cur: list[ir.Stmt] = []
        self._pending: ir.Value | None = None  # the tangent a rule is summing up
        self._result_type: Any = None  # the type of the value whose rule runs

    def block(self, block: ir.Block) -> None:
        outer = self.cur
        self.cur = []
        for s in list(block.stmts):
            self.cur.append(s)
            for inner in s.blocks():
                self.block(inner)
            self._stmt(s)
        block.stmts = self.cur
        self.cur = outer

    def _stmt(self, s: ir.Stmt) -> None:  # noqa: C901 - one case per statement class
        if isinstance(s, ir.Alloca) and _is_float(s.var_type):
            self.local_dual[s] = self.emit(ir.Alloca(var_type=s.var_type, name=f"{s.name}.dual", type=s.type))
        elif isinstance(s, ir.Load):
            slot = self._dual_ptr(s.ptr)
            if slot is not None:
                self.tangent[s] = self.emit(ir.Load(ptr=slot, type=s.type, loc=s.loc))
        elif isinstance(s, ir.Store):
            slot = self._dual_ptr(s.ptr)
            if slot is not None:
                self.emit(ir.Store(ptr=slot, value=self._tangent_or_zero(s.value), loc=s.loc))
        elif isinstance(s, ir.AtomicRMW):
            self._atomic(s)
        elif isinstance(s, ir.Call) and any(v in self.tangent for v in s.args):  # its result would lose it
            raise QuadrantsCompilationError("a qd.real_func call cannot be differentiated (forward mode)", s.loc)
        elif isinstance(s, ir.Unary) and s.op not in derivatives.ZERO_UNARY:
            self._rule(s, derivatives.UNARY.get(s.op))
        elif isinstance(s, ir.Binary) and s.op not in derivatives.ZERO_BINARY:
            self._rule(s, derivatives.BINARY.get(s.op))
        elif isinstance(s, ir.Select):
            self._rule(s, derivatives.select)
        elif isinstance(s, ir.Cast) and not s.bitcast:
            self._rule(s, derivatives.cast)

    def _atomic(self, s: ir.AtomicRMW) -> None:
        slot = self._dual_ptr(s.ptr)
        if slot is None:
            return
        if s.op not in ("add", "sub"):
            raise QuadrantsCompilationError(f"atomic {s.op} on data that has a dual cannot be differentiated "
                                            "(forward mode: only += and -= can)", s.loc)  # fmt: skip
        t = self.tangent.get(s.value)
        if t is not None:
            self.emit(ir.AtomicRMW(op=s.op, ptr=slot, value=t, type=t.type, loc=s.loc))

    def _rule(self, s: ir.Value, rule: Any) -> None:
        if not _is_float(s.type) or not any(v in self.tangent for v in s.operands()):
            return
        if rule is None:
            raise QuadrantsCompilationError(f"the gradient of {getattr(s, 'op', '?')} is not supported "
                                            "(forward mode)", s.loc)  # fmt: skip
        self._pending, self._result_type = None, s.type
        rule(cast(Any, self), s, self.const(1, s.type))  # the rules are typed for the reverse builder
        if self._pending is not None:
            self.tangent[s] = self._pending
        self._pending = None

    def _dual_ptr(self, ptr: ir.Value) -> ir.Value | None:
        """The dual of a pointer: a float local's dual local, or the same element of the array's `.dual`."""
        if isinstance(ptr, ir.Alloca):
            return self.local_dual.get(ptr)
        if isinstance(ptr, ir.ExtPtr) and ptr.arr in self.duals and _is_float(ptr.type.pointee):  # type: ignore[union-attr]
            return self.emit(ir.ExtPtr(arr=self.duals[ptr.arr], indices=ptr.indices, elem=ptr.elem, site=ptr.site,
                                       type=ptr.type, loc=ptr.loc))  # fmt: skip
        return None

    def _tangent_or_zero(self, v: ir.Value) -> ir.Value:
        t = self.tangent.get(v)
        return t if t is not None else self.const(0, v.type)

    # ---- what the derivative rules call -----------------------------------------------------------------

    def acc(self, v: ir.Value, partial: ir.Value) -> None:
        """Rule callback: `partial` is d(result)/d(v) (times the unit adjoint); add `partial * tangent(v)`."""
        t = self.tangent.get(v)
        if t is None:
            return
        piece = self.mul(partial, t)
        if piece.type != self._result_type:  # a cast's operand: its tangent, cast to the cast's type
            piece = self.emit(ir.Cast(value=piece, type=self._result_type))
        self._pending = piece if self._pending is None else self.bin("add", self._pending, piece)

    def active(self, v: Any) -> bool:
        return isinstance(v, ir.Value) and v in self.tangent

    def primal(self, v: Any) -> Any:
        return v  # a tangent sits beside its primal: every forward value is at hand

    def emit(self, s: Any) -> Any:
        self.cur.append(s)
        return s

