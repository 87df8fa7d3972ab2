"""The compile-time check of a reverse-mode kernel's top-level loops for cross-iteration read-after-write.

Consumes a top-level (parallel) loop of a kernel about to be differentiated and the kernel's `grads`; raises
`QuadrantsCompilationError` at the load when the body stores into an array that has a gradient and loads from
it at an index that differs from the store's on an axis where both depend on a loop index (`out[i] =
out[i - 1] + x`; statements inside its inner loops aside): the adjoint of a parallel loop sweeps each iteration on its own, so the chain from one
iteration to another would be dropped and the gradient silently wrong. Not refused: the same index on every
such axis (`out[i] = out[i] * 2`), sibling components on a constant axis (`out[i, 0] = out[i, 1]`), a load or
store whose index depends on no loop index (`out[i] = out[n] + x`). An inner loop is swept last iteration first (adjoint.py),
so it may chain through global data. As in Quadrants (`OffloadLevelGlobalCrossIterRAWChecker`).
"""

from __future__ import annotations

from typing import Any

from quadrants.errors import QuadrantsCompilationError
from quadrants.ir import nodes as ir


def check(kernel: ir.Kernel, loop: ir.RangeFor) -> None:
    stores: list[ir.ExtPtr] = []
    loads: list[tuple[ir.ExtPtr, ir.Load]] = []
    for s in _outside_inner_loops(loop.body):
        if isinstance(s, (ir.Store, ir.Load)) and isinstance(s.ptr, ir.ExtPtr) and s.ptr.arr in kernel.grads:
            if isinstance(s, ir.Store):
                stores.append(s.ptr)
            else:
                loads.append((s.ptr, s))
    memo: dict[ir.Value, tuple[Any, bool]] = {}
    for st in stores:
        for ld, load in loads:
            if ld.arr is st.arr and ld.elem == st.elem and _cross_iteration(st, ld, memo):
                name = kernel.sites[ld.site].detail if 0 <= ld.site < len(kernel.sites) else "a field"
                raise QuadrantsCompilationError(
                    f"Cross-iteration read-after-write on {name!r}, which has a gradient, in a top-level loop: "
                    "reverse mode sweeps each iteration of a parallel loop on its own, so the adjoint chain from "
                    "one iteration to another is lost (wrong gradients). Nest the loop in an outer for-loop "
                    "(an inner loop is swept last iteration first), or write each iteration's value to an "
                    "element no other iteration reads", load.loc)  # fmt: skip


def _outside_inner_loops(block: ir.Block) -> list[ir.Stmt]:
    """The statements of `block` and its `if`s, not those of its inner loops (swept in order: they may chain)."""
    out: list[ir.Stmt] = []
    for s in block.stmts:
        out.append(s)
        if isinstance(s, ir.If):
            out += _outside_inner_loops(s.then) + _outside_inner_loops(s.orelse)
    return out


def _cross_iteration(st: ir.ExtPtr, ld: ir.ExtPtr, memo: dict[ir.Value, tuple[Any, bool]]) -> bool:
    """Whether some axis indexes the store and the load differently where both depend on a loop index."""
    for a, b in zip(st.indices, ld.indices):
        ka, da = _key(a, memo)
        kb, db = _key(b, memo)
        if da and db and ka != kb:
            return True
    return False


def _key(v: ir.Value, memo: dict[ir.Value, tuple[Any, bool]]) -> tuple[Any, bool]:
    """The structure of index `v` (its operators and constants down to loop indices, locals and other values)
    and whether it depends on a loop index."""
    got = memo.get(v)
    if got is not None:
        return got
    out: tuple[Any, bool]
    if isinstance(v, (ir.RangeFor, ir.LoopCoord)):
        out = (("loop", id(v)), True)
    elif isinstance(v, ir.Const):
        out = (("const", v.value), False)
    elif isinstance(v, (ir.Binary, ir.Unary, ir.Cast, ir.Select)):
        parts = [_key(o, memo) for o in v.operands()]
        op = getattr(v, "op", type(v).__name__)
        out = ((op, *(p[0] for p in parts)), any(p[1] for p in parts))
    else:
        out = (("value", id(v)), False)
    memo[v] = out
    return out
