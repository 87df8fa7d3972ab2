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

from quadrants.codegen.llvm_types import F64, I1, I32, I64, PTR, VOID, mem
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
    op = s.op
    if op in _SREGS:
        lw.values[id(s)] = sreg(lw, _SREGS[op])
        return
    if op == "lane_id":  # blocks are one-dimensional: the lane is tid.x's low bits (%laneid on the GPU)
        lw.values[id(s)] = b.and_(sreg(lw, "tid.x"), ll.Constant(I32, WARP - 1)) if lw.emulated else sreg(lw, "laneid")
        return
    if op == "clock_counter":
        from quadrants.codegen.lower import clock_counter

        lw.values[id(s)] = clock_counter(lw, "llvm.readcyclecounter" if lw.emulated else "llvm.nvvm.read.ptx.sreg.clock64")
        return
    if op in ("block_sync", "warp_sync"):
        if lw.emulated:
            _emulated_barrier(lw)
        elif op == "block_sync":
            b.call(ll.InlineAsm(ll.FunctionType(VOID, []), "bar.sync 0;", "~{memory}", side_effect=True), [])
        else:
            mask = lw.v(s.args[0])
            b.call(ll.InlineAsm(ll.FunctionType(VOID, [I32]), "bar.warp.sync $0;", "r,~{memory}", side_effect=True),
                   [mask])  # fmt: skip
        lw.values[id(s)] = ll.Constant(I32, 0)
        return
    if op in ("fence_block", "fence_grid"):
        if lw.emulated:
            b.fence("seq_cst")
        else:
            _intrinsic(lw, "llvm.nvvm.membar.cta" if op == "fence_block" else "llvm.nvvm.membar.gl", VOID, [])
        lw.values[id(s)] = ll.Constant(I32, 0)
        return
    if op == "active_mask":
        lw.values[id(s)] = _emulated_active(lw) if lw.emulated else b.call(
            ll.InlineAsm(ll.FunctionType(I32, []), "activemask.b32 $0;", "=r", side_effect=True), [])  # fmt: skip
        return
    args = [lw.v(a) for a in s.args]
    if op in _VOTES or op == "ballot":
        lw.values[id(s)] = _emulated_vote(lw, op, args[1]) if lw.emulated else _vote(lw, op, args[0], args[1])
        return
    if op in ("match_any", "match_all"):
        lw.values[id(s)] = _emulated_match(lw, op, args[1]) if lw.emulated else _match(lw, op, args[0], args[1])
        return
    if op.startswith("block_sync_"):
        fold = op.removeprefix("block_sync_")
        lw.values[id(s)] = _emulated_block_fold(lw, fold, args[0]) if lw.emulated else b.call(
            _declare(lw, f"llvm.nvvm.barrier0.{_BARRIER_FOLDS[fold]}", I32, [I32]), [args[0]])  # fmt: skip
        return
    mask, value, offset = args
    t = s.type
    assert isinstance(t, PrimitiveType)
    lw.values[id(s)] = _emulated_shuffle(lw, op, value, offset) if lw.emulated else shuffle(lw, op, mask, value, offset, t)


_PTX_SHUFFLE = {"shfl_down": ("down", 31), "shfl_up": ("up", 0), "shfl_xor": ("bfly", 31), "shfl": ("idx", 31)}
_SREGS = {"block_thread_idx": "tid.x", "block_idx": "ctaid.x", "block_dim": "ntid.x"}
_VOTES = {"vote_all": "all", "vote_any": "any", "vote_uni": "uni"}
_BARRIER_FOLDS = {"and": "and", "or": "or", "count": "popc"}


def _declare(lw: Any, name: str, ret: ll.Type, params: list[ll.Type]) -> ll.Function:
    return lw.m.globals.get(name) or ll.Function(lw.m, ll.FunctionType(ret, params), name)  # type: ignore[no-any-return]


def _intrinsic(lw: Any, name: str, ret: ll.Type, args: list[ll.Value]) -> ll.Value:
    return lw.b.call(_declare(lw, name, ret, [a.type for a in args]), args)


def shuffle(lw: Any, op: str, mask: ll.Value, value: ll.Value, offset: ll.Value, t: PrimitiveType) -> ll.Value:
    """`shfl.sync` on the GPU (32-bit registers: a 64-bit value moves as its two halves); also codegen/cuda.py's
    warp combining of loop reductions."""
    b = lw.b
    mode, clamp = _PTX_SHUFFLE[op]

    def move(v: ll.Value, is_float: bool) -> ll.Value:
        name = f"llvm.nvvm.shfl.sync.{mode}.{'f32' if is_float else 'i32'}"
        return _intrinsic(lw, name, v.type, [mask, v, offset, ll.Constant(I32, clamp)])

    if t.bits != 64:
        return move(value, t.is_float)
    bits = b.bitcast(value, I64) if t.is_float else value
    lo = move(b.trunc(bits, I32), False)
    hi = move(b.trunc(b.lshr(bits, ll.Constant(I64, 32)), I32), False)
    out = b.or_(b.zext(lo, I64), b.shl(b.zext(hi, I64), ll.Constant(I64, 32)))
    return b.bitcast(out, F64) if t.is_float else out


def _vote(lw: Any, op: str, mask: ll.Value, pred: ll.Value) -> ll.Value:
    b = lw.b
    bit = b.icmp_unsigned("!=", pred, ll.Constant(pred.type, 0))
    if op == "ballot":
        return _intrinsic(lw, "llvm.nvvm.vote.ballot.sync", I32, [mask, bit])
    return b.zext(_intrinsic(lw, f"llvm.nvvm.vote.{_VOTES[op]}.sync", I1, [mask, bit]), I32)


def _match(lw: Any, op: str, mask: ll.Value, value: ll.Value) -> ll.Value:
    """`match.{any,all}.sync.b32/b64` (sm_70 and later); match_all gives its mask only where every lane agrees."""
    width = "i64" if value.type == I64 else "i32"
    if op == "match_any":
        return _intrinsic(lw, f"llvm.nvvm.match.any.sync.{width}", I32, [mask, value])
    pair = _intrinsic(lw, f"llvm.nvvm.match.all.sync.{width}p", ll.LiteralStructType([I32, I1]), [mask, value])
    return lw.b.extract_value(pair, 0)


# ---- emulated: the block's threads side by side (runtime/emulator.py) -------------------------------------------


def _emulated_barrier(lw: Any) -> None:
    """Call the emulator's barrier, `void (*barrier)(void *barrier_arg)` from the thread record."""
    b = lw.b
    fn = b.load(_thread_field(lw, 5), typ=ll.FunctionType(VOID, [PTR]).as_pointer())  # typed: call needs it
    b.call(fn, [b.load(_thread_field(lw, 6), typ=PTR)])


def _slot(lw: Any, thread: ll.Value) -> ll.Value:
    """The exchange slot (8 bytes) of block thread `thread` (i32)."""
    b = lw.b
    xchg = b.load(_thread_field(lw, 7), typ=PTR)
    return b.gep(xchg, [b.mul(b.sext(thread, I64), ll.Constant(I64, 8))], source_etype=ll.IntType(8))


def _publish(lw: Any, value: ll.Value) -> None:
    """Every thread stores its value in its exchange slot and waits for the block (the reads follow)."""
    lw.b.store(value, _slot(lw, sreg(lw, "tid.x")))
    _emulated_barrier(lw)


def _emulated_shuffle(lw: Any, op: str, value: ll.Value, offset: ll.Value) -> ll.Value:
    """A shuffle through the block's exchange area: every thread stores its value in its slot, waits at the
    barrier, reads its source lane's slot (its own value where the source lane is outside the warp or the
    block, as the hardware's clamp does), and waits again before the slots are reused."""
    b = lw.b
    tid, ntid = sreg(lw, "tid.x"), sreg(lw, "ntid.x")
    _publish(lw, value)
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
    got = b.load(_slot(lw, b.select(ok, other, tid)), typ=value.type)
    _emulated_barrier(lw)
    return got


def _emulated_active(lw: Any) -> ll.Value:
    """The warp's lanes that exist: all 32, or the block's last, partial warp's."""
    b = lw.b
    tid, ntid = sreg(lw, "tid.x"), sreg(lw, "ntid.x")
    left = b.sub(ntid, b.sub(tid, b.and_(tid, ll.Constant(I32, WARP - 1))))  # lanes from the warp's first on
    partial = b.sub(b.shl(ll.Constant(I32, 1), left), ll.Constant(I32, 1))
    return b.select(b.icmp_signed(">=", left, ll.Constant(I32, WARP)), ll.Constant(I32, FULL_MASK), partial)


def _gather_warp(lw: Any, each: Any) -> ll.Value:
    """OR over the warp's existing lanes k of `each(k, slot k's value)` (an i32 per lane), after every thread
    published its value; a barrier follows so the slots can be reused."""
    b = lw.b
    tid, ntid = sreg(lw, "tid.x"), sreg(lw, "ntid.x")
    base = b.sub(tid, b.and_(tid, ll.Constant(I32, WARP - 1)))
    acc: ll.Value = ll.Constant(I32, 0)
    for k in range(WARP):
        other = b.add(base, ll.Constant(I32, k))
        exists = b.icmp_signed("<", other, ntid)
        got = b.load(_slot(lw, b.select(exists, other, tid)), typ=I64)
        acc = b.or_(acc, b.select(exists, each(k, got), ll.Constant(I32, 0)))
    _emulated_barrier(lw)
    return acc


def _emulated_vote(lw: Any, op: str, pred: ll.Value) -> ll.Value:
    b = lw.b
    bit = b.icmp_unsigned("!=", pred, ll.Constant(pred.type, 0))
    _publish(lw, b.zext(bit, I64))
    ballot = _gather_warp(lw, lambda k, v: b.shl(b.trunc(v, I32), ll.Constant(I32, k)))
    if op == "ballot":
        return ballot
    active = _emulated_active(lw)
    if op == "vote_all":
        agree = b.icmp_unsigned("==", ballot, active)
    elif op == "vote_any":
        agree = b.icmp_unsigned("!=", ballot, ll.Constant(I32, 0))
    else:
        agree = b.or_(b.icmp_unsigned("==", ballot, active), b.icmp_unsigned("==", ballot, ll.Constant(I32, 0)))
    return b.zext(agree, I32)


def _emulated_match(lw: Any, op: str, value: ll.Value) -> ll.Value:
    b = lw.b
    wide = value if value.type == I64 else b.zext(value, I64)
    _publish(lw, wide)
    same = _gather_warp(lw, lambda k, v: b.shl(b.zext(b.icmp_unsigned("==", v, wide), I32), ll.Constant(I32, k)))
    if op == "match_any":
        return same
    return b.select(b.icmp_unsigned("==", same, _emulated_active(lw)), same, ll.Constant(I32, 0))


def _emulated_block_fold(lw: Any, fold: str, pred: ll.Value) -> ll.Value:
    """`bar.red.{and,or,popc}`: every thread publishes whether its predicate is non-zero, then counts the block's
    in a loop over its threads."""
    b = lw.b
    ntid = sreg(lw, "ntid.x")
    _publish(lw, b.zext(b.icmp_unsigned("!=", pred, ll.Constant(pred.type, 0)), I64))
    entry = b.block
    head, body, done = (lw.fn.append_basic_block(f"block_fold_{n}") for n in ("head", "body", "done"))
    b.branch(head)
    b.position_at_end(head)
    k = b.phi(I32)
    count = b.phi(I32)
    k.add_incoming(ll.Constant(I32, 0), entry)
    count.add_incoming(ll.Constant(I32, 0), entry)
    b.cbranch(b.icmp_signed("<", k, ntid), body, done)
    b.position_at_end(body)
    more = b.add(count, b.trunc(b.load(_slot(lw, k), typ=I64), I32))
    k.add_incoming(b.add(k, ll.Constant(I32, 1)), body)
    count.add_incoming(more, body)
    b.branch(head)
    b.position_at_end(done)
    _emulated_barrier(lw)
    if fold == "count":
        return count
    return b.zext(b.icmp_signed("==", count, ntid) if fold == "and" else b.icmp_signed(">", count, ll.Constant(I32, 0)),
                  I32)  # fmt: skip
