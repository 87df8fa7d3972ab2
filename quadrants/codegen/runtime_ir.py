"""The native runtime, written as LLVM IR: one small library per process, shared by every kernel.

It is compiled once (and linked before any kernel) instead of into every kernel module, which keeps a kernel's
compile time to its own code. Symbols carry `RUNTIME_ABI` in their names, so two builds never mix.

- `qd_rt1_parallel_for(task, frame, begin, end, nthreads, grain, ctx)`: runs `task(frame, lo, hi)` over
  [begin, end). Small ranges run inline on the calling thread; larger ones start `nthreads - 1` pthreads
  that, with the caller, take chunks from an atomic counter (dynamic scheduling), then joins them. Starting
  threads inside native code is what measured fastest (DESIGN-NOTES: 2.12x on 2 cores), and keeps one
  Python->native call per launch. A failed `pthread_create` only means fewer helpers.
- `qd_rt1_record_error(ctx, code, site, index, dim, extent)`: the first failing check of a launch wins.

`ipow` (integer power by squaring; negative exponents give 1/base^n truncated) is small and type-specific, so
it is emitted into the kernel modules that use it, where it can be inlined.
"""

from __future__ import annotations

from llvmlite import ir as ll

from quadrants.codegen.llvm_types import CTX_DIM, CTX_ERROR, CTX_EXTENT, CTX_INDEX, CTX_SITE, CTX_TYPE, I1, I32, I64, PTR, VOID

RUNTIME_ABI = 1
PARALLEL_FOR = f"qd_rt{RUNTIME_ABI}_parallel_for"
RECORD_ERROR = f"qd_rt{RUNTIME_ABI}_record_error"
RUNTIME_SYMBOLS = (PARALLEL_FOR, RECORD_ERROR)
TASK_TYPE = ll.FunctionType(VOID, [PTR, I64, I64])
PARALLEL_FOR_TYPE = ll.FunctionType(VOID, [PTR, PTR, I64, I64, I32, I64, PTR])
RECORD_ERROR_TYPE = ll.FunctionType(VOID, [PTR, I32, I64, I64, I64, I64])
# job: { ptr task, ptr frame, i64 next, i64 end, i64 chunk, ptr ctx }
JOB_TYPE = ll.LiteralStructType([PTR, PTR, I64, I64, I64, PTR])


def opaque_alloca(b: ll.IRBuilder, t: ll.Type, size: ll.Value | None = None, name: str = "") -> ll.Value:
    """An alloca whose value is an opaque `ptr` (llvmlite's IR layer types pointers by default, and its type
    checks then reject the opaque pointers the rest of the code uses)."""
    a = b.alloca(t, size=size, name=name)
    a.type = PTR
    return a


def call_ptr(b: ll.IRBuilder, fnptr: ll.Value, fnty: ll.FunctionType, args: list[ll.Value]) -> ll.Value:
    """Call through an opaque function pointer. llvmlite needs a typed function pointer to know the callee's
    type, and `IRBuilder.bitcast` drops a ptr->typed-ptr cast as a no-op, so the cast is inserted directly."""
    cast = ll.instructions.CastInstr(b.block, "bitcast", fnptr, fnty.as_pointer())
    b._insert(cast)  # noqa: SLF001
    return b.call(cast, args)


def _fn(module: ll.Module, name: str, fnty: ll.FunctionType) -> ll.Function:
    if name in module.globals:
        return module.globals[name]  # type: ignore[no-any-return]
    fn = ll.Function(module, fnty, name)
    fn.linkage = "internal"
    return fn


def _declare(module: ll.Module, name: str, fnty: ll.FunctionType) -> ll.Function:
    if name in module.globals:
        return module.globals[name]  # type: ignore[no-any-return]
    return ll.Function(module, fnty, name)


def declare_parallel_for(module: ll.Module) -> ll.Function:
    return _declare(module, PARALLEL_FOR, PARALLEL_FOR_TYPE)


def declare_record_error(module: ll.Module) -> ll.Function:
    return _declare(module, RECORD_ERROR, RECORD_ERROR_TYPE)


def runtime_module(triple: str, data_layout: str) -> ll.Module:
    """The runtime library's module."""
    module = ll.Module(name="qd_runtime")
    module.triple = triple
    module.data_layout = data_layout
    _parallel_for(module)
    _record_error(module)
    return module


def _parallel_for(module: ll.Module) -> ll.Function:
    worker = _worker(module)
    create = _declare(module, "pthread_create", ll.FunctionType(I32, [PTR, PTR, PTR, PTR]))
    join = _declare(module, "pthread_join", ll.FunctionType(I32, [I64, PTR]))
    fn = ll.Function(module, PARALLEL_FOR_TYPE, PARALLEL_FOR)
    task, frame, begin, end, nthreads, grain, ctx = fn.args
    entry = fn.append_basic_block("entry")
    inline = fn.append_basic_block("inline")
    spawn = fn.append_basic_block("spawn")
    done = fn.append_basic_block("done")
    b = ll.IRBuilder(entry)
    job = opaque_alloca(b, JOB_TYPE)
    n = b.sub(end, begin)
    nt64 = b.sext(nthreads, I64)
    small = b.or_(b.icmp_signed("<=", nthreads, ll.Constant(I32, 1)), b.icmp_signed("<", n, b.add(grain, grain)))
    check = fn.append_basic_block("check")
    b.cbranch(b.icmp_signed("<=", n, ll.Constant(I64, 0)), done, check)
    b.position_at_end(check)
    b.cbranch(small, inline, spawn)

    b.position_at_end(inline)
    call_ptr(b, task, TASK_TYPE, [frame, begin, end])
    b.branch(done)

    b.position_at_end(spawn)
    # chunk = max(grain, n / (32 * nthreads)); helpers = min(nthreads, ceil(n / chunk)) - 1
    per = b.sdiv(n, b.mul(nt64, ll.Constant(I64, 32)))
    chunk = b.select(b.icmp_signed(">", per, grain), per, grain)
    chunks = b.sdiv(b.add(n, b.sub(chunk, ll.Constant(I64, 1))), chunk)
    used = b.select(b.icmp_signed("<", chunks, nt64), chunks, nt64)
    helpers = b.sub(used, ll.Constant(I64, 1))
    for i, v in enumerate((task, frame, begin, end, chunk, ctx)):
        b.store(v, b.gep(job, [ll.Constant(I32, 0), ll.Constant(I32, i)], source_etype=JOB_TYPE))
    tids = opaque_alloca(b, I64, size=b.add(helpers, ll.Constant(I64, 1)))
    ok = opaque_alloca(b, I1, size=b.add(helpers, ll.Constant(I64, 1)))

    def start_one(i: ll.Value) -> None:
        rc = b.call(create, [b.gep(tids, [i], source_etype=I64), ll.Constant(PTR, None), worker.bitcast(PTR), job])
        b.store(b.icmp_signed("==", rc, ll.Constant(I32, 0)), b.gep(ok, [i], source_etype=I1))

    _counted_loop(fn, b, helpers, start_one)
    b.call(worker, [job])

    def join_one(i: ll.Value) -> None:
        created = b.load(b.gep(ok, [i], source_etype=I1), typ=I1)
        with b.if_then(created):
            b.call(join, [b.load(b.gep(tids, [i], source_etype=I64), typ=I64), ll.Constant(PTR, None)])

    _counted_loop(fn, b, helpers, join_one)
    b.branch(done)

    b.position_at_end(done)
    b.ret_void()
    return fn


def _counted_loop(fn: ll.Function, b: ll.IRBuilder, count: ll.Value, body: object) -> None:
    """for (i = 0; i < count; ++i) body(i) -- leaves the builder after the loop."""
    pre = b.block
    head = fn.append_basic_block("loop.head")
    loop = fn.append_basic_block("loop.body")
    out = fn.append_basic_block("loop.out")
    b.branch(head)
    b.position_at_end(head)
    i = b.phi(I64)
    i.add_incoming(ll.Constant(I64, 0), pre)
    b.cbranch(b.icmp_signed("<", i, count), loop, out)
    b.position_at_end(loop)
    body(i)  # type: ignore[operator]
    nxt = b.add(i, ll.Constant(I64, 1))
    i.add_incoming(nxt, b.block)
    b.branch(head)
    b.position_at_end(out)


def _worker(module: ll.Module) -> ll.Function:
    fn = _fn(module, f"qd_rt{RUNTIME_ABI}_worker", ll.FunctionType(PTR, [PTR]))
    (job,) = fn.args
    entry = fn.append_basic_block("entry")
    loop = fn.append_basic_block("loop")
    run = fn.append_basic_block("run")
    out = fn.append_basic_block("out")
    b = ll.IRBuilder(entry)

    def field(i: int) -> ll.Value:
        return b.gep(job, [ll.Constant(I32, 0), ll.Constant(I32, i)], source_etype=JOB_TYPE)

    task = b.load(field(0), typ=PTR)
    frame = b.load(field(1), typ=PTR)
    end = b.load(field(3), typ=I64)
    chunk = b.load(field(4), typ=I64)
    ctx = b.load(field(5), typ=PTR)
    b.branch(loop)
    b.position_at_end(loop)
    err_ptr = b.gep(ctx, [ll.Constant(I32, 0), ll.Constant(I32, CTX_ERROR)], source_etype=CTX_TYPE)
    err = b.load_atomic(err_ptr, "monotonic", 4, typ=I32)
    start = b.atomic_rmw("add", field(2), chunk, "monotonic")
    stop_now = b.or_(b.icmp_signed("!=", err, ll.Constant(I32, 0)), b.icmp_signed(">=", start, end))
    b.cbranch(stop_now, out, run)
    b.position_at_end(run)
    hi = b.add(start, chunk)
    hi = b.select(b.icmp_signed("<", hi, end), hi, end)
    call_ptr(b, task, TASK_TYPE, [frame, start, hi])
    b.branch(loop)
    b.position_at_end(out)
    b.ret(ll.Constant(PTR, None))
    return fn


def _record_error(module: ll.Module) -> ll.Function:
    fn = ll.Function(module, RECORD_ERROR_TYPE, RECORD_ERROR)
    ctx, code, site, index, dim, extent = fn.args
    b = ll.IRBuilder(fn.append_basic_block("entry"))
    err_ptr = b.gep(ctx, [ll.Constant(I32, 0), ll.Constant(I32, CTX_ERROR)], source_etype=CTX_TYPE)
    res = b.cmpxchg(err_ptr, ll.Constant(I32, 0), code, "monotonic", "monotonic")
    won = b.extract_value(res, 1)
    with b.if_then(won):
        for slot, v in ((CTX_SITE, site), (CTX_INDEX, index), (CTX_DIM, dim), (CTX_EXTENT, extent)):
            b.store(v, b.gep(ctx, [ll.Constant(I32, 0), ll.Constant(I32, slot)], source_etype=CTX_TYPE))
    b.ret_void()
    return fn


def ipow(module: ll.Module, t: ll.IntType, signed: bool) -> ll.Function:
    name = f"qd_ipow_{'i' if signed else 'u'}{t.width}"
    if name in module.globals:
        return module.globals[name]  # type: ignore[no-any-return]
    fn = _fn(module, name, ll.FunctionType(t, [t, t]))
    base, exp = fn.args
    entry = fn.append_basic_block("entry")
    neg = fn.append_basic_block("neg")
    loop = fn.append_basic_block("loop")
    out = fn.append_basic_block("out")
    b = ll.IRBuilder(entry)
    one = ll.Constant(t, 1)
    zero = ll.Constant(t, 0)
    if signed:
        b.cbranch(b.icmp_signed("<", exp, zero), neg, loop)
    else:
        b.branch(loop)
    # exp < 0: 1 / base**-exp truncated: 1 for base 1, +-1 for base -1, else 0.
    b.position_at_end(neg)
    odd = b.icmp_signed("!=", b.and_(exp, one), zero)
    m1 = b.select(odd, ll.Constant(t, -1), one)
    r = b.select(b.icmp_signed("==", base, one), one, b.select(b.icmp_signed("==", base, ll.Constant(t, -1)), m1, zero))
    b.ret(r)
    b.position_at_end(loop)
    acc = b.phi(t)
    bb = b.phi(t)
    e = b.phi(t)
    acc.add_incoming(one, entry)
    bb.add_incoming(base, entry)
    e.add_incoming(exp, entry)
    lowbit = b.icmp_signed("!=", b.and_(e, one), zero)
    acc2 = b.select(lowbit, b.mul(acc, bb), acc)
    bb2 = b.mul(bb, bb)
    e2 = b.lshr(e, one)
    acc.add_incoming(acc2, loop)
    bb.add_incoming(bb2, loop)
    e.add_incoming(e2, loop)
    b.cbranch(b.icmp_unsigned("==", e2, zero), out, loop)
    b.position_at_end(out)
    b.ret(acc2)
    return fn


__all__ = ["TASK_TYPE", "runtime_module", "declare_parallel_for", "declare_record_error", "ipow", "I1"]
