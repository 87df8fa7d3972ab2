"""Reverse-mode automatic differentiation: a kernel's typed IR -> its adjoint kernel (`kernel.grad`).

Consumes a kernel straight from the frontend (funcs inlined, `qd.static` unrolled, vectors scalarized; before
the pass pipeline, so atomics are still atomics) whose `grads` map the arrays that have gradients to their grad
handles; rewrites it in place into the adjoint kernel, which the ordinary pipeline then compiles:

    kernel k(...)                        kernel k [reverse](...)
      <declarations>                       <declarations>
      for i in A: body_A                   for i in B: adjoint(body_B)      top-level loops in reverse order
      for j in B: body_B                   for i in A: adjoint(body_A)

A kernel without top-level loops is one serial body, made its own adjoint. A top level that mixes loops and
other statements is refused with Quadrants' message (the kernel-simplicity rule). `adjoint.py` builds each
body's adjoint; `derivatives.py` holds the operators' rules. ARCHITECTURE.md, "Automatic differentiation".
"""

from __future__ import annotations

from quadrants.errors import QuadrantsCompilationError
from quadrants.ir import nodes as ir
from quadrants.passes.autodiff import adstack
from quadrants.passes.autodiff.adjoint import AdjointBuilder
from quadrants.passes.autodiff.cross_iter import check_loop

MIXED = ("Invalid program input for autodiff: Mixed usage of for-loops and statements without looping. \n"
         "Please split them into two kernels and check the documentation for more details:\n"
         "https://docs.taichi-lang.org/docs/differentiable_programming")  # fmt: skip

# Top-level statements that may sit beside loops: declarations and arithmetic on them (loop bounds), locals,
# reads of arrays that have no gradient (a bound read from a field or an ndarray).
_DECLARATIONS = (ir.Const, ir.Arg, ir.GlobalNd, ir.NdShape, ir.Binary, ir.Unary, ir.Cast, ir.Select, ir.ExtPtr,
                 ir.Alloca, ir.Assert)  # fmt: skip


def make_adjoint(kernel: ir.Kernel, independent_loops: bool = False, stack_size: int = 0,
                 frame_limit: int = adstack.CPU_FRAME_LIMIT) -> None:  # fmt: skip
    """Rewrite `kernel` into its reverse-mode adjoint (in place); its text then says `[reverse]`.
    `independent_loops` (the `ad_stack_experimental_enabled` option): differentiate dynamic inner loops, with
    the adstack of `stack_size` slots (`ad_stack_size`; 0: adstack.py's default) where they use the
    enclosing code's locals (adjoint.py, adstack.py), at most `frame_limit` bytes of them per thread."""
    kernel.mode = "reverse"
    body = kernel.body.stmts
    loops = [s for s in body if isinstance(s, ir.RangeFor)]
    if not loops:
        AdjointBuilder(kernel, kernel.body, independent_loops, stack_size=stack_size).run(prologue_at=_leading_declarations(body))
        adstack.check_frame(kernel, frame_limit)
        return
    others = [s for s in body if not isinstance(s, ir.RangeFor) and not _declaration(s, kernel)]
    if others:
        raise QuadrantsCompilationError(MIXED, others[0].loc)
    for loop in loops:
        check_loop(kernel, loop)  # cross-iteration read-after-write through a field: refused (cross_iter.py)
        AdjointBuilder(kernel, loop.body, independent_loops, stack_size=stack_size).run()
    declarations: list[ir.Stmt] = [s for s in body if not isinstance(s, ir.RangeFor)]
    kernel.body.stmts = declarations + list(reversed(loops))
    adstack.check_frame(kernel, frame_limit)


def _declaration(s: ir.Stmt, kernel: ir.Kernel) -> bool:
    if isinstance(s, ir.Load) and isinstance(s.ptr, ir.ExtPtr):  # a read of data without a gradient (a bound)
        return s.ptr.arr not in kernel.grads
    if isinstance(s, (ir.Load, ir.Store)):  # a local variable of the top level, not memory
        return isinstance(s.ptr, ir.Alloca)
    return isinstance(s, _DECLARATIONS)


def _leading_declarations(body: list[ir.Stmt]) -> int:
    n = 0
    while n < len(body) and isinstance(body[n], (ir.Const, ir.Arg, ir.GlobalNd)):
        n += 1
    return n
