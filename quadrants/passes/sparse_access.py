"""Mark the element pointers of sparse-tree fields that are written: those accesses activate their cells.

A field of a tree with pointer, bitmasked or dynamic levels (its `ir.GlobalNd` has `levels`) reads zeros from
an inactive cell and activates the cell when written (codegen/sparse.py). Which of the two an `ir.ExtPtr` is
follows from its uses: a pointer that only loads read is a read; any other use (a store, an atomic, a
reduction, a call's reference) writes, so it activates. Functions' bodies are marked the same way. A kernel
with an activating pointer gets one "sparse_pool" site (no location: the error names the access's bounds site),
the mark that its launches read the error record (an allocation from a full pool fails: codegen/sparse_pool.py).

    before:  %4 = extptr %1[%3] : ptr<f32>          store %4, %5
    after:   %4 = extptr %1[%3] activate : ptr<f32>  store %4, %5
"""

from __future__ import annotations

from quadrants.ir import nodes as ir


def run(kernel: ir.Kernel) -> None:
    marked = [_mark(body) for body in [kernel.body, *(f.body for f in kernel.functions)]]
    if any(marked) and not any(s.kind == "sparse_pool" and s.loc is None for s in kernel.sites):
        kernel.sites.append(ir.Site("sparse_pool", None, "a write to a sparse field"))


def _mark(body: ir.Block) -> bool:
    """Mark the written pointers of `body`; whether there was one."""
    found = False
    for s in ir.walk(body):
        if isinstance(s, ir.Load):
            continue
        ptrs = list(s.operands())
        if isinstance(s, ir.RangeFor):
            ptrs += [r.ptr for r in s.reductions]
        for v in ptrs:
            if isinstance(v, ir.ExtPtr) and isinstance(v.arr, ir.GlobalNd) and v.arr.levels:
                v.activate = found = True
    return found
