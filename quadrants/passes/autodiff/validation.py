"""The global-data-access-rule check of `qd.ad.Tape(validation=True)` under `qd.init(debug=True)`.

Consumes a kernel straight from the frontend whose `checkbits` map the handles of fields that have a gradient
to their check-bit fields (u8, same shape; lang/validation.py allocates them and clears them on tape entry);
rewrites it in place into the validation kernel, the primal plus the checks:

    %1 = load x[i]                  %1 = load x[i] ; store x.checkbit[i], 1        (x[i] was read)
    store x[j], %v                  %b = load x.checkbit[j] ; assert %b == 0       (not written after a read)
                                    store x[j], %v

A write (store or atomic) into an element read before, in this launch or an earlier one of the tape, stops the
kernel with a QuadrantsAssertionError at the write's subscript: the adjoint of such a program would be wrong
(the rule of ARCHITECTURE.md, "Automatic differentiation"). Fields only, as in Quadrants.
"""

from __future__ import annotations

from quadrants.ir import nodes as ir
from quadrants.types.dtypes import u1, u8

MESSAGE = ("(validation) Breaks the global data access rule: this element of a field that has a gradient is "
           "written after it was read (write it once before reading it, or keep one field per time step)")  # fmt: skip


def make_validation(kernel: ir.Kernel) -> None:
    """Rewrite `kernel` into its validation kernel, in place; its text then says `[validation]`."""
    kernel.mode = "validation"
    used = {v for s in ir.walk(kernel.body) for v in s.operands()}
    _block(kernel, kernel.body, used)


def _block(kernel: ir.Kernel, block: ir.Block, used: set[ir.Value]) -> None:
    out: list[ir.Stmt] = []
    for s in block.stmts:
        for inner in s.blocks():
            _block(kernel, inner, used)
        ptr = getattr(s, "ptr", None)
        bit = kernel.checkbits.get(ptr.arr) if isinstance(ptr, ir.ExtPtr) else None
        if bit is None or not isinstance(ptr, ir.ExtPtr):
            out.append(s)
            continue
        at = ir.ExtPtr(arr=bit, indices=ptr.indices, elem=ptr.elem, site=ptr.site, type=ir.PtrType(u8), loc=s.loc)
        if isinstance(s, ir.Load) and s not in used:  # read for nothing (`v[i][1] = ...` reads all of v[i])
            out.append(s)
        elif isinstance(s, ir.Load):
            one = ir.Const(value=1, type=u8, loc=s.loc)
            out += [s, at, one, ir.Store(ptr=at, value=one, loc=s.loc)]
        elif isinstance(s, (ir.Store, ir.AtomicRMW)):
            seen = ir.Load(ptr=at, type=u8, loc=s.loc)
            zero = ir.Const(value=0, type=u8, loc=s.loc)
            ok = ir.Binary(op="eq", lhs=seen, rhs=zero, type=u1, loc=s.loc)
            out += [at, seen, zero, ok, ir.Assert(cond=ok, site=_site(kernel, ptr), loc=s.loc), s]
        else:
            out.append(s)
    block.stmts = out


def _site(kernel: ir.Kernel, ptr: ir.ExtPtr) -> int:
    """An assert site at the write's subscript (where its bounds-check site points)."""
    base = kernel.sites[ptr.site] if 0 <= ptr.site < len(kernel.sites) else None
    site = ir.Site("assert", base.loc if base else ptr.loc, MESSAGE, base.owner if base else "",
                   base.first_line if base else 0)  # fmt: skip
    kernel.sites.append(site)
    return len(kernel.sites) - 1
