"""Lower an IR kernel for NVIDIA GPUs: its top-level statements split into tasks, one GPU launch each.

Consumes an `ir.Kernel` (after passes); produces an llvmlite `Module` for the NVPTX target and a `CudaPlan`.
A kernel runs as a sequence of launches, in order on one stream:

- each parallel loop (a `for` at the kernel's top level) is one task: a grid-stride loop over its range, with
  thread-local reduction accumulators combined by one atomic per thread;
- the serial statements between parallel loops are one task each, run by a single thread;
- constants, arguments, shapes and arithmetic on them are recomputed in every task that uses them; locals
  shared by several tasks, and values computed in one task and used in another, live in `temps`, a device
  buffer of 8-byte slots.

Every task is `ptx_kernel void @<symbol>_t<k>(ptr ctx, ptr temps, <kernel arguments>)` where an ndarray
argument is its data pointer followed by its extents (i64 each), a scalar its C type (f16 as float, u1 as i8)
(more than `runtime.abi.MAX_DIRECT_ARGS` of these: `(ptr ctx, ptr temps, ptr args)`, one 8-byte slot each),
and `ctx` the runtime context in device memory with the CPU's layout (error record, result slots, field
regions; codegen/llvm_types.py). The real functions the kernel calls are device functions of the module
(codegen/functions.py), called from the tasks.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from llvmlite import ir as ll

from quadrants.codegen import atomics, nvptx, printing, runtime_ir, simt
from quadrants.codegen.cuda_plan import BLOCK_DIM, CudaPlan, CudaTask
from quadrants.codegen.functions import declare_functions, lower_functions
from quadrants.codegen.llvm_types import (
    CTX_DIM,
    CTX_ERROR,
    CTX_EXTENT,
    CTX_INDEX,
    CTX_SITE,
    CTX_TYPE,
    I32,
    I64,
    PTR,
    VOID,
    abi,
    mem,
)
from quadrants.codegen.lower import SHARED_DISPATCH, CodegenOptions, FnLowering, NdInfo, StmtLowering, unpack_arg
from quadrants.codegen.math import HostNvptxMath, NvptxMath
from quadrants.ir import nodes as ir
from quadrants.runtime.abi import cuda_packs_args
from quadrants.types.dtypes import PrimitiveType

REMAT = (ir.Const, ir.Arg, ir.NdShape, ir.GlobalNd, ir.Cast, ir.Binary, ir.Unary, ir.Select)


@dataclass
class _Segment:
    parallel: bool
    stmts: list[ir.Stmt]


def lower_cuda_kernel(kernel: ir.Kernel, opts: CodegenOptions, symbol: str, arch: str = nvptx.DEFAULT_ARCH,
                      emulate_on: Any = None) -> tuple[ll.Module, CudaPlan]:  # fmt: skip
    """`emulate_on`: a host `TargetInfo` to build the same tasks as plain host functions (thread ids read from
    the global `<symbol>_sreg`, math from libm) for runtime/emulator.py."""
    module = ll.Module(name=symbol)
    if emulate_on is not None:
        module.triple, module.data_layout = emulate_on.triple, emulate_on.data_layout
    else:
        module.triple = nvptx.TRIPLE
        module.data_layout = nvptx.data_layout(arch)
    promoted = _promotable(kernel)
    remat = _rematerializable(kernel.body.stmts, promoted)
    segments: list[_Segment] = []
    host_reads: list[ir.Value] = []  # conditions of host-side control flow: computed by a task, read by the host
    program = _plan(kernel.body.stmts, remat, segments, host_reads, in_loop=False)
    slots = _slots(segments, remat, promoted)
    for cond in host_reads:
        slots.setdefault(id(cond), len(slots))
    _define_record_error(module)
    declare_functions(module, kernel)
    tasks = []
    for k, seg in enumerate(segments):
        name = f"{symbol}_t{k}"
        shared = _lower_task(module, kernel, opts, seg, name, remat, slots, promoted)
        block = seg.stmts[0].block_dim if seg.parallel else 0  # type: ignore[attr-defined]
        tasks.append(CudaTask(name, seg.parallel, _constant_count(seg) if seg.parallel else 1, block or BLOCK_DIM,
                              cooperative=simt.uses_simt(seg.stmts), shared=shared))  # fmt: skip
    lower_functions(module, kernel, opts, CUDA_FUNCTION_DISPATCH, HostNvptxMath if emulate_on is not None else NvptxMath,
                    device_pools=True)
    control = any(not isinstance(step, int) for step in program)
    return module, CudaPlan(tuple(tasks), len(slots), _slotted(program, slots) if control else None)


# ---- analysis ----------------------------------------------------------------------------------------------


def _promotable(kernel: ir.Kernel) -> dict[int, ir.Value]:
    """Top-level locals written once, at the top level, with a recomputable value (`n = x.shape[0] * 2`): their
    loads read that value directly, so they need neither a task nor a slot. Returns alloca id -> value."""
    stores: dict[int, list[ir.Store]] = {}
    written: set[int] = set()
    allocas = {id(s) for s in kernel.body.stmts if isinstance(s, ir.Alloca)}
    for s in ir.walk(kernel.body):
        if isinstance(s, ir.Store):
            stores.setdefault(id(s.ptr), []).append(s)
        elif isinstance(s, ir.AtomicRMW):
            written.add(id(s.ptr))
        elif isinstance(s, ir.RangeFor):
            written.update(id(r.ptr) for r in s.reductions)
        elif isinstance(s, ir.Call):  # results, and locals passed by reference
            written.update(id(v) for v in s.operands() if isinstance(v.type, ir.PtrType))
    out: dict[int, ir.Value] = {}
    remat: set[int] = set()
    top = kernel.body.stmts
    top_ids = {id(s) for s in top}
    for s in top:
        if isinstance(s, ir.Store):
            st = stores.get(id(s.ptr), [])
            if (id(s.ptr) in allocas and len(st) == 1 and id(s.ptr) not in written and id(s) in top_ids
                    and id(s.value) in remat):  # fmt: skip
                out[id(s.ptr)] = s.value
        elif isinstance(s, ir.Load) and id(s.ptr) in out:
            remat.add(id(s))
        elif isinstance(s, REMAT) and all(id(v) in remat for v in s.operands()):
            remat.add(id(s))
    return out


def _deps(v: ir.Stmt, promoted: dict[int, ir.Value]) -> list[ir.Value]:
    """What a statement reads; a load of a promoted local reads the value stored in it."""
    if isinstance(v, ir.Load) and id(v.ptr) in promoted:
        return [promoted[id(v.ptr)]]
    return list(v.operands())


def _rematerializable(stmts: list[ir.Stmt], promoted: dict[int, ir.Value]) -> set[int]:
    out: set[int] = set()
    for s in stmts:
        if isinstance(s, ir.Alloca) and id(s) in promoted:
            out.add(id(s))
        elif isinstance(s, ir.Store) and id(s.ptr) in promoted:
            out.add(id(s))
        elif isinstance(s, ir.Load) and id(s.ptr) in promoted:
            out.add(id(s))
        elif isinstance(s, REMAT) and all(id(v) in out for v in s.operands()):
            out.add(id(s))
    return out


def _plan(stmts: list[ir.Stmt], remat: set[int], segs: list[_Segment], host_reads: list[ir.Value],
          in_loop: bool) -> list[Any]:  # fmt: skip
    """Split `stmts` into tasks (appended to `segs`) and return the host's steps over them (`CudaPlan.program`,
    with an `if`'s condition value in place of its slot). A `While` or `If` holding a parallel loop (or, in such
    a loop, a `Break` / `Continue` of it) stays on the host: its blocks are planned in turn."""
    steps: list[Any] = []
    cur: list[ir.Stmt] = []

    def flush() -> None:
        if cur:
            steps.append(len(segs))
            segs.append(_Segment(False, list(cur)))
            cur.clear()

    for s in stmts:
        if id(s) in remat:
            continue  # recomputed where used
        if isinstance(s, ir.RangeFor) and s.parallel:
            flush()
            steps.append(len(segs))
            segs.append(_Segment(True, [s]))
        elif isinstance(s, ir.While) and _holds_parallel(s.body):
            flush()
            steps.append(["loop", _plan(s.body.stmts, remat, segs, host_reads, in_loop=True)])
        elif isinstance(s, ir.If) and any(_holds_parallel(b) or (in_loop and _jumps(b)) for b in s.blocks()):
            if id(s.cond) in remat:
                cur.append(s.cond)  # (a recomputable condition: a task computes it for the host)
            flush()
            host_reads.append(s.cond)
            then = _plan(s.then.stmts, remat, segs, host_reads, in_loop)
            steps.append(["if", s.cond, then, _plan(s.orelse.stmts, remat, segs, host_reads, in_loop)])
        elif in_loop and isinstance(s, (ir.Break, ir.Continue)):
            flush()
            steps.append(["break" if isinstance(s, ir.Break) else "continue"])
        else:
            cur.append(s)
    flush()
    return steps


def _holds_parallel(block: ir.Block) -> bool:
    return any(isinstance(s, ir.RangeFor) and s.parallel for s in ir.walk(block))


def _jumps(block: ir.Block) -> bool:
    """A break or continue of the enclosing loop (not of a loop inside `block`)."""
    for s in block.stmts:
        if isinstance(s, (ir.Break, ir.Continue)):
            return True
        if isinstance(s, ir.If) and any(_jumps(b) for b in s.blocks()):
            return True
    return False


def _slotted(steps: list[Any], slots: dict[int, int]) -> list[Any]:
    out: list[Any] = []
    for step in steps:
        if isinstance(step, int) or step[0] in ("break", "continue"):
            out.append(step)
        elif step[0] == "loop":
            out.append(["loop", _slotted(step[1], slots)])
        else:
            out.append(["if", slots[id(step[1])], _slotted(step[2], slots), _slotted(step[3], slots)])
    return out


def _defs(seg: _Segment) -> set[int]:
    return {id(s) for s in ir.walk(ir.Block(seg.stmts))}


def _uses(seg: _Segment, promoted: dict[int, ir.Value]) -> list[ir.Value]:
    out: list[ir.Value] = []
    for s in ir.walk(ir.Block(seg.stmts)):
        out.extend(_deps(s, promoted))
        if isinstance(s, ir.RangeFor):
            out.extend(s.extents)
            out.extend(r.ptr for r in s.reductions)
    return out


def _slots(segments: list[_Segment], remat: set[int], promoted: dict[int, ir.Value]) -> dict[int, int]:
    """Values that cross tasks -> their temps slot: top-level locals used by another task (or by a parallel
    loop, whose threads must share them), and values defined in one task and used in another."""
    defined_in: dict[int, int] = {}
    for k, seg in enumerate(segments):
        for i in _defs(seg):
            defined_in[i] = k
    slots: dict[int, int] = {}
    for k, seg in enumerate(segments):
        for v in _uses(seg, promoted):
            home = defined_in.get(id(v))
            if id(v) in remat or home is None or home == k or id(v) in slots:
                continue
            slots[id(v)] = len(slots)
    return slots


def _constant_count(seg: _Segment) -> int | None:
    loop = seg.stmts[0]
    assert isinstance(loop, ir.RangeFor)
    if isinstance(loop.begin, ir.Const) and isinstance(loop.end, ir.Const):
        return max(0, int(loop.end.value) - int(loop.begin.value))
    return None


# ---- lowering -----------------------------------------------------------------------------------------------


def _param_types(kernel: ir.Kernel, emulated: bool) -> list[ll.Type]:
    """The task function's parameters: ctx, temps, then the kernel's arguments (or one pointer to them, packed);
    emulated, the emulator's thread record first (codegen/simt.py)."""
    args = _arg_types(kernel)
    own = [PTR, PTR, PTR] if _packed(args) else [PTR, PTR, *args]
    return [PTR, *own] if emulated else own


def _packed(types: list[ll.Type]) -> bool:
    """Whether the arguments exceed the launch parameter space (runtime/abi.py `cuda_packs_args`)."""
    return cuda_packs_args([_size(t) for t in types])


def _size(t: ll.Type) -> int:
    if isinstance(t, ll.IntType):
        return max(1, t.width // 8)
    return 4 if isinstance(t, ll.FloatType) else 8  # float; double and pointers


def _arg_types(kernel: ir.Kernel) -> list[ll.Type]:
    out: list[ll.Type] = []
    for p in kernel.params:
        if isinstance(p.type, ir.NdType):
            out += [PTR] + [I64] * p.type.ndim
        else:
            out.append(abi(p.type))
    return out


class CudaLowering(FnLowering):
    """Statement lowering inside one task function (`CUDA_DISPATCH`: grid-stride parallel loops, values shared
    through `temps`; libdevice math, or libm when `emulated` on the host)."""

    device_pools = True  # the GPU cannot map pages: sparse pools carve their tree's arena (emulated too)

    def __init__(self, module: ll.Module, fn: ll.Function, opts: CodegenOptions, kernel: ir.Kernel,
                 slots: dict[int, int], promoted: dict[int, ir.Value], emulated: bool) -> None:  # fmt: skip
        first = 1 if emulated else 0  # emulated: the thread record comes first
        math = HostNvptxMath if emulated else NvptxMath
        super().__init__(module, fn, fn.args[first], opts, kernel, CUDA_DISPATCH, math)
        self.thread = fn.args[0] if emulated else None
        self.temps = fn.args[first + 1]
        self.slot_of = slots
        self.promoted = promoted
        self.emulated = emulated
        self.shared_arrays: list[int] = []  # bytes of each qd.simt.block.SharedArray of the task
        self.shared_bytes = 0  # their storage (emulated: the block's shared memory the emulator allocates)
        self.on_error = lambda b: b.ret_void()
        self.kernel_args: dict[int, Any] = {}
        args: list[ll.Value] = list(fn.args[first + 2 :])
        if _packed(types := _arg_types(kernel)):  # read from the argument slots
            args = [unpack_arg(self.b, fn.args[first + 2], k, t) for k, t in enumerate(types)]
        pos = 0
        for i, p in enumerate(kernel.params):
            if isinstance(p.type, ir.NdType):
                self.kernel_args[i] = (args[pos], list(args[pos + 1 : pos + 1 + p.type.ndim]))
                pos += 1 + p.type.ndim
            else:
                self.kernel_args[i] = args[pos]
                pos += 1

    def ret_ok(self) -> None:
        self.b.ret_void()

    def slot_ptr(self, value: ir.Value) -> ll.Value:
        return self.b.gep(self.temps, [ll.Constant(I64, 8 * self.slot_of[id(value)])], source_etype=ll.IntType(8))


def _lower_task(module: ll.Module, kernel: ir.Kernel, opts: CodegenOptions, seg: _Segment, name: str,
                remat: set[int], slots: dict[int, int], promoted: dict[int, ir.Value]) -> int:  # fmt: skip
    """Lower one task into `module`; returns the bytes of block shared memory it declares."""
    emulated = module.triple != nvptx.TRIPLE
    fn = ll.Function(module, ll.FunctionType(VOID, _param_types(kernel, emulated)), name)
    if not emulated:
        fn.calling_convention = "ptx_kernel"
    lw = CudaLowering(module, fn, opts, kernel, slots, promoted, emulated)
    defs = _defs(seg)
    uses = _uses(seg, promoted)
    needed = _remat_closure(kernel.body.stmts, [v for v in uses if id(v) in remat], promoted)
    for s in kernel.body.stmts:
        if id(s) in needed:
            lw.stmt(s)
    for v in uses:
        if id(v) in slots and id(v) not in defs and id(v) not in lw.values:
            if isinstance(v, ir.Alloca):
                lw.values[id(v)] = lw.slot_ptr(v)
            elif isinstance(v.type, ir.PtrType):
                lw.values[id(v)] = lw.b.load(lw.slot_ptr(v), typ=PTR)
            else:
                t = v.type
                assert isinstance(t, PrimitiveType)
                lw.values[id(v)] = lw.to_reg(lw.b.load(lw.slot_ptr(v), typ=mem(t)), t)
    for s in seg.stmts:
        lw.stmt(s)
        if id(s) in slots and not isinstance(s, ir.Alloca):
            t = s.type  # type: ignore[attr-defined]
            value = lw.v(s) if isinstance(t, ir.PtrType) else lw.to_mem(lw.v(s), t)  # type: ignore[arg-type]
            lw.b.store(value, lw.slot_ptr(s))  # type: ignore[arg-type]
    if not lw.b.block.is_terminated:
        lw.b.ret_void()
    lw.finish_entry()
    return lw.shared_bytes


def _remat_closure(stmts: list[ir.Stmt], roots: list[ir.Value], promoted: dict[int, ir.Value]) -> set[int]:
    by_id = {id(s): s for s in stmts}
    out: set[int] = set()
    todo = list(roots)
    while todo:
        v = todo.pop()
        if id(v) in out or id(v) not in by_id:
            continue
        out.add(id(v))
        todo.extend(_deps(v, promoted))
    return out


def _lower_load(lw: CudaLowering, s: ir.Load) -> None:
    value = lw.promoted.get(id(s.ptr))
    if value is not None:
        lw.values[id(s)] = lw.v(value)  # a promoted local: the value stored in it
    else:
        lw.load(s)


def _lower_store(lw: CudaLowering, s: ir.Store) -> None:
    if id(s.ptr) not in lw.promoted:
        lw.store(s)


def _lower_arg(lw: CudaLowering, s: ir.Arg) -> None:
    arg = lw.kernel_args[s.index]
    if isinstance(s.type, ir.NdType):
        data, shape = arg
        lw.nd[id(s)] = NdInfo(data, shape)
    else:
        assert isinstance(s.type, PrimitiveType)
        lw.values[id(s)] = lw.from_abi(arg, s.type)


def _lower_alloca(lw: CudaLowering, s: ir.Alloca) -> None:
    if id(s) in lw.promoted:
        return  # never read through memory (_lower_load)
    if id(s) in lw.slot_of:
        lw.values[id(s)] = lw.slot_ptr(s)  # shared with other tasks (or a parallel loop's threads)
    else:
        lw.alloca_stmt(s)


_sreg = simt.sreg


def _unravel(b: ll.IRBuilder, flat: ll.Value, extents: list[ll.Value]) -> list[ll.Value]:
    """The coordinates of a flat index over `extents` (row-major), in the index's type."""
    coords: list[ll.Value] = []
    rest = flat
    for e in reversed(extents):
        q = b.sdiv(rest, e)
        coords.append(b.sub(rest, b.mul(q, e)))
        rest = q
    return list(reversed(coords))


def _lower_range_for(lw: CudaLowering, s: ir.RangeFor) -> None:
    if not s.parallel:
        lw.counted_loop(s, lw.v(s.begin), lw.v(s.end))
        return
    b = lw.b
    atomics.start_reductions(lw, s)
    gid = b.add(b.mul(_sreg(lw, "ctaid.x"), _sreg(lw, "ntid.x")), _sreg(lw, "tid.x"))
    stride = b.mul(_sreg(lw, "nctaid.x"), _sreg(lw, "ntid.x"))
    extents = [lw.v(e) for e in s.extents]
    wide = lw.v(s.begin).type == I64
    if wide:
        gid, stride = b.sext(gid, I64), b.sext(stride, I64)
        fits = b.icmp_signed("<", lw.v(s.end), ll.Constant(I64, 2**31))  # then unravel with 32-bit divisions

    def bind(i: ll.Value) -> None:
        lw.values[id(s)] = i
        if not extents:
            return
        # a multi-dimensional loop: each thread unravels its own flat index
        if not wide:
            lw.coords[id(s)] = _unravel(b, i, extents)
            return
        narrow_bb, wide_bb = lw.fn.append_basic_block("unravel.i32"), lw.fn.append_basic_block("unravel.i64")
        merge = lw.fn.append_basic_block("unravel.end")
        b.cbranch(fits, narrow_bb, wide_bb)
        b.position_at_end(narrow_bb)
        narrow = [b.sext(c, I64) for c in _unravel(b, b.trunc(i, I32), [b.trunc(e, I32) for e in extents])]
        b.branch(merge)
        b.position_at_end(wide_bb)
        wide_coords = _unravel(b, i, extents)
        b.branch(merge)
        b.position_at_end(merge)
        coords = []
        for n, w in zip(narrow, wide_coords):
            phi = b.phi(I64)
            phi.add_incoming(n, narrow_bb)
            phi.add_incoming(w, wide_bb)
            coords.append(phi)
        lw.coords[id(s)] = coords

    out = lw.fn.append_basic_block("gs.end")
    lw.step_loop(s.body, b.add(lw.v(s.begin), gid), lw.v(s.end), bind, brk=out, done=out, step=stride)
    b.position_at_end(out)
    for sl in lw.slots:
        r = sl.reduction
        value = b.load(sl.acc, typ=mem(r.dtype))
        if lw.emulated or not _warp_reducible(r.dtype):
            atomics.atomic_update(lw, r.op, lw.values[id(r.ptr)], value, r.dtype)
            continue
        # Combine the warp's 32 partial results with shuffles first: one atomic per warp instead of per thread.
        value = _warp_reduce(lw, "add" if r.op == "sub" else r.op, value, r.dtype)
        lane = b.and_(_sreg(lw, "tid.x"), ll.Constant(I32, 31))
        with b.if_then(b.icmp_unsigned("==", lane, ll.Constant(I32, 0))):
            atomics.atomic_update(lw, r.op, lw.values[id(r.ptr)], value, r.dtype)


def _lower_print(lw: CudaLowering, s: ir.Print) -> None:
    """print() through CUDA's `vprintf(format, argument buffer)`: the format string in global memory, the
    arguments (64-bit integers and doubles) in a local struct. Output appears when the kernel finishes."""
    if lw.m.triple != nvptx.TRIPLE:
        printing.lower_print(lw, s)  # host code (the emulator): printf
        return
    data, args = printing.print_format(lw, s)
    b = lw.b
    name = f"qd_fmt_{len([g for g in lw.m.globals if g.startswith('qd_fmt_')])}"
    g = ll.GlobalVariable(lw.m, ll.ArrayType(ll.IntType(8), len(data)), name, addrspace=1)
    g.linkage = "internal"
    g.global_constant = True
    g.initializer = ll.Constant(ll.ArrayType(ll.IntType(8), len(data)), data)
    fmt = b.addrspacecast(g, PTR)
    buf: ll.Value = ll.Constant(PTR, None)
    if args:
        struct = ll.LiteralStructType([a.type for a in args])
        buf = lw.alloca(struct, "printf.args")
        for k, a in enumerate(args):
            b.store(a, b.gep(buf, [ll.Constant(I32, 0), ll.Constant(I32, k)], source_etype=struct))
    vprintf = lw.m.globals.get("vprintf") or ll.Function(lw.m, ll.FunctionType(I32, [PTR, PTR]), "vprintf")
    b.call(vprintf, [fmt, buf])


def _warp_reducible(t: PrimitiveType) -> bool:
    return t.bits in (32, 64) and t.kind != "bool"


def _warp_reduce(lw: CudaLowering, op: str, value: ll.Value, t: PrimitiveType) -> ll.Value:
    for delta in (16, 8, 4, 2, 1):
        moved = simt.shuffle(lw, "shfl_down", ll.Constant(I32, -1), value, ll.Constant(I32, delta), t)
        value = lw.math.binop(op, value, moved, t)
    return value


def _define_record_error(module: ll.Module) -> None:
    """The runtime's error record, as device code: the first failing thread's details win."""
    fn = ll.Function(module, runtime_ir.RECORD_ERROR_TYPE, runtime_ir.RECORD_ERROR)
    fn.linkage = "internal"
    ctx, code, site, index, dim, extent = fn.args
    entry = fn.append_basic_block("entry")
    write = fn.append_basic_block("write")
    done = fn.append_basic_block("done")
    b = ll.IRBuilder(entry)

    def field(i: int) -> ll.Value:
        return b.gep(ctx, [ll.Constant(I32, 0), ll.Constant(I32, i)], source_etype=CTX_TYPE)

    res = b.cmpxchg(field(CTX_ERROR), ll.Constant(I32, 0), code, "seq_cst", "seq_cst")
    b.cbranch(b.extract_value(res, 1), write, done)
    b.position_at_end(write)
    for i, v in ((CTX_SITE, site), (CTX_INDEX, index), (CTX_DIM, dim), (CTX_EXTENT, extent)):
        b.store(v, field(i))
    b.branch(done)
    b.position_at_end(done)
    b.ret_void()


# A task function's statements: the shared ones, with arguments, locals and parallel loops lowered for the GPU.
CUDA_DISPATCH: Mapping[type, StmtLowering] = MappingProxyType(
    {
        **SHARED_DISPATCH,
        ir.Arg: _lower_arg,
        ir.Alloca: _lower_alloca,
        ir.Load: _lower_load,
        ir.Store: _lower_store,
        ir.RangeFor: _lower_range_for,
        ir.Print: _lower_print,
        ir.SharedArray: simt.lower_shared_array,
        ir.Simt: simt.lower_simt,
    }
)

# A real function's statements (codegen/functions.py adds its parameters and returns): no parallel loops or
# temps in it, only GPU printing.
CUDA_FUNCTION_DISPATCH: Mapping[type, StmtLowering] = MappingProxyType({**SHARED_DISPATCH, ir.Print: _lower_print})
