"""The native runtime: `runtime.ll` (parallel loops on a thread pool, error recording), compiled once per
process and shared by every kernel, plus the declarations kernels use to call it.

Keeping the runtime out of kernel modules keeps a kernel's compile time to its own code. Symbols carry
`RUNTIME_ABI` in their names, so code built against another runtime version never links by accident.

`ipow` (integer power by squaring) is small and type-specific, so it is emitted into the kernel modules that
use it, where it can be inlined. A negative exponent counts by its magnitude (`2 ** -3` is 8), as Quadrants
computes it; `debug=True` kernels check the exponent first (the frontend's assert).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from llvmlite import ir as ll

from quadrants.codegen.llvm_types import I32, I64, PTR, VOID
from quadrants.runtime.abi import RUNTIME_ABI  # noqa: F401 - re-exported

PARALLEL_FOR = f"qd_rt{RUNTIME_ABI}_parallel_for"
RECORD_ERROR = f"qd_rt{RUNTIME_ABI}_record_error"
RUNTIME_SYMBOLS = (PARALLEL_FOR, RECORD_ERROR)
TASK_TYPE = ll.FunctionType(VOID, [PTR, I64, I64])
PARALLEL_FOR_TYPE = ll.FunctionType(VOID, [PTR, PTR, I64, I64, I32, I64, PTR])
RECORD_ERROR_TYPE = ll.FunctionType(VOID, [PTR, I32, I64, I64, I64, I64])


def opaque_alloca(b: ll.IRBuilder, t: ll.Type, size: ll.Value | None = None, name: str = "") -> ll.Value:
    """An alloca whose value is an opaque `ptr` (llvmlite's IR layer types pointers by default, and its type
    checks then reject the opaque pointers the rest of the code uses)."""
    a = b.alloca(t, size=size, name=name)
    a.type = PTR
    return a


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


FUTEX_SYSCALL = {"x86_64": 202, "aarch64": 98}


# Quadrants runs kernels with denormal results flushed to zero (x86 MXCSR.FTZ, bit 15; aarch64 FPCR.FZ, bit 24)
# and denormal inputs kept (no DAZ): a kernel's entry sets the mode for its call and restores the caller's, so
# Python and numpy code between launches keeps IEEE results; the runtime's workers set it before each job.
FTZ_BITS = {"x86_64": 1 << 15, "aarch64": 1 << 24}
_SET_FTZ_IR = {
    "x86_64": """  %p = alloca i32
  call void @llvm.x86.sse.stmxcsr(ptr %p)
  %old = load i32, ptr %p
  %new = or i32 %old, 32768
  store i32 %new, ptr %p
  call void @llvm.x86.sse.ldmxcsr(ptr %p)
  ret void
}
declare void @llvm.x86.sse.stmxcsr(ptr)
declare void @llvm.x86.sse.ldmxcsr(ptr)""",
    "aarch64": """  %old = call i64 @llvm.aarch64.get.fpcr()
  %new = or i64 %old, 16777216
  call void @llvm.aarch64.set.fpcr(i64 %new)
  ret void
}
declare i64 @llvm.aarch64.get.fpcr()
declare void @llvm.aarch64.set.fpcr(i64)""",
}


def flush_to_zero_entry(module: ll.Module, fnty: ll.FunctionType, symbol: str, body: ll.Function) -> ll.Function:
    """The kernel's exported entry `symbol`: the caller's floating-point mode saved, flush-to-zero set, `body`
    called, the mode restored (on every return: `body` returns here). Other targets call `body` only."""
    fn = ll.Function(module, fnty, symbol)
    b = ll.IRBuilder(fn.append_basic_block("entry"))
    arch = module.triple.split("-")[0]
    restore: Callable[[], None] = lambda: None  # noqa: E731
    if arch == "x86_64":
        st = _declare(module, "llvm.x86.sse.stmxcsr", ll.FunctionType(VOID, [PTR]))
        ld = _declare(module, "llvm.x86.sse.ldmxcsr", ll.FunctionType(VOID, [PTR]))
        saved, mode = opaque_alloca(b, I32, name="mxcsr.caller"), opaque_alloca(b, I32, name="mxcsr.kernel")
        b.call(st, [saved])
        b.store(b.or_(b.load(saved, typ=I32), ll.Constant(I32, FTZ_BITS[arch])), mode)
        b.call(ld, [mode])
        restore = lambda: b.call(ld, [saved])  # noqa: E731
    elif arch == "aarch64":
        get = _declare(module, "llvm.aarch64.get.fpcr", ll.FunctionType(I64, []))
        put = _declare(module, "llvm.aarch64.set.fpcr", ll.FunctionType(VOID, [I64]))
        old = b.call(get, [])
        b.call(put, [b.or_(old, ll.Constant(I64, FTZ_BITS[arch]))])
        restore = lambda: b.call(put, [old])  # noqa: E731
    result = b.call(body, list(fn.args))
    restore()
    b.ret(result)
    return fn


def runtime_module_text(triple: str, data_layout: str) -> str:
    """The runtime library's LLVM IR for `triple` (Linux: the pool sleeps on futexes)."""
    arch = triple.split("-")[0]
    if "linux" not in triple or arch not in FUTEX_SYSCALL:
        raise NotImplementedError(f"the native runtime supports Linux on {sorted(FUTEX_SYSCALL)}, not {triple}")
    text = (Path(__file__).parent / "runtime.ll").read_text()
    text = text.replace("{{SYS_FUTEX}}", str(FUTEX_SYSCALL[arch])).replace("{{ABI}}", str(RUNTIME_ABI))
    text = text.replace("{{SET_FTZ}}", _SET_FTZ_IR[arch])
    return f'target triple = "{triple}"\ntarget datalayout = "{data_layout}"\n' + text


def ipow(module: ll.Module, t: ll.IntType, signed: bool) -> ll.Function:
    name = f"qd_ipow_{'i' if signed else 'u'}{t.width}"
    if name in module.globals:
        return module.globals[name]  # type: ignore[no-any-return]
    fn = _fn(module, name, ll.FunctionType(t, [t, t]))
    base, exp = fn.args
    entry = fn.append_basic_block("entry")
    loop = fn.append_basic_block("loop")
    out = fn.append_basic_block("out")
    b = ll.IRBuilder(entry)
    one = ll.Constant(t, 1)
    zero = ll.Constant(t, 0)
    if signed:  # a negative exponent counts by its magnitude, as in Quadrants
        exp = b.select(b.icmp_signed("<", exp, zero), b.neg(exp), exp)
    b.branch(loop)
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


__all__ = ["TASK_TYPE", "runtime_module_text", "declare_parallel_for", "declare_record_error", "ipow"]
