"""Real functions (`ir.Function`, from `qd.real_func`) as functions of the kernel's LLVM module.

Consumes a kernel's `functions`; produces, in the module being built, one internal function per real function:

    i32 @<symbol>_f<k>(ptr ctx, <parameters>, ptr result0, ptr result1, ...)

A scalar parameter passes as its ABI type (f16 as float, u1 as i8), an ndarray as its data pointer followed by
its extents (i64 each); the results are written through the pointers (the caller's locals). It returns 0, or 1
after a failed check (the error is already recorded in the context), and its caller then leaves the same way
(`FnLowering.call_stmt`). Both backends use this: on the CPU the entry function and the tasks call them, on
NVPTX they are device functions the tasks call (recursion runs on the thread's call stack; ptxas sizes the
stack when it can, else the driver's stack limit applies).

A function's body lowers with the backend's shared statement table plus its own parameters (`ir.Arg`) and
`ir.Return` (store the results, return 0), with the backend's math strategy.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from llvmlite import ir as ll

from quadrants.codegen.llvm_types import I32, I64, PTR, abi
from quadrants.codegen.lower import CodegenOptions, FnLowering, NdInfo, StmtLowering, function_symbol
from quadrants.codegen.math import MathFactory
from quadrants.ir import nodes as ir
from quadrants.types.dtypes import PrimitiveType


def param_types(fn: ir.Function) -> list[ll.Type]:
    out: list[ll.Type] = [PTR]
    for p in fn.params:
        if isinstance(p.type, ir.NdType):
            out += [PTR] + [I64] * p.type.ndim
        elif isinstance(p.type, ir.PtrType):
            out.append(PTR)
        else:
            out.append(abi(p.type))
    return out + [PTR] * len(fn.ret_types)


def declare_functions(module: ll.Module, kernel: ir.Kernel) -> None:
    """Declare every real function first, so any caller (itself included) finds its callee."""
    for fn in kernel.functions:
        f = ll.Function(module, ll.FunctionType(I32, param_types(fn)), function_symbol(module, kernel, fn))
        f.linkage = "internal"


def lower_functions(module: ll.Module, kernel: ir.Kernel, opts: CodegenOptions, dispatch: Mapping[type, StmtLowering],
                    math: MathFactory, device_pools: bool = False) -> None:  # fmt: skip
    """Lower each real function's body, with `dispatch` (the backend's table for code without parallel loops);
    `device_pools`: a device's sparse pools (FnLowering.device_pools)."""
    table: Mapping[type, StmtLowering] = MappingProxyType({**dispatch, ir.Arg: _lower_arg, ir.Return: _lower_return})
    for fn in kernel.functions:
        f = module.globals[function_symbol(module, kernel, fn)]
        lw = FunctionLowering(module, f, opts, kernel, fn, table, math)
        lw.device_pools = device_pools
        lw.block(fn.body)
        if not lw.b.block.is_terminated:
            lw.ret_ok()
        lw.finish_entry()


class FunctionLowering(FnLowering):
    """One real function: its parameters and result pointers; a failed check returns 1."""

    def __init__(self, module: ll.Module, f: ll.Function, opts: CodegenOptions, kernel: ir.Kernel,
                 function: ir.Function, dispatch: Mapping[type, StmtLowering], math: MathFactory) -> None:  # fmt: skip
        super().__init__(module, f, f.args[0], opts, kernel, dispatch, math)
        self.on_error = lambda b: b.ret(ll.Constant(I32, 1))
        self.params: list[ll.Value | NdInfo] = []
        pos = 1
        for p in function.params:
            if isinstance(p.type, ir.NdType):
                self.params.append(NdInfo(f.args[pos], list(f.args[pos + 1 : pos + 1 + p.type.ndim])))
                pos += 1 + p.type.ndim
            else:
                self.params.append(f.args[pos])
                pos += 1
        self.results = list(f.args[pos:])

    def ret_ok(self) -> None:
        self.b.ret(ll.Constant(I32, 0))


def _lower_arg(lw: FunctionLowering, s: ir.Arg) -> None:
    p = lw.params[s.index]
    if isinstance(p, NdInfo):
        lw.nd[id(s)] = p
    elif isinstance(s.type, ir.PtrType):
        lw.values[id(s)] = p
    else:
        assert isinstance(s.type, PrimitiveType)
        lw.values[id(s)] = lw.from_abi(p, s.type)


def _lower_return(lw: FunctionLowering, s: ir.Return) -> None:
    for v, ptr in zip(s.values, lw.results):
        t = v.type
        assert isinstance(t, PrimitiveType)
        lw.b.store(lw.to_mem(lw.v(v), t), ptr)
    lw.ret_ok()
    lw.dead_block()


__all__ = ["declare_functions", "lower_functions", "param_types", "FunctionLowering"]
