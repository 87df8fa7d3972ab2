"""Lowering of reverse mode's adstack statements (ir.AdStack / AdStackPush / AdStackPop / AdStackTop).

Consumes those statements (made by passes/autodiff/adstack.py); produces, in the function being built, one
stack frame slot per stack, `{i32 count, [capacity x T] values}` (T: the dtype's memory type), allocated at
the function's entry and emptied (count = 0) where the `AdStack` statement is. A push onto a full stack calls
the runtime's error record with the push's site (kind "adstack": the launcher raises "Adstack overflow") and
leaves the kernel, so an overflow is an error, never a gradient read from the wrong slot.
"""

from __future__ import annotations

from typing import Any

from llvmlite import ir as ll

from quadrants.codegen.llvm_types import ERROR_ASSERT, I32, I64, mem
from quadrants.ir import nodes as ir


def _frame(stack: ir.AdStack) -> ll.LiteralStructType:
    return ll.LiteralStructType([I32, ll.ArrayType(mem(stack.var_type), stack.capacity)])


def _count(lw: Any, stack: ir.AdStack) -> ll.Value:
    zero = ll.Constant(I32, 0)
    return lw.b.gep(lw.v(stack), [zero, zero], source_etype=_frame(stack))


def _slot(lw: Any, stack: ir.AdStack, index: ll.Value) -> ll.Value:
    return lw.b.gep(lw.v(stack), [ll.Constant(I32, 0), ll.Constant(I32, 1), index], source_etype=_frame(stack))


def _stack(s: ir.AdStackPush | ir.AdStackPop | ir.AdStackTop) -> ir.AdStack:
    assert isinstance(s.stack, ir.AdStack)
    return s.stack


def lower_adstack(lw: Any, s: ir.AdStack) -> None:
    lw.values[id(s)] = lw.alloca(_frame(s), s.name)
    lw.b.store(ll.Constant(I32, 0), _count(lw, s))


def lower_push(lw: Any, s: ir.AdStackPush) -> None:
    b, st = lw.b, _stack(s)
    count_ptr = _count(lw, st)
    n = b.load(count_ptr, typ=I32)
    with b.if_then(b.icmp_signed(">=", n, ll.Constant(I32, st.capacity)), likely=False):
        lw.fail(ERROR_ASSERT, s.site, b.sext(n, I64), 0, ll.Constant(I64, st.capacity))
    b.store(lw.to_mem(lw.v(s.value), st.var_type), _slot(lw, st, n))
    b.store(b.add(n, ll.Constant(I32, 1)), count_ptr)


def lower_pop(lw: Any, s: ir.AdStackPop) -> None:
    b, st = lw.b, _stack(s)
    count_ptr = _count(lw, st)
    b.store(b.sub(b.load(count_ptr, typ=I32), ll.Constant(I32, 1)), count_ptr)


def lower_top(lw: Any, s: ir.AdStackTop) -> None:
    b, st = lw.b, _stack(s)
    n = b.sub(b.load(_count(lw, st), typ=I32), ll.Constant(I32, 1))
    lw.values[id(s)] = lw.to_reg(b.load(_slot(lw, st, n), typ=mem(st.var_type)), st.var_type)
