"""Lower atomic read-modify-writes and the reductions of parallel loops (the shared part of every backend).

Consumes `ir.AtomicRMW` / `ir.Reduce` statements and a parallel loop's reductions; produces LLVM atomics
(`atomicrmw`, a `cmpxchg` loop where LLVM has no such operation) and thread-local accumulators. Each backend
combines the accumulators at the end of its tasks with `atomic_update` (codegen/kernel.py, codegen/cuda.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from llvmlite import ir as ll

from quadrants.codegen.llvm_types import mem
from quadrants.ir import nodes as ir
from quadrants.types.dtypes import PrimitiveType

# `fl` is the FnLowering (codegen/lower.py) lowering the function: not imported, lower.py imports this module.


@dataclass
class Slot:
    acc: ll.Value
    reduction: ir.Reduction


def lower_atomic(fl: Any, s: ir.AtomicRMW) -> None:
    if id(s.ptr) in fl.bit_ptrs:  # a quantized element: bits of a word
        from quadrants.codegen import quant

        return quant.atomic(fl, s)
    t = s.type
    assert isinstance(t, PrimitiveType)
    value = fl.to_mem(fl.v(s.value), t)
    if s.op == "cas":
        assert s.expected is not None
        old = _compare_exchange(fl, fl.v(s.ptr), fl.to_mem(fl.v(s.expected), t), value, t)
    else:
        old = atomic_update(fl, s.op, fl.v(s.ptr), value, t)
    fl.values[id(s)] = fl.to_reg(old, t)


def _compare_exchange(fl: Any, ptr: ll.Value, expected: ll.Value, desired: ll.Value, t: PrimitiveType) -> ll.Value:
    """`cmpxchg` (on the bits of a float); returns the old value."""
    b = fl.b
    it = ll.IntType(mem(t).width) if not t.is_float else ll.IntType(t.bits)
    as_int = (lambda v: b.bitcast(v, it)) if t.is_float else (lambda v: v)
    res = b.cmpxchg(ptr, as_int(expected), as_int(desired), "seq_cst", "seq_cst")
    old = b.extract_value(res, 0)
    return b.bitcast(old, mem(t)) if t.is_float else old


def atomic_update(fl: Any, op: str, ptr: ll.Value, value: ll.Value, t: PrimitiveType) -> ll.Value:
    """Atomically combine `value` (memory representation) into `*ptr`; returns the old value."""
    if op == "xchg":
        if not t.is_float:
            return fl.b.atomic_rmw("xchg", ptr, value, "seq_cst")
        it = ll.IntType(t.bits)
        old = fl.b.atomic_rmw("xchg", ptr, fl.b.bitcast(value, it), "seq_cst")
        return fl.b.bitcast(old, mem(t))
    if op == "mul":
        return _cas_loop(fl, ptr, value, t, op)
    if t.is_float:
        name = {"add": "fadd", "sub": "fsub", "min": "fmin", "max": "fmax"}[op]
    elif op in ("min", "max"):
        name = op if t.kind == "int" else "u" + op
    else:
        name = op
    return fl.b.atomic_rmw(name, ptr, value, "seq_cst")


def _cas_loop(fl: Any, ptr: ll.Value, value: ll.Value, t: PrimitiveType, op: str) -> ll.Value:
    b = fl.b
    it = ll.IntType(mem(t).width) if not t.is_float else ll.IntType({16: 16, 32: 32, 64: 64}[t.bits])
    pre = b.block
    first = b.load(ptr, typ=it)
    loop = fl.fn.append_basic_block("cas")
    done = fl.fn.append_basic_block("cas.done")
    b.branch(loop)
    b.position_at_end(loop)
    old = b.phi(it)
    old.add_incoming(first, pre)
    old_v = b.bitcast(old, mem(t)) if t.is_float else old
    new_v = fl.math.binop(op, fl.to_reg(old_v, t), fl.to_reg(value, t), t)
    new_i = b.bitcast(fl.to_mem(new_v, t), it) if t.is_float else fl.to_mem(new_v, t)
    res = b.cmpxchg(ptr, old, new_i, "seq_cst", "seq_cst")
    seen = b.extract_value(res, 0)
    old.add_incoming(seen, loop)
    b.cbranch(b.extract_value(res, 1), done, loop)
    b.position_at_end(done)
    return b.bitcast(old, mem(t)) if t.is_float else old


def start_reductions(fl: Any, loop: ir.RangeFor) -> None:
    """A thread-local accumulator per reduction of a parallel loop, at its identity (`Reduce` updates it)."""
    for r in loop.reductions:
        acc = fl.alloca(mem(r.dtype), "acc")
        fl.b.store(reduction_identity(r.op, r.dtype), acc)
        fl.slots.append(Slot(acc=acc, reduction=r))


def lower_reduce(fl: Any, s: ir.Reduce) -> None:
    slot = fl.slots[s.slot]
    t = slot.reduction.dtype
    acc = fl.to_reg(fl.b.load(slot.acc, typ=mem(t)), t)
    op = "add" if slot.reduction.op == "sub" else slot.reduction.op
    fl.b.store(fl.to_mem(fl.math.binop(op, acc, fl.v(s.value), t), t), slot.acc)


def reduction_identity(op: str, t: PrimitiveType) -> ll.Constant:
    """The start value of a thread-local reduction accumulator."""
    ty = mem(t)
    if t.is_float:
        value = {"min": float("inf"), "max": float("-inf")}.get(op, 0.0)
        return ll.Constant(ty, value)
    lo, hi = t.min_max()
    value = {"min": hi, "max": lo, "and": -1}.get(op, 0)
    if value < 0:
        value &= (1 << ty.width) - 1
    return ll.Constant(ty, value)
