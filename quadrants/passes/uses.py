"""Use counts of IR values, shared by the passes."""

from __future__ import annotations

from collections import Counter

from quadrants.ir import nodes as ir


def use_counts(kernel: ir.Kernel) -> Counter[int]:
    counts: Counter[int] = Counter()
    for s in ir.walk(kernel.body):
        for v in s.operands():
            counts[id(v)] += 1
    return counts
