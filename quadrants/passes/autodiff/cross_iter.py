"""The compile-time check of reverse mode for cross-iteration read-after-write through a field's memory.

Consumes a top-level loop of a kernel about to be differentiated (before `adjoint.py` rewrites it) and the
kernel's `grads`; produces nothing, or raises QuadrantsRuntimeError naming the store's file:line:col. The adjoint treats each
iteration of a top-level loop as independent, so a body that stores into a field with a gradient and loads the
same field at an index of another iteration (`out[i] = out[i - 1] + x[None]`) would get silently wrong
gradients: Quadrants refuses it with this check, and so does this module. Per index axis: both indices depend
on the loop's coordinates and are the same expression (in-place accumulation `out[i] = out[i] + x`), or
neither does (sibling components `out[i, 0] = out[i, 1]`): fine; anything else is refused. Stores or loads
whose indices depend on no loop coordinate, and inner loops' bodies, are not checked (as in Quadrants).
"""

from __future__ import annotations

from typing import Any

from quadrants.errors import QuadrantsRuntimeError
from quadrants.ir import nodes as ir

MESSAGE = ("Cross-iteration read-after-write on the `needs_grad` global field `{name}` at the offload-level loop "
           "body is not supported in reverse-mode autodiff: the cross-iteration adjoint chain is not generated and "
           "the backward pass returns wrong gradients with no diagnostic. Wrap the loop in an outer for-loop in "
           "the kernel so the inner range becomes adstack-eligible, or restructure the kernel so the offload-level "
           "loop has no global field cross-iteration read-after-write. Sibling-component access on a disjoint axis "
           "like `out[i, 0] = out[i, 1]` is allowed; in-place accumulation `out[i] = out[i] + x` (same index on "
           "every axis) is also fine.")  # fmt: skip


def check_loop(kernel: ir.Kernel, loop: ir.RangeFor) -> None:
    stores: dict[ir.Value, list[ir.ExtPtr]] = {}
    loads: dict[ir.Value, list[ir.ExtPtr]] = {}
    _collect(kernel, loop.body, stores, loads)
    for arr, written in stores.items():
        for st in written:
            if not any(_on_loop(i) for i in st.indices):
                continue
            for ld in loads.get(arr, []):
                if any(_on_loop(i) for i in ld.indices) and not _same_slot(st, ld):
                    name = kernel.sites[st.site].detail if 0 <= st.site < len(kernel.sites) else "?"
                    where = f"{st.loc.short()}: " if st.loc is not None else ""  # a RuntimeError, as in Quadrants
                    raise QuadrantsRuntimeError(where + MESSAGE.format(name=name))


def _collect(kernel: ir.Kernel, block: ir.Block, stores: dict[ir.Value, list[ir.ExtPtr]],
             loads: dict[ir.Value, list[ir.ExtPtr]]) -> None:  # fmt: skip
    for s in block.stmts:
        if isinstance(s, (ir.RangeFor, ir.While)):
            continue  # an inner loop: the adstack's business
        if isinstance(s, ir.If):
            _collect(kernel, s.then, stores, loads)
            _collect(kernel, s.orelse, stores, loads)
            continue
        ptr = getattr(s, "ptr", None)
        if not (isinstance(ptr, ir.ExtPtr) and isinstance(ptr.arr, ir.GlobalNd) and ptr.arr in kernel.grads):
            continue
        if isinstance(s, ir.Store):
            stores.setdefault(ptr.arr, []).append(ptr)
        elif isinstance(s, ir.Load):
            loads.setdefault(ptr.arr, []).append(ptr)


def _on_loop(v: Any) -> bool:
    """Whether index `v` depends (through arithmetic) on a loop's index (the loop's value, or a coordinate)."""
    if isinstance(v, (ir.RangeFor, ir.LoopCoord)):
        return True
    if isinstance(v, (ir.Binary, ir.Unary, ir.Select, ir.Cast)):
        return any(_on_loop(o) for o in v.operands())
    return False


def _same_slot(a: ir.ExtPtr, b: ir.ExtPtr) -> bool:
    if len(a.indices) != len(b.indices):
        return False
    for x, y in zip(a.indices, b.indices):
        on_x, on_y = _on_loop(x), _on_loop(y)
        if on_x != on_y or (on_x and not _same_expr(x, y)):
            return False
    return True


def _same_expr(x: Any, y: Any) -> bool:
    """Structural equality of two index expressions (the frontend may emit `i + 1` twice)."""
    if x is y:
        return True
    if type(x) is not type(y):
        return False
    if isinstance(x, ir.Const):
        return bool(x.value == y.value and x.type == y.type)
    if isinstance(x, ir.LoopCoord):
        return bool(x.loop is y.loop and x.dim == y.dim)
    if isinstance(x, (ir.Binary, ir.Unary)) and x.op != y.op:
        return False
    if isinstance(x, (ir.Binary, ir.Unary, ir.Select, ir.Cast)):
        xs, ys = x.operands(), y.operands()
        return len(xs) == len(ys) and all(_same_expr(p, q) for p, q in zip(xs, ys)) and x.type == y.type
    return False
