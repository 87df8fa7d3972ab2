"""Lower IR statements into one LLVM function (the shared part of every backend).

Consumes IR blocks; produces llvmlite instructions in the function being built. `FnLowering` knows nothing of
entry points or tasks: `codegen/kernel.py` (CPU) and `codegen/cuda.py` decide which statements go into which
function and what each function receives; this module turns statements into instructions, one method per IR
node class. Which method lowers which statement class is a table each backend builds explicitly from
`SHARED_DISPATCH` (adding its own arguments and parallel loops) and hands to `FnLowering`, together with its math
strategy (codegen/math.py); nothing here is changed after import.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import numpy as np
from llvmlite import ir as ll

from quadrants.codegen import quant, runtime_ir, sparse
from quadrants.codegen.adstack import lower_adstack, lower_pop, lower_push, lower_top
from quadrants.codegen.atomics import Slot, lower_atomic, lower_reduce
from quadrants.codegen.llvm_types import (
    CTX_REGIONS,
    CTX_RESULT,
    CTX_TYPE,
    ERROR_ASSERT,
    ERROR_BOUNDS,
    F32,
    I8,
    I32,
    I64,
    PTR,
    mem,
    reg,
)  # fmt: skip
from quadrants.codegen.math import MathFactory
from quadrants.codegen.overflow import flag_overflow
from quadrants.codegen.printing import lower_print
from quadrants.codegen.random import lower_random
from quadrants.codegen.runtime_ir import opaque_alloca
from quadrants.ir import nodes as ir
from quadrants.types import dtypes
from quadrants.types.dtypes import PrimitiveType

# Fast-math without nnan/ninf: reassociation (vectorized reductions), approximate functions, reciprocals and
# signed-zero freedom; NaN and infinity keep their IEEE meaning. Contraction (a * b + c as one FMA) is the
# backend's choice (`CodegenOptions.contract`): on the CPU, real Quadrants 1.3.3 computes `a * b + c` rounded
# twice, and contracting here made the same program give other bits (Genesis' tool SDF normals, a finite
# difference of a flat field, then pointed elsewhere: the block drifted 2.7e-5 m from 0.5.2's); the CUDA
# backend contracts, as CUDA compilers do.
FAST_FLAGS = ("reassoc", "afn", "arcp", "nsz")


@dataclass
class CodegenOptions:
    fast_math: bool = True
    contract: bool = False  # with fast_math: fuse multiplies and adds (the CUDA backend)
    bounds_checked: bool = False
    error_checks: bool = False  # read the error record after each parallel task (bounds_checked, or an adstack)


@dataclass
class NdInfo:
    data: ll.Value
    shape: list[ll.Value]  # i64 extents


@dataclass
class Loop:
    cont: ll.Block
    brk: ll.Block


# Lowers one statement: called as `f(lowering, stmt)`, where `lowering` is the FnLowering (or the backend's
# subclass of it) that holds the table.
StmtLowering = Callable[..., None]


def flush_denormal(value: float, t: PrimitiveType) -> float:
    """A constant as the kernel's flush-to-zero mode computes it (runtime_ir.FTZ_BITS): an f32/f64 value below
    the type's smallest normal number is a zero of its sign, as in Quadrants (f16 keeps its denormals there)."""
    if t.bits not in (32, 64) or value == 0.0 or value != value:
        return value
    tiny = 2.0**-126 if t.bits == 32 else 2.0**-1022
    rounded = float(np.float32(value)) if t.bits == 32 else value
    return math.copysign(0.0, value) if abs(rounded) < tiny else value


def unpack_arg(b: ll.IRBuilder, buf: ll.Value, k: int, t: ll.Type) -> ll.Value:
    """Argument `k` of a packed call: the value of type `t` at the start of 8-byte slot `k` of `buf`."""
    return b.load(b.gep(buf, [ll.Constant(I64, 8 * k)], source_etype=I8), typ=t)


class _VolatileLoad(ll.LoadInstr):  # type: ignore[misc]
    """`load volatile`: LLVM keeps every one, in order, where it is (spin-waits on a flag another thread sets)."""

    def descr(self, buf: list[str]) -> None:
        inner: list[str] = []
        super().descr(inner)
        buf.append(inner[0].replace("load ", "load volatile ", 1))


class FnLowering:
    """The state of one LLVM function being lowered: its builder, the values of the IR values lowered so far,
    the enclosing loops and reduction slots; `dispatch` picks the lowering of each statement and `math` lowers
    operators."""

    device_pools = False  # sparse pools carve from their tree's arena (a device), not mmap'd chunks (the CPU)

    def __init__(self, module: ll.Module, fn: ll.Function, ctx: ll.Value, opts: CodegenOptions, kernel: ir.Kernel,
                 dispatch: Mapping[type, StmtLowering], math: MathFactory) -> None:  # fmt: skip
        self.m = module
        self.fn = fn
        self.opts = opts
        self.kernel = kernel
        self.entry = fn.append_basic_block("entry")
        self.b = ll.IRBuilder(self.entry)
        self.body_start = fn.append_basic_block("body")
        self.ctx = ctx
        self.values: dict[int, ll.Value] = {}
        self.coords: dict[int, list[ll.Value]] = {}
        self.nd: dict[int, NdInfo] = {}
        self.bit_ptrs: dict[int, tuple[Any, ll.Value]] = {}  # quantized elements: (BitSlot, bit offset)
        self.loops: list[Loop] = []
        self.slots: list[Slot] = []
        self._error_exit: ll.Block | None = None
        self.on_error: Callable[[ll.IRBuilder], None] = lambda b: b.ret_void()
        self.dispatch = dispatch  # IR statement class -> its lowering
        flags = (*FAST_FLAGS, "contract") if opts.contract else FAST_FLAGS
        self.math = math(module, self.b, flags if opts.fast_math else ())
        self.b.position_at_end(self.body_start)

    # ---- helpers ----------------------------------------------------------------------------------------

    def finish_entry(self) -> None:
        """Close the alloca block: it falls through to the body."""
        with self.b.goto_block(self.entry):
            self.b.branch(self.body_start)

    def alloca(self, t: ll.Type, name: str = "") -> ll.Value:
        with self.b.goto_block(self.entry):
            return opaque_alloca(self.b, t, name=name)

    def v(self, value: ir.Value) -> ll.Value:
        return self.values[id(value)]

    def index64(self, i: ll.Value) -> ll.Value:
        """An i32 index as an i64 (sign-extended; a constant folded, not an instruction)."""
        if isinstance(i, ll.Constant) and isinstance(i.constant, int) and isinstance(i.type, ll.IntType):
            w = i.type.width  # constants are stored unsigned (`const`)
            return ll.Constant(I64, i.constant - (1 << w) if i.constant >= 1 << (w - 1) else i.constant)
        return self.b.sext(i, I64)

    def ctx_field(self, index: int) -> ll.Value:
        return self.b.gep(self.ctx, [ll.Constant(I32, 0), ll.Constant(I32, index)], source_etype=CTX_TYPE)

    def error_exit(self) -> ll.Block:
        if self._error_exit is None:
            self._error_exit = self.fn.append_basic_block("error_exit")
            with self.b.goto_block(self._error_exit):
                self.on_error(self.b)
        return self._error_exit

    def fail(self, code: int, site: int, index: ll.Value, dim: int | ll.Value, extent: ll.Value) -> None:
        rec = runtime_ir.declare_record_error(self.m)
        d = dim if isinstance(dim, ll.Value) else ll.Constant(I64, dim)
        self.b.call(rec, [self.ctx, ll.Constant(I32, code), ll.Constant(I64, site), index, d, extent])
        self.b.branch(self.error_exit())

    def to_reg(self, value: ll.Value, t: PrimitiveType) -> ll.Value:
        """Memory representation -> register representation."""
        if t is dtypes.u1:
            return self.b.icmp_unsigned("!=", value, ll.Constant(I8, 0))
        return value

    def to_mem(self, value: ll.Value, t: PrimitiveType) -> ll.Value:
        if t is dtypes.u1:
            return self.b.zext(value, I8)
        return value

    def from_abi(self, value: ll.Value, t: PrimitiveType) -> ll.Value:
        if t is dtypes.f16:
            return self.b.fptrunc(value, reg(t))
        return self.to_reg(value, t)

    def to_abi(self, value: ll.Value, t: PrimitiveType) -> ll.Value:
        if t is dtypes.f16:
            return self.b.fpext(value, F32)
        return self.to_mem(value, t)

    def dead_block(self) -> None:
        """Continue emitting into an unreachable block (statements after break/continue/return)."""
        self.b.position_at_end(self.fn.append_basic_block("dead"))

    # ---- blocks -----------------------------------------------------------------------------------------

    def block(self, block: ir.Block) -> None:
        for s in block.stmts:
            self.stmt(s)

    def stmt(self, s: ir.Stmt) -> None:
        method = self.dispatch.get(type(s))
        if method is None:
            raise NotImplementedError(f"codegen for {type(s).__name__}")
        method(self, s)

    # ---- values -----------------------------------------------------------------------------------------

    def const(self, s: ir.Const) -> None:
        t = s.type
        assert isinstance(t, PrimitiveType)
        value: Any = float(s.value) if t.is_float else int(s.value)
        if t.is_float:
            value = flush_denormal(value, t)
        if t.is_integral and t.kind != "bool" and value < 0:
            value &= (1 << t.bits) - 1
        self.values[id(s)] = ll.Constant(reg(t), value)

    def nd_shape(self, s: ir.NdShape) -> None:
        self.values[id(s)] = self.b.trunc(self.nd[id(s.arr)].shape[s.dim], I32)

    def cast(self, s: ir.Cast) -> None:
        src = s.value.type
        dst = s.type
        assert isinstance(src, PrimitiveType) and isinstance(dst, PrimitiveType)
        x = self.v(s.value)
        if s.bitcast:
            self.values[id(s)] = self.b.bitcast(x, reg(dst))
            return
        self.values[id(s)] = self.convert(x, src, dst)

    def convert(self, x: ll.Value, src: PrimitiveType, dst: PrimitiveType) -> ll.Value:
        b = self.b
        if src is dst:
            return x
        if dst is dtypes.u1:
            if src.is_float:
                return b.fcmp_unordered("!=", x, ll.Constant(reg(src), 0.0))
            return b.icmp_unsigned("!=", x, ll.Constant(reg(src), 0))
        if src.is_float and dst.is_float:
            return b.fpext(x, reg(dst)) if dst.bits > src.bits else b.fptrunc(x, reg(dst))
        if src.is_float:
            return b.fptosi(x, reg(dst)) if dst.is_signed else b.fptoui(x, reg(dst))
        if dst.is_float:
            return b.sitofp(x, reg(dst)) if src.kind == "int" else b.uitofp(x, reg(dst))
        sw, dw = reg(src).width, reg(dst).width
        if dw < sw:
            return b.trunc(x, reg(dst))
        if dw > sw:
            return b.sext(x, reg(dst)) if src.kind == "int" else b.zext(x, reg(dst))
        return x

    def select(self, s: ir.Select) -> None:
        self.values[id(s)] = self.b.select(self.v(s.cond), self.v(s.a), self.v(s.b))

    def binary(self, s: ir.Binary) -> None:
        result = self.math.binop(s.op, self.v(s.lhs), self.v(s.rhs), s.lhs.type)  # type: ignore[arg-type]
        self.values[id(s)] = result
        if s.site >= 0:
            flag_overflow(self, s, result)

    def unary(self, s: ir.Unary) -> None:
        self.values[id(s)] = self.math.unop(s.op, self.v(s.operand), s.operand.type)  # type: ignore[arg-type]

    # ---- memory -----------------------------------------------------------------------------------------

    def alloca_stmt(self, s: ir.Alloca) -> None:
        self.values[id(s)] = self.alloca(mem(s.var_type), s.name)

    def load(self, s: ir.Load) -> None:
        if id(s.ptr) in self.bit_ptrs:
            return quant.load(self, s)
        t = s.type
        assert isinstance(t, PrimitiveType)
        loaded: ll.Instruction
        if s.volatile:
            loaded = _VolatileLoad(self.b.block, self.v(s.ptr), typ=mem(t))
            self.b._insert(loaded)  # llvmlite's builder has no volatile flag on loads
        else:
            loaded = self.b.load(self.v(s.ptr), typ=mem(t))
        self.values[id(s)] = self.to_reg(loaded, t)

    def store(self, s: ir.Store) -> None:
        if id(s.ptr) in self.bit_ptrs:
            return quant.store(self, (s.ptr,), (s.value,))
        t = s.value.type
        assert isinstance(t, PrimitiveType)
        self.b.store(self.to_mem(self.v(s.value), t), self.v(s.ptr))

    def addr(self, s: ir.Addr) -> None:
        self.values[id(s)] = self.b.ptrtoint(self.v(s.ptr), I64)

    def bit_store(self, s: ir.BitStore) -> None:
        quant.store(self, s.ptrs, s.values)

    def global_nd(self, s: ir.GlobalNd) -> None:
        """A field: its region's base address from the context's region table, plus its offset."""
        b = self.b
        table = b.load(self.ctx_field(CTX_REGIONS), typ=PTR)
        base = b.load(b.gep(table, [ll.Constant(I64, s.region)], source_etype=PTR), typ=PTR)
        data = b.gep(base, [ll.Constant(I64, s.offset)], inbounds=True, source_etype=I8)
        self.nd[id(s)] = NdInfo(data, [ll.Constant(I64, n) for n in s.shape])

    def ext_ptr(self, s: ir.ExtPtr) -> None:
        b = self.b
        nd = self.nd[id(s.arr)]
        at = s.arr.type
        assert isinstance(at, ir.NdType)
        idx = [self.index64(self.v(i)) for i in s.indices]
        if self.opts.bounds_checked:
            for d, (i, n) in enumerate(zip(idx, nd.shape)):
                bad = b.icmp_unsigned(">=", i, n)
                with b.if_then(bad, likely=False):
                    self.fail(ERROR_BOUNDS, s.site, i, d, n)
        if isinstance(s.arr, ir.GlobalNd) and s.arr.bits is not None:  # the word, and its bits (codegen/quant.py)
            quant.note_pointer(self, s, idx)
        if isinstance(s.arr, ir.GlobalNd) and s.arr.levels:
            self.values[id(s)] = sparse.element_ptr(self, s, idx)
            return
        if isinstance(s.arr, ir.GlobalNd) and s.arr.terms:
            self.values[id(s)] = self._tree_ptr(s.arr, idx, s.elem)
            return
        linear = idx[0] if idx else ll.Constant(I64, 0)
        for d in range(1, len(idx)):
            linear = b.add(b.mul(linear, nd.shape[d]), idx[d])
        if at.elem_shape:
            count, offset = 1, 0
            for e, n in zip(s.elem, at.elem_shape):
                count *= n
                offset = offset * n + e
            linear = b.add(b.mul(linear, ll.Constant(I64, count)), ll.Constant(I64, offset))
        self.values[id(s)] = b.gep(nd.data, [linear], inbounds=True, source_etype=mem(at.dtype))

    def _tree_ptr(self, arr: ir.GlobalNd, idx: list[ll.Value], elem: tuple[int, ...]) -> ll.Value:
        """An element of a field placed in an SNode tree: the byte offset of each nested level's digit of each
        index (ir.GlobalNd.terms; unsigned: the indices were checked or are the program's promise), then the
        component, contiguous within the cell."""
        b = self.b
        at = arr.type
        assert isinstance(at, ir.NdType)
        byte: ll.Value = ll.Constant(I64, 0)
        for i, terms in zip(idx, arr.terms):
            for div, mod, stride in terms:
                digit = b.udiv(i, ll.Constant(I64, div)) if div != 1 else i
                digit = b.urem(digit, ll.Constant(I64, mod)) if mod else digit
                byte = b.add(byte, b.mul(digit, ll.Constant(I64, stride)))
        component = 0
        for e, n in zip(elem, at.elem_shape):
            component = component * n + e
        if component:
            byte = b.add(byte, ll.Constant(I64, component * at.dtype.itemsize))
        return b.gep(self.nd[id(arr)].data, [byte], inbounds=True, source_etype=I8)

    # ---- control flow -----------------------------------------------------------------------------------

    def if_stmt(self, s: ir.If) -> None:
        b = self.b
        then_bb = self.fn.append_basic_block("if.then")
        else_bb = self.fn.append_basic_block("if.else")
        merge = self.fn.append_basic_block("if.end")
        b.cbranch(self.v(s.cond), then_bb, else_bb)
        for bb, blk in ((then_bb, s.then), (else_bb, s.orelse)):
            b.position_at_end(bb)
            self.block(blk)
            if not b.block.is_terminated:
                b.branch(merge)
        b.position_at_end(merge)

    def while_stmt(self, s: ir.While) -> None:
        b = self.b
        head = self.fn.append_basic_block("while")
        out = self.fn.append_basic_block("while.end")
        b.branch(head)
        b.position_at_end(head)
        self.loops.append(Loop(cont=head, brk=out))
        self.block(s.body)
        self.loops.pop()
        if not b.block.is_terminated:
            b.branch(head)
        b.position_at_end(out)

    def range_for(self, s: ir.RangeFor) -> None:
        assert not s.parallel, "parallel loops are lowered by codegen/kernel.py"
        self.counted_loop(s, self.v(s.begin), self.v(s.end))

    def counted_loop(self, s: ir.RangeFor, begin: ll.Value, end: ll.Value) -> None:
        """`for i in range(begin, end)` with an induction variable of the loop's type bound to `s` in the body."""
        if s.extents:
            self.rows_loop(s, begin, end)
            return
        out = self.fn.append_basic_block("for.end")

        def bind(i: ll.Value) -> None:
            self.values[id(s)] = i

        self.step_loop(s.body, begin, end, bind, brk=out, done=out)
        self.b.position_at_end(out)

    def step_loop(self, body: ir.Block, begin: ll.Value, end: ll.Value, bind: Callable[[ll.Value], None],
                   brk: ll.Block, done: ll.Block, step: ll.Value | None = None) -> None:  # fmt: skip
        """Branch into a loop lowering `body` for i in [begin, end) (of begin's type, by `step`, default 1): it
        leaves to `done` when the range is exhausted and to `brk` on `break`."""
        b = self.b
        pre = b.block
        head = self.fn.append_basic_block("for")
        body_bb = self.fn.append_basic_block("for.body")
        latch = self.fn.append_basic_block("for.next")
        b.branch(head)
        b.position_at_end(head)
        i = b.phi(begin.type)
        i.add_incoming(begin, pre)
        b.cbranch(b.icmp_signed("<", i, end), body_bb, done)
        b.position_at_end(body_bb)
        bind(i)
        self.loops.append(Loop(cont=latch, brk=brk))
        self.block(body)
        self.loops.pop()
        if not b.block.is_terminated:
            b.branch(latch)
        b.position_at_end(latch)
        i.add_incoming(b.add(i, step if step is not None else ll.Constant(begin.type, 1), flags=["nsw"]), latch)
        b.branch(head)

    def rows_loop(self, s: ir.RangeFor, begin: ll.Value, end: ll.Value) -> None:
        """The flat range [begin, end) of a multi-dimensional loop, walked row by row: one division per row to
        find the outer coordinates, then a contiguous innermost loop (which LLVM vectorizes). Trailing extents
        of a constant 1 (a field of shape (n, 1)) are coordinates 0, not rows of one element; the outermost
        coordinate is the quotient itself (the flat range is the extents' product)."""
        b = self.b
        dims = list(s.extents)
        while len(dims) > 1 and isinstance(dims[-1], ir.Const) and dims[-1].value == 1:
            dims.pop()
        ones = [ll.Constant(begin.type, 0)] * (len(s.extents) - len(dims))
        extents = [self.v(e) for e in dims]
        last = extents[-1]
        pre = b.block
        head = self.fn.append_basic_block("rows")
        row_bb = self.fn.append_basic_block("rows.row")
        row_end = self.fn.append_basic_block("rows.rowend")
        out = self.fn.append_basic_block("rows.end")
        b.branch(head)
        b.position_at_end(head)
        idx = b.phi(begin.type)
        idx.add_incoming(begin, pre)
        b.cbranch(b.icmp_signed("<", idx, end), row_bb, out)
        b.position_at_end(row_bb)
        row = b.sdiv(idx, last)
        j0 = b.sub(idx, b.mul(row, last))
        left = b.add(j0, b.sub(end, idx))
        jn = b.select(b.icmp_signed("<", left, last), left, last)
        coords: list[ll.Value] = []
        rest = row
        for e in reversed(extents[1:-1]):
            q = b.sdiv(rest, e)
            coords.append(b.sub(rest, b.mul(q, e)))
            rest = q
        if len(extents) > 1:
            coords.append(rest)
        coords.reverse()
        row_base = b.mul(row, last)

        def bind(j: ll.Value) -> None:
            self.values[id(s)] = b.add(row_base, j)
            self.coords[id(s)] = [*coords, j, *ones]

        self.step_loop(s.body, j0, jn, bind, brk=out, done=row_end)  # `break` leaves all rows
        b.position_at_end(row_end)
        idx.add_incoming(b.add(idx, b.sub(jn, j0)), row_end)
        b.branch(head)
        b.position_at_end(out)

    def loop_coord(self, s: ir.LoopCoord) -> None:
        c = self.coords[id(s.loop)][s.dim]
        want = reg(s.type)  # type: ignore[arg-type]
        self.values[id(s)] = c if c.type == want else self.b.trunc(c, want)  # an i32 coordinate of an i64 flat loop

    def break_stmt(self, s: ir.Break) -> None:
        self.b.branch(self.loops[-1].brk)
        self.dead_block()

    def continue_stmt(self, s: ir.Continue) -> None:
        self.b.branch(self.loops[-1].cont)
        self.dead_block()

    def return_stmt(self, s: ir.Return) -> None:
        b = self.b
        if s.values:
            buf = b.load(self.ctx_field(CTX_RESULT), typ=PTR)
            for k, v in enumerate(s.values):
                t = v.type
                assert isinstance(t, PrimitiveType)
                slot = b.gep(buf, [ll.Constant(I64, 8 * k)], source_etype=I8)
                b.store(self.to_mem(self.v(v), t), slot)
        self.ret_ok()
        self.dead_block()

    def widen(self, v: ir.Value) -> ll.Value:
        """An integer value as i64 (sign- or zero-extended by its type), for an error record."""
        t = v.type
        assert isinstance(t, PrimitiveType)
        if t.itemsize == 8:
            return self.v(v)
        return self.b.sext(self.v(v), I64) if t.is_signed else self.b.zext(self.v(v), I64)

    def ret_ok(self) -> None:
        self.b.ret(ll.Constant(I32, 0))

    def call_stmt(self, s: ir.Call) -> None:
        """A call of a real function (codegen/functions.py): a non-zero status means a check failed in it (the
        context holds the error), so this function leaves the way its own failed checks do."""
        b = self.b
        args: list[ll.Value] = [self.ctx]
        for a in s.args:
            t = a.type
            if isinstance(t, ir.NdType):
                nd = self.nd[id(a)]
                args += [nd.data, *nd.shape]
            elif isinstance(t, ir.PtrType):
                args.append(self.v(a))
            else:
                args.append(self.to_abi(self.v(a), t))
        args += [self.v(r) for r in s.results]
        status = b.call(self.m.globals[function_symbol(self.m, self.kernel, s.func)], args)
        ok = self.fn.append_basic_block("call.ok")
        b.cbranch(b.icmp_signed("!=", status, ll.Constant(I32, 0)), self.error_exit(), ok)
        b.position_at_end(ok)

    def assert_stmt(self, s: ir.Assert) -> None:
        b = self.b
        with b.if_then(b.not_(self.v(s.cond)), likely=False):
            zero = ll.Constant(I64, 0)
            index = zero if s.index is None else self.widen(s.index)
            extra = [self.widen(v) for v in s.extra] + [zero, zero]  # a formatted site's values (ctx dim, extent)
            self.fail(ERROR_ASSERT, s.site, index, extra[0], extra[1])


def function_symbol(module: ll.Module, kernel: ir.Kernel, fn: ir.Function) -> str:
    """The LLVM name of real function `fn` in the module of `kernel` (named after the kernel's symbol)."""
    k = next(i for i, f in enumerate(kernel.functions) if f is fn)
    return f"{module.name}_f{k}"


def clock_counter(lw: FnLowering, intrinsic: str) -> ll.Value:
    """The hardware cycle counter as an i64: `llvm.readcyclecounter` on a CPU (rdtsc, aarch64's cntvct) or the
    PTX `%clock64` register (codegen/simt.py)."""
    fn = lw.m.globals.get(intrinsic) or ll.Function(lw.m, ll.FunctionType(I64, []), intrinsic)
    return lw.b.call(fn, [])


def refuse_simt(lw: FnLowering, s: ir.Stmt) -> None:
    """`qd.simt` outside the CUDA backend: the CPU has no GPU blocks to share memory or synchronize (Quadrants
    refuses `qd.simt.block.sync()` there too). `qd.clock_counter()` is the CPU's cycle counter."""
    from quadrants.errors import QuadrantsCompilationError

    if isinstance(s, ir.Simt) and s.op == "clock_counter":
        lw.values[id(s)] = clock_counter(lw, "llvm.readcyclecounter")
        return

    what = "qd.simt.block.SharedArray" if isinstance(s, ir.SharedArray) else f"qd.simt ({getattr(s, 'op', '')})"
    raise QuadrantsCompilationError(f"{what} needs the CUDA backend (qd.init(arch=qd.cuda)); the CPU backend has "
                                    "no GPU blocks: select a CPU code path with qd.static", s.loc)  # fmt: skip


# The statements every backend lowers the same way; arguments and parallel loops are each backend's (kernel.py,
# cuda.py). Read-only: a backend builds its own table from it.
SHARED_DISPATCH: Mapping[type, StmtLowering] = MappingProxyType(
    {
        ir.Const: FnLowering.const,
        ir.NdShape: FnLowering.nd_shape,
        ir.GlobalNd: FnLowering.global_nd,
        ir.Cast: FnLowering.cast,
        ir.Select: FnLowering.select,
        ir.Binary: FnLowering.binary,
        ir.Unary: FnLowering.unary,
        ir.Alloca: FnLowering.alloca_stmt,
        ir.Load: FnLowering.load,
        ir.Store: FnLowering.store,
        ir.BitStore: FnLowering.bit_store,
        ir.Addr: FnLowering.addr,
        ir.ExtPtr: FnLowering.ext_ptr,
        ir.SNodeOp: sparse.lower_snode_op,
        ir.AtomicRMW: lower_atomic,
        ir.Reduce: lower_reduce,
        ir.Random: lower_random,
        ir.If: FnLowering.if_stmt,
        ir.While: FnLowering.while_stmt,
        ir.RangeFor: FnLowering.range_for,
        ir.LoopCoord: FnLowering.loop_coord,
        ir.Break: FnLowering.break_stmt,
        ir.Continue: FnLowering.continue_stmt,
        ir.Return: FnLowering.return_stmt,
        ir.Call: FnLowering.call_stmt,
        ir.Assert: FnLowering.assert_stmt,
        ir.AdStack: lower_adstack,
        ir.AdStackPush: lower_push,
        ir.AdStackPop: lower_pop,
        ir.AdStackTop: lower_top,
        ir.Print: lower_print,
        ir.SharedArray: refuse_simt,
        ir.Simt: refuse_simt,
    }
)
