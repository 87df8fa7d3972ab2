"""Lower an IR kernel to an LLVM module: one entry function plus one task function per parallel loop.

Consumes an `ir.Kernel` (after passes); produces an llvmlite `Module` whose entry point is

    i32 @<symbol>(ptr ctx, <one argument per kernel parameter>)

An ndarray parameter arrives as a pointer to its descriptor `{ptr data, i64 shape[ndim]}`; a scalar arrives as
its C type (f16 as float, u1 as i8); a kernel of more than `runtime.abi.MAX_DIRECT_ARGS` parameters is
`i32 @<symbol>(ptr ctx, ptr args)` instead, each argument in an 8-byte slot of `args`. The result is 0, or the error code of the first failed check (details in
the context). A parallel loop becomes `void @<symbol>.taskN(ptr frame, i64 lo, i64 hi)`: the values it uses
from outside the loop travel in a frame struct on the entry function's stack, and the runtime's `parallel_for`
runs it. The real functions the kernel calls are internal functions of the module (codegen/functions.py).

The entry function sets the thread's floating-point mode to flush denormal results to zero while the kernel
runs (as Quadrants does; `runtime_ir.flush_to_zero_entry`) around `<symbol>.body`, which lowers the shared statements (codegen/lower.py) plus the kernel's arguments and its parallel
loops (`ENTRY_DISPATCH`); a task function only the shared ones.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from llvmlite import ir as ll

from quadrants.codegen import atomics, runtime_ir
from quadrants.codegen.functions import declare_functions, lower_functions
from quadrants.codegen.llvm_types import CTX_ERROR, CTX_NUM_THREADS, I32, I64, PTR, abi, mem, reg
from quadrants.codegen.lower import SHARED_DISPATCH, CodegenOptions, FnLowering, NdInfo, StmtLowering, unpack_arg
from quadrants.codegen.math import MathLowering
from quadrants.ir import nodes as ir
from quadrants.runtime.abi import packs_args
from quadrants.types.dtypes import PrimitiveType

# A parallel loop runs inline below about this much work (IR statements x iterations): starting a thread
# costs tens of microseconds, more than a small loop takes.
PARALLEL_WORK_THRESHOLD = 32768
CALL_COST = 64  # a real function call's weight in that estimate: its body is unknown here, and may recurse


@dataclass
class TargetInfo:
    triple: str
    data_layout: str


def lower_kernel(kernel: ir.Kernel, opts: CodegenOptions, symbol: str, target: TargetInfo) -> ll.Module:
    module = ll.Module(name=symbol)
    module.triple = target.triple
    module.data_layout = target.data_layout
    params = [PTR] + [PTR if isinstance(p.type, ir.NdType) else abi(p.type) for p in kernel.params]
    packed = packs_args(len(kernel.params))
    fnty = ll.FunctionType(I32, [PTR, PTR] if packed else params)
    fn = ll.Function(module, fnty, symbol + ".body")
    fn.linkage = "internal"
    runtime_ir.flush_to_zero_entry(module, fnty, symbol, fn)
    declare_functions(module, kernel)
    lw = EntryLowering(module, fn, opts, kernel, symbol)
    if packed:  # argument k is read from slot k of the buffer `fn.args[1]` points to
        lw.kernel_args = [unpack_arg(lw.b, fn.args[1], k, t) for k, t in enumerate(params[1:])]
    lw.block(kernel.body)
    if not lw.b.block.is_terminated:
        lw.ret_ok()
    lw.finish_entry()
    lower_functions(module, kernel, opts, SHARED_DISPATCH, MathLowering)
    return module


class EntryLowering(FnLowering):
    """The kernel's entry function: its arguments, and the names of its parallel loops' task functions."""

    def __init__(self, module: ll.Module, fn: ll.Function, opts: CodegenOptions, kernel: ir.Kernel,
                 symbol: str) -> None:  # fmt: skip
        super().__init__(module, fn, fn.args[0], opts, kernel, ENTRY_DISPATCH, MathLowering)
        self.on_error = lambda b: b.ret(b.load(self.ctx_field(CTX_ERROR), typ=I32))  # b is self.b
        self.kernel_args: list[ll.Value] = list(fn.args[1:])
        self.symbol = symbol
        self.task_count = 0


def _lower_arg(lw: EntryLowering, s: ir.Arg) -> None:
    arg = lw.kernel_args[s.index]
    t = s.type
    if isinstance(t, ir.NdType):
        data = lw.b.load(arg, typ=PTR)
        shape = [lw.b.load(lw.b.gep(arg, [ll.Constant(I64, 1 + d)], source_etype=I64), typ=I64) for d in range(t.ndim)]
        lw.nd[id(s)] = NdInfo(data, shape)
    else:
        assert isinstance(t, PrimitiveType)
        lw.values[id(s)] = lw.from_abi(arg, t)


def _lower_range_for(lw: EntryLowering, s: ir.RangeFor) -> None:
    if not s.parallel:
        lw.counted_loop(s, lw.v(s.begin), lw.v(s.end))
        return
    b = lw.b
    captures = _captures(s)
    fields: list[ll.Type] = [PTR]
    for v in captures:
        fields.extend(_frame_types(v))
    frame_ty = ll.LiteralStructType(fields)
    frame = lw.alloca(frame_ty, "frame")
    slot = 0

    def put(value: ll.Value) -> None:
        nonlocal slot
        b.store(value, b.gep(frame, [ll.Constant(I32, 0), ll.Constant(I32, slot)], source_etype=frame_ty))
        slot += 1

    put(lw.ctx)
    for v in captures:
        if isinstance(v, ir.GlobalNd):
            continue
        if isinstance(v.type, ir.NdType):
            nd = lw.nd[id(v)]
            put(nd.data)
            for n in nd.shape:
                put(n)
        elif isinstance(v.type, ir.PtrType):
            put(lw.v(v))
        else:
            assert isinstance(v.type, PrimitiveType)
            put(lw.to_mem(lw.v(v), v.type))
    lw.task_count += 1
    task = _build_task(lw, s, captures, frame_ty, f"{lw.symbol}.task{lw.task_count}")
    nthreads = b.load(lw.ctx_field(CTX_NUM_THREADS), typ=I32)
    grain = ll.Constant(I64, max(1, PARALLEL_WORK_THRESHOLD // _cost(s.body)))
    pf = runtime_ir.declare_parallel_for(lw.m)
    begin, end = (lw.v(x) if lw.v(x).type == I64 else lw.index64(lw.v(x)) for x in (s.begin, s.end))
    b.call(pf, [task.bitcast(PTR), frame, begin, end, nthreads, grain, lw.ctx])
    if lw.opts.error_checks:
        err = b.load(lw.ctx_field(CTX_ERROR), typ=I32)
        ok = lw.fn.append_basic_block("after_task")
        b.cbranch(b.icmp_signed("!=", err, ll.Constant(I32, 0)), lw.error_exit(), ok)
        b.position_at_end(ok)


def _frame_types(v: ir.Value) -> list[ll.Type]:
    if isinstance(v, ir.GlobalNd):
        return []
    if isinstance(v.type, ir.NdType):
        return [PTR] + [I64] * v.type.ndim
    if isinstance(v.type, ir.PtrType):
        return [PTR]
    assert isinstance(v.type, PrimitiveType)
    return [mem(v.type)]


def _captures(loop: ir.RangeFor) -> list[ir.Value]:
    inside = {id(s) for s in ir.walk(loop.body)} | {id(loop)}
    seen: set[int] = set()
    out: list[ir.Value] = []

    def add(v: ir.Value) -> None:  # constants are not captured: the task has them as constants (`_build_task`)
        if id(v) not in inside and id(v) not in seen and not isinstance(v, ir.Const):
            seen.add(id(v))
            out.append(v)

    for s in ir.walk(loop.body):
        for v in s.operands():
            add(v)
    for e in loop.extents:
        add(e)
    for r in loop.reductions:
        add(r.ptr)
    return out


def _constants(loop: ir.RangeFor) -> list[ir.Const]:
    """The constants defined outside `loop` that its body or extents use."""
    inside = {id(s) for s in ir.walk(loop.body)}
    used = [v for s in ir.walk(loop.body) for v in s.operands()] + list(loop.extents)
    return list({id(v): v for v in used if isinstance(v, ir.Const) and id(v) not in inside}.values())


def _build_task(
    parent: FnLowering, loop: ir.RangeFor, captures: list[ir.Value], frame_ty: ll.Type, name: str
) -> ll.Function:
    fn = ll.Function(parent.m, runtime_ir.TASK_TYPE, name)
    fn.linkage = "internal"
    frame, lo, hi = fn.args
    tl = FnLowering(parent.m, fn, None, parent.opts, parent.kernel, SHARED_DISPATCH, MathLowering)  # type: ignore[arg-type]
    tl.on_error = lambda b: b.ret_void()
    b = tl.b
    slot = 0

    def get(t: ll.Type) -> ll.Value:
        nonlocal slot
        v = b.load(b.gep(frame, [ll.Constant(I32, 0), ll.Constant(I32, slot)], source_etype=frame_ty), typ=t)
        slot += 1
        return v

    tl.ctx = get(PTR)
    for c in _constants(loop):  # as constants, not frame loads: LLVM folds them (a row of extent 1, a shift)
        tl.const(c)
    for v in captures:
        if isinstance(v, ir.GlobalNd):
            tl.global_nd(v)  # recomputed from the context: its shape stays a constant
        elif isinstance(v.type, ir.NdType):
            data = get(PTR)
            tl.nd[id(v)] = NdInfo(data, [get(I64) for _ in range(v.type.ndim)])
        elif isinstance(v.type, ir.PtrType):
            tl.values[id(v)] = get(PTR)
        else:
            assert isinstance(v.type, PrimitiveType)
            tl.values[id(v)] = tl.to_reg(get(mem(v.type)), v.type)
    atomics.start_reductions(tl, loop)
    index_t = reg(loop.type)  # type: ignore[arg-type]
    tl.counted_loop(loop, *((x if index_t == I64 else b.trunc(x, index_t)) for x in (lo, hi)))
    for sl in tl.slots:
        value = b.load(sl.acc, typ=mem(sl.reduction.dtype))
        atomics.atomic_update(tl, sl.reduction.op, tl.values[id(sl.reduction.ptr)], value, sl.reduction.dtype)
    b.ret_void()
    tl.finish_entry()
    return fn


def _cost(block: ir.Block) -> int:
    """A rough work estimate of one iteration: statements, with nested loops weighing 16 iterations and real
    function calls `CALL_COST` statements."""
    total = 0
    for s in block.stmts:
        total += CALL_COST if isinstance(s, ir.Call) else 1
        for inner in s.blocks():
            weight = 16 if isinstance(s, (ir.RangeFor, ir.While)) else 1
            total += weight * _cost(inner)
    return max(total, 1)


# The entry function's statements: the shared ones, its arguments, and parallel loops as tasks.
ENTRY_DISPATCH: Mapping[type, StmtLowering] = MappingProxyType(
    {**SHARED_DISPATCH, ir.Arg: _lower_arg, ir.RangeFor: _lower_range_for}
)
