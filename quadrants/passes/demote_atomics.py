"""Demote atomics outside parallel loops to plain read-modify-write.

Serial code has no other thread to race with, so an atomic whose old value is unused becomes a load, an
operation and a store (which LLVM can keep in registers). The bodies of real functions (`kernel.functions`)
are left alone: a parallel loop may call them, so their atomics stay atomic.

    before:  %5 = atomic add %3, %4 : f32          (in serial code, %5 unused)
    after:   %6 = load %3 : f32
             %7 = add %6, %4 : f32
             store %3, %7
"""

from __future__ import annotations

from quadrants.ir import nodes as ir
from quadrants.passes.uses import use_counts

_BINARY = {"add": "add", "sub": "sub", "min": "min", "max": "max", "and": "and", "or": "or", "xor": "xor",
           "mul": "mul"}  # fmt: skip


def run(kernel: ir.Kernel) -> None:
    uses = use_counts(kernel)
    _block(kernel.body, uses)


def _block(block: ir.Block, uses: dict[int, int]) -> None:
    out: list[ir.Stmt] = []
    for s in block.stmts:
        if isinstance(s, ir.RangeFor) and s.parallel:
            out.append(s)
            continue
        for b in s.blocks():
            _block(b, uses)
        if isinstance(s, ir.AtomicRMW) and s.op in _BINARY and uses.get(id(s), 0) == 0:
            assert isinstance(s.ptr.type, ir.PtrType)
            old = ir.Load(ptr=s.ptr, type=s.ptr.type.pointee, loc=s.loc)
            new = ir.Binary(op=_BINARY[s.op], lhs=old, rhs=s.value, type=s.type, loc=s.loc)
            out += [old, new, ir.Store(ptr=s.ptr, value=new, loc=s.loc)]
            continue
        out.append(s)
    block.stmts = out
