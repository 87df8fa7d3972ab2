"""Demote atomics that no other thread can race with to plain read-modify-write.

Serial code has no other thread to race with, so an atomic whose old value is unused becomes a load, an
operation and a store (which LLVM can keep in registers). The bodies of real functions (`kernel.functions`)
are left alone: a parallel loop may call them, so their atomics stay atomic.

In a parallel loop, an atomic on a field element indexed by exactly the loop's own coordinates (`a[i, j] -= b`
in `for i, j in qd.ndrange(...)`) is demoted too, as Quadrants' loop-unique analysis does, where every access
to that field in the loop uses those same indices: each element then belongs to one iteration. Only dense
fields count (two fields never share an element; ndarray arguments may alias each other, sparse fields
allocate), and not in a loop that calls a real function (it could reach the field with other indices).

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
            _loop_unique(s, uses)
            out.append(s)
            continue
        for b in s.blocks():
            _block(b, uses)
        if isinstance(s, ir.AtomicRMW) and s.op in _BINARY and uses.get(id(s), 0) == 0:
            out += _plain(s)
            continue
        out.append(s)
    block.stmts = out


def _plain(s: ir.AtomicRMW) -> list[ir.Stmt]:
    assert isinstance(s.ptr.type, ir.PtrType)
    old = ir.Load(ptr=s.ptr, type=s.ptr.type.pointee, loc=s.loc)
    new = ir.Binary(op=_BINARY[s.op], lhs=old, rhs=s.value, type=s.type, loc=s.loc)
    return [old, new, ir.Store(ptr=s.ptr, value=new, loc=s.loc)]


def _field_key(v: ir.Value) -> tuple[int, int] | None:
    """A dense field's identity (two GlobalNd statements of one field share it), else None."""
    if isinstance(v, ir.GlobalNd) and not v.levels:
        return (v.region, v.offset)
    return None


def _loop_unique(loop: ir.RangeFor, uses: dict[int, int]) -> None:
    """Demote the atomics of `loop`'s body on elements that only the iteration owning them touches."""
    stmts = list(ir.walk(loop.body))
    if any(isinstance(s, ir.Call) for s in stmts):
        return
    ndim = max(len(loop.extents), 1)

    def own(indices: tuple[ir.Value, ...]) -> bool:  # exactly this loop's coordinates, in order
        if len(indices) != ndim:
            return False
        if ndim == 1 and indices[0] is loop:
            return True
        return all(isinstance(v, ir.LoopCoord) and v.loop is loop and v.dim == d for d, v in enumerate(indices))

    unique: dict[tuple[int, int], bool] = {}
    for s in stmts:
        for v in s.operands():
            key = _field_key(v)
            if key is not None:  # an access other than through the loop's own indices makes the field shared
                unique[key] = unique.get(key, True) and isinstance(s, ir.ExtPtr) and not s.activate and own(s.indices)
    targets = {id(s) for s in stmts if isinstance(s, ir.ExtPtr) and unique.get(_field_key(s.arr) or (-1, -1), False)}
    if targets:
        _demote_in(loop.body, targets, uses)


def _demote_in(block: ir.Block, targets: set[int], uses: dict[int, int]) -> None:
    out: list[ir.Stmt] = []
    for s in block.stmts:
        for b in s.blocks():
            _demote_in(b, targets, uses)
        if isinstance(s, ir.AtomicRMW) and s.op in _BINARY and uses.get(id(s), 0) == 0 and id(s.ptr) in targets:
            out += _plain(s)
            continue
        out.append(s)
    block.stmts = out
