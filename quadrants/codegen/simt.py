"""The GPU's thread model in CUDA tasks: thread ids, `qd.simt` block shared arrays, barriers and warp shuffles.

Consumes `ir.SharedArray` / `ir.Simt` statements inside a task being lowered by codegen/cuda.py's
`CudaLowering`; produces NVPTX code, or host code for runtime/emulator.py:

- on the GPU, thread ids are `llvm.nvvm.read.ptx.sreg.*`, a shared array is an `addrspace(3)` global of the
  module, `block_sync` is `bar.sync 0`, `warp_sync` `bar.warp.sync mask`, shuffles `llvm.nvvm.shfl.sync.*`;
- emulated, every task takes one more first parameter, a pointer to the emulator's `THREAD` record for the
  thread it runs as: its ids, its block's shared memory (each shared array at a fixed offset in it, the task's
  `shared` bytes in all), the block barrier (a function the emulator gives, called with its argument) and an
  exchange area of one 8-byte slot per thread of the block, through which shuffles pass values between two
  barriers. A warp barrier is the block's barrier there (the emulator runs a task that uses these with all of
  its block's threads side by side: runtime/emulator.py).
"""

from __future__ import annotations

from typing import Any

from llvmlite import ir as ll

from quadrants.codegen.llvm_types import I32, I64, PTR, VOID, mem
from quadrants.ir import nodes as ir
from quadrants.types.dtypes import PrimitiveType

# The emulator's per-thread record (runtime/emulator.py `_Thread` has the same fields, in this order).
THREAD_FIELDS = ("tid", "ntid", "ctaid", "nctaid", "shared", "barrier", "barrier_arg", "exchange")
THREAD = ll.LiteralStructType([I32, I32, I32, I32, PTR, PTR, PTR, PTR])
SREG_FIELDS = {"tid.x": 0, "ntid.x": 1, "ctaid.x": 2, "nctaid.x": 3}

WARP = 32
FULL_MASK = -1


def uses_simt(stmts: list[ir.Stmt]) -> bool:
    """Whether a task's statements synchronize its block's threads or share memory between them (the emulator
    then runs them side by side)."""
    return any(isinstance(s, (ir.Simt, ir.SharedArray)) for s in ir.walk(ir.Block(stmts)))


def _thread_field(lw: Any, index: int) -> ll.Value:
    return lw.b.gep(lw.thread, [ll.Constant(I32, 0), ll.Constant(I32, index)], source_etype=THREAD)


def sreg(lw: Any, name: str) -> ll.Value:
    """A thread-id register (`tid.x`, `ntid.x`, `ctaid.x`, `nctaid.x`) as an i32."""
    if lw.emulated:
        return lw.b.load(_thread_field(lw, SREG_FIELDS[name]), typ=I32)
    full = f"llvm.nvvm.read.ptx.sreg.{name}"
    fn = lw.m.globals.get(full) or ll.Function(lw.m, ll.FunctionType(I32, []), full)
    return lw.b.call(fn, [])


def lower_shared_array(lw: Any, s: ir.SharedArray) -> None:
    """An ndarray handle on block shared memory: a global of the module on the GPU, the next bytes of the
    emulated block's shared memory otherwise. Every shared array of a task has its own storage."""
    from quadrants.codegen.lower import NdInfo

    at = s.type
    assert isinstance(at, ir.NdType)
    elem = mem(at.dtype)
    count = 1
    for n in s.shape:
        count *= n
    size = count * max(1, at.dtype.bits // 8)
    if lw.emulated:
        base = lw.b.load(_thread_field(lw, 4), typ=PTR)
        data = lw.b.gep(base, [ll.Constant(I64, lw.shared_bytes)], source_etype=ll.IntType(8))
    else:
        arr = ll.ArrayType(elem, count)
        g = ll.GlobalVariable(lw.m, arr, f"{lw.fn.name}_shared{len(lw.shared_arrays)}", addrspace=3)
        g.linkage = "internal"
        g.initializer = ll.Constant(arr, ll.Undefined)
        g.align = 16
        data = lw.b.addrspacecast(g, PTR)
    lw.shared_arrays.append(size)
    lw.shared_bytes += -(-size // 16) * 16  # each array 16-byte aligned
    lw.nd[id(s)] = NdInfo(data, [ll.Constant(I64, n) for n in s.shape])


def lower_simt(lw: Any, s: ir.Simt) -> None:
    b = lw.b
    if s.op == "block_thread_idx":
        lw.values[id(s)] = sreg(lw, "tid.x")
        return
    if s.op == "clock_counter":
        from quadrants.codegen.lower import clock_counter

        lw.values[id(s)] = clock_counter(lw, "llvm.readcyclecounter" if lw.emulated else "llvm.nvvm.read.ptx.sreg.clock64")
        return
    if s.op in ("block_sync", "warp_sync"):
        if lw.emulated:
            _emulated_barrier(lw)
        elif s.op == "block_sync":
            b.call(ll.InlineAsm(ll.FunctionType(VOID, []), "bar.sync 0;", "~{memory}", side_effect=True), [])
        else:
            mask = lw.v(s.args[0])
            b.call(ll.InlineAsm(ll.FunctionType(VOID, [I32]), "bar.warp.sync $0;", "r,~{memory}", side_effect=True),
                   [mask])  # fmt: skip
        lw.values[id(s)] = ll.Constant(I32, 0)
        return
    mask, value, offset = (lw.v(a) for a in s.args)
    t = s.type
    assert isinstance(t, PrimitiveType)
    lw.values[id(s)] = (
        _emulated_shuffle(lw, s.op, value, offset, t) if lw.emulated else _shuffle(lw, s.op, mask, value, offset, t)
    )


_PTX_SHUFFLE = {"shfl_down": ("down", 31), "shfl_up": ("up", 0), "shfl_xor": ("bfly", 31), "shfl": ("idx", 31)}


def _shuffle(lw: Any, op: str, mask: ll.Value, value: ll.Value, offset: ll.Value, t: PrimitiveType) -> ll.Value:
    mode, clamp = _PTX_SHUFFLE[op]
    suffix = "f32" if t.is_float else "i32"
    name = f"llvm.nvvm.shfl.sync.{mode}.{suffix}"
    vt = value.type
    fn = lw.m.globals.get(name) or ll.Function(lw.m, ll.FunctionType(vt, [I32, vt, I32, I32]), name)
    return lw.b.call(fn, [mask, value, offset, ll.Constant(I32, clamp)])


def _emulated_barrier(lw: Any) -> None:
    """Call the emulator's barrier, `void (*barrier)(void *barrier_arg)` from the thread record."""
    b = lw.b
    fn = b.load(_thread_field(lw, 5), typ=ll.FunctionType(VOID, [PTR]).as_pointer())  # typed: call needs it
    b.call(fn, [b.load(_thread_field(lw, 6), typ=PTR)])


def _emulated_shuffle(lw: Any, op: str, value: ll.Value, offset: ll.Value, t: PrimitiveType) -> ll.Value:
    """A shuffle through the block's exchange area: every thread stores its value in its slot, waits at the
    barrier, reads its source lane's slot (its own value where the source lane is outside the warp or the
    block, as the hardware's clamp does), and waits again before the slots are reused."""
    b = lw.b
    tid, ntid = sreg(lw, "tid.x"), sreg(lw, "ntid.x")
    xchg = b.load(_thread_field(lw, 7), typ=PTR)
    slot_t = value.type
    b.store(value, b.gep(xchg, [b.mul(b.sext(tid, I64), ll.Constant(I64, 8))], source_etype=ll.IntType(8)))
    _emulated_barrier(lw)
    lane = b.and_(tid, ll.Constant(I32, WARP - 1))
    base = b.sub(tid, lane)
    if op == "shfl_down":
        src = b.add(lane, offset)
        ok = b.icmp_signed("<", src, ll.Constant(I32, WARP))
    elif op == "shfl_up":
        src = b.sub(lane, offset)
        ok = b.icmp_signed(">=", src, ll.Constant(I32, 0))
    elif op == "shfl_xor":
        src = b.xor(lane, offset)
        ok = b.icmp_signed("<", src, ll.Constant(I32, WARP))
    else:
        src = b.and_(offset, ll.Constant(I32, WARP - 1))
        ok = ll.Constant(ll.IntType(1), 1)
    other = b.add(base, src)
    ok = b.and_(ok, b.icmp_signed("<", other, ntid))
    other = b.select(ok, other, tid)
    got = b.load(b.gep(xchg, [b.mul(b.sext(other, I64), ll.Constant(I64, 8))], source_etype=ll.IntType(8)), typ=slot_t)
    _emulated_barrier(lw)
    return got
