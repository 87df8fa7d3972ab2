"""The adstack: reverse mode through a dynamic inner loop whose iterations read locals of the code around it.

Consumes one inner runtime loop of a body that adjoint.py differentiates, and that body's builder; produces the
loop's instrumentation in the forward replay and its reversed copy in the reverse sweep. The locals involved
are the loop's *outer locals*: the variables (allocas) declared outside the loop that its body reads or writes,
except those it only accumulates into (`s += v`: no iteration needs their value). Each gets a per-thread stack
(`ir.AdStack`) of `capacity` slots, declared (emptied) in the body's prologue:

    forward replay                                reverse sweep
      push u (every outer local u)                  for k in range(b, e):  i = b + e - 1 - k
      for i in range(b, e):                           pop c (every carried local c)
        <body>                                        u = top u (every outer local u): the values at the
        push c (every carried local c)                                         start of iteration i
                                                      <body at i, replayed>    (adjoint.py's child builder)
                                                      <body at i, swept>
                                                    pop u (every outer local u)

A loop without outer locals is reversed the same way, without stacks (a chain through global data,
`out[i] = out[i - 1] + v`, must be swept from its end). A *carried* local is an outer local the body writes. The iterations are swept last to first, each one replayed
first from the outer locals' values at its start, so a loop-carried value may feed a nonlinear op, an index or
an `if` condition: the replay recomputes exactly what the forward pass computed. Adjoints need no stack (a
local's adjoint is a local of the enclosing body, swept in reverse order like its primal). A loop of n
iterations needs n + 1 slots; a push onto a full stack is an error (codegen/adstack.py: "Adstack overflow"),
never a wrong gradient. An inner loop inside the loop is the child builder's: it is instrumented in the replay
the child sweeps, so every stack is balanced within the iteration that uses it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from quadrants.errors import QuadrantsCompilationError, SourceLoc
from quadrants.ir import nodes as ir
from quadrants.types.dtypes import PrimitiveType

if TYPE_CHECKING:
    from quadrants.passes.autodiff.adjoint import AdjointBuilder

DEFAULT_CAPACITY = 1024  # slots of each stack when `ad_stack_size` is 0 (a loop of up to 1023 iterations)
# Bytes of stacks one thread may hold: they live in its frame (a CPU thread has 8 MiB by default; a CUDA thread at
# most 512 KiB of local memory), so a kernel that needs more is refused at compile time, never a crash.
CPU_FRAME_LIMIT = 4 << 20
CUDA_FRAME_LIMIT = 256 << 10


@dataclass
class LoopStacks:
    """The stacks of one inner loop: `outer` (local, its stack) for every outer local, in program order;
    `carried`, the subset the body writes."""

    loop: ir.RangeFor
    outer: list[tuple[ir.Alloca, ir.AdStack]] = field(default_factory=list)
    carried: list[tuple[ir.Alloca, ir.AdStack]] = field(default_factory=list)
    site: int = -1


def outer_locals(loop: ir.RangeFor, skip: set[ir.Alloca]) -> tuple[list[ir.Alloca], set[ir.Alloca]]:
    """The locals declared outside `loop` that its body accesses (in order of first access), but not those in
    `skip`; and those of them it writes."""
    inside = {s for s in ir.walk(loop.body) if isinstance(s, ir.Value)}
    order: dict[ir.Alloca, None] = {}
    written: set[ir.Alloca] = set()
    for s in ir.walk(loop.body):
        ptr = getattr(s, "ptr", None)
        if isinstance(ptr, ir.Alloca) and ptr not in inside and ptr not in skip:
            order[ptr] = None
            if isinstance(s, (ir.Store, ir.AtomicRMW)):
                written.add(ptr)
    return list(order), written


def plan(b: AdjointBuilder, loop: ir.RangeFor, outer: list[ir.Alloca], written: set[ir.Alloca],
         capacity: int) -> LoopStacks:  # fmt: skip
    """Declare the stacks of `loop` in builder `b`'s prologue (emptied once per run of `b`'s body)."""
    cap = capacity or DEFAULT_CAPACITY
    where = f"this loop ran more than {cap - 1} iterations in a reverse-mode kernel: raise ad_stack_size in qd.init"
    b.kernel.sites.append(ir.Site("adstack", loop.loc, where))
    ls = LoopStacks(loop, site=len(b.kernel.sites) - 1)
    for var in outer:
        st = ir.AdStack(var_type=var.var_type, capacity=cap, name=f"stack.{var.name}", type=ir.PtrType(var.var_type),
                        loc=loop.loc)  # fmt: skip
        b.prologue.append(st)
        ls.outer.append((var, st))
        if var in written:
            ls.carried.append((var, st))
    return ls


def check_frame(kernel: ir.Kernel, limit: int) -> None:
    """Refuse a kernel whose stacks need more than `limit` bytes per thread (at its first stack's loop)."""
    stacks = [s for s in ir.walk(kernel.body) if isinstance(s, ir.AdStack)]
    total = sum(4 + s.capacity * max(1, s.var_type.bits // 8) for s in stacks)
    if total > limit:
        raise QuadrantsCompilationError(
            f"the adstacks of this reverse-mode kernel need {total} bytes per thread ({len(stacks)} stacks of "
            f"{stacks[0].capacity} slots), more than the {limit} this backend allows: lower ad_stack_size in "
            "qd.init, or carry fewer locals through dynamic loops", stacks[0].loc)


def _push(var: ir.Alloca, st: ir.AdStack, site: int, loc: SourceLoc | None) -> list[ir.Stmt]:
    value = ir.Load(ptr=var, type=var.var_type, loc=loc)
    return [value, ir.AdStackPush(stack=st, value=value, site=site, loc=loc)]


def instrument(ls: LoopStacks) -> list[ir.Stmt]:
    """Add the pushes to the forward loop (its body's end: the carried locals after each iteration); return the
    statements that go right before it (the outer locals' values at its start)."""
    loc = ls.loop.loc
    for var, st in ls.carried:
        ls.loop.body.stmts += _push(var, st, ls.site, loc)
    before: list[ir.Stmt] = []
    for var, st in ls.outer:
        before += _push(var, st, ls.site, loc)
    return before


def reversed_loop(b: AdjointBuilder, loop: ir.RangeFor, ls: LoopStacks,
                  clone_block: Callable[..., ir.Block]) -> tuple[ir.RangeFor, int]:  # fmt: skip
    """Emit, where builder `b` sweeps, the serial loop that visits `loop`'s iterations last to first, each
    starting with the outer locals restored and then `loop`'s body (a copy, for the child builder to replay and
    sweep); then the pops of the entry values. Returns the emitted loop and the number of statements its
    body starts with before the copy (the index, the coordinates, the pops and restores)."""
    loc = loop.loc
    t = loop.type
    assert isinstance(t, PrimitiveType)
    begin, end = b.primal(loop.begin), b.primal(loop.end)
    rev = ir.RangeFor(begin=begin, end=end, parallel=False, name=loop.name, type=t, loc=loc)
    head: list[ir.Stmt] = []

    def emit(s: Any) -> Any:
        head.append(s)
        return s

    one = emit(ir.Const(value=1, type=t, loc=loc))
    last = emit(ir.Binary(op="sub", lhs=emit(ir.Binary(op="add", lhs=begin, rhs=end, type=t, loc=loc)), rhs=one,
                          type=t, loc=loc))  # fmt: skip
    index = emit(ir.Binary(op="sub", lhs=last, rhs=rev, type=t, loc=loc))
    for _, st in ls.carried:
        emit(ir.AdStackPop(stack=st, loc=loc))
    for var, st in ls.outer:
        emit(ir.Store(ptr=var, value=emit(ir.AdStackTop(stack=st, type=var.var_type, loc=loc)), loc=loc))
    mapping: dict[ir.Value, ir.Value] = {loop: index}  # type: ignore[dict-item]
    mapping.update(_coordinates(loop, index, b, head, loc))
    body = clone_block(loop.body, mapping)
    rev.body = ir.Block(head + body.stmts)
    b.emit(rev)
    for _, st in ls.outer:
        b.emit(ir.AdStackPop(stack=st, loc=loc))
    return rev, len(head)


def _coordinates(loop: ir.RangeFor, index: ir.Value, b: AdjointBuilder, head: list[ir.Stmt],
                 loc: SourceLoc | None) -> dict[ir.Value, ir.Value]:  # fmt: skip
    """A multi-dimensional loop's coordinates (its `LoopCoord`s) at flat `index`, computed at the top of the
    reversed body: row-major over the extents."""
    coords = [s for s in ir.walk(loop.body) if isinstance(s, ir.LoopCoord) and s.loop is loop]
    if not coords:
        return {}
    t = index.type
    extents = [b.primal(e) for e in loop.extents]
    out: dict[ir.Value, ir.Value] = {}
    for c in coords:
        stride: ir.Value | None = None
        for e in extents[c.dim + 1 :]:
            stride = e if stride is None else _bin(head, "mul", stride, e, t, loc)
        q = index if stride is None else _bin(head, "floordiv", index, stride, t, loc)
        v = _bin(head, "mod", q, extents[c.dim], t, loc) if c.dim > 0 else q
        if v.type is not c.type:
            v = ir.Cast(value=v, type=c.type, loc=loc)
            head.append(v)
        out[c] = v
    return out


def _bin(head: list[ir.Stmt], op: str, a: ir.Value, c: ir.Value, t: object, loc: SourceLoc | None) -> ir.Value:
    v = ir.Binary(op=op, lhs=a, rhs=c, type=t, loc=loc)  # type: ignore[arg-type]
    head.append(v)
    return v


__all__ = ["DEFAULT_CAPACITY", "CPU_FRAME_LIMIT", "CUDA_FRAME_LIMIT", "LoopStacks", "check_frame", "outer_locals", "plan", "instrument", "reversed_loop"]
