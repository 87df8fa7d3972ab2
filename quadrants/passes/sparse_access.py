"""Mark the element pointers of sparse-tree fields that are written: those accesses activate their cells.

A field of a tree with pointer, bitmasked or dynamic levels (its `ir.GlobalNd` has `levels`) reads zeros from
an inactive cell and activates the cell when written (codegen/sparse.py). Which of the two an `ir.ExtPtr` is
follows from its uses: a pointer that only loads read is a read; any other use (a store, an atomic, a
reduction, a call's reference) writes, so it activates. Functions' bodies are marked the same way.

    before:  %4 = extptr %1[%3] : ptr<f32>          store %4, %5
    after:   %4 = extptr %1[%3] activate : ptr<f32>  store %4, %5
"""

from __future__ import annotations

from quadrants.ir import nodes as ir


def run(kernel: ir.Kernel) -> None:
    for body in [kernel.body, *(f.body for f in kernel.functions)]:
        _mark(body)


def _mark(body: ir.Block) -> None:
    for s in ir.walk(body):
        if isinstance(s, ir.Load):
            continue
        ptrs = list(s.operands())
        if isinstance(s, ir.RangeFor):
            ptrs += [r.ptr for r in s.reductions]
        for v in ptrs:
            if isinstance(v, ir.ExtPtr) and isinstance(v.arr, ir.GlobalNd) and v.arr.levels:
                v.activate = True
