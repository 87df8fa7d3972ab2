"""Arithmetic and math lowering: the operator tables, and each backend's way to call float functions.

Consumes LLVM values and their dtypes; produces instructions through the builder of the function being lowered
(codegen/lower.py holds one math object per function, built by the backend's `MathFactory`). Semantics follow
real Quadrants: `//` and `%` floor like Python, shift amounts wrap at the type width (as x86 does), integer
division by zero gives 0 instead of trapping, `round` rounds halves away from zero. f16 math computes in f32.

The backends differ only in how a float function is called: `MathLowering` (the CPU) uses LLVM intrinsics
(`llvm.sin.f32`) and libm (`tanf`); `NvptxMath` calls libdevice (`__nv_sinf`) for the intrinsics NVPTX cannot
lower and for libm's functions; `HostNvptxMath` (the CUDA backend emulated on the host) calls libm under the
same names (`sinf`).
"""

from __future__ import annotations

from collections.abc import Callable

from llvmlite import ir as ll

from quadrants.codegen import runtime_ir
from quadrants.codegen.llvm_types import F32, I1, reg
from quadrants.types import dtypes
from quadrants.types.dtypes import PrimitiveType

INT_CMP = {"lt": "<", "le": "<=", "gt": ">", "ge": ">=", "eq": "==", "ne": "!="}
# Ordered comparisons, except `!=` which is true for NaN (as in Python).
FLOAT_CMP = {"lt": "<", "le": "<=", "gt": ">", "ge": ">=", "eq": "=="}

# Operators that are one LLVM instruction (IRBuilder method names).
INT_SIMPLE = {"add": "add", "sub": "sub", "mul": "mul", "and": "and_", "or": "or_", "xor": "xor"}
FLOAT_SIMPLE = {"add": "fadd", "sub": "fsub", "mul": "fmul", "truediv": "fdiv", "raw_div": "fdiv"}
INTRINSIC_UNARY = {"sqrt": "llvm.sqrt", "sin": "llvm.sin", "cos": "llvm.cos", "exp": "llvm.exp", "log": "llvm.log",
                   "floor": "llvm.floor", "ceil": "llvm.ceil", "round": "llvm.round", "abs": "llvm.fabs"}  # fmt: skip
LIBM_UNARY = {"tan": "tan", "asin": "asin", "acos": "acos", "atan": "atan", "tanh": "tanh"}


# llvm intrinsics NVPTX cannot lower -> the libdevice function (f64 name; f32 appends `f`, both prefixed `__nv_`).
LIBDEVICE = {"llvm.sin": "sin", "llvm.cos": "cos", "llvm.exp": "exp", "llvm.log": "log", "llvm.pow": "pow",
             "llvm.round": "round"}  # fmt: skip


class MathLowering:
    """Operators and math functions on the CPU: LLVM intrinsics, libm for what LLVM has no intrinsic for."""

    def __init__(self, module: ll.Module, builder: ll.IRBuilder, flags: tuple[str, ...]) -> None:
        self.m = module
        self.b = builder
        self.flags = flags  # fast-math flags of float instructions and intrinsic calls

    def binop(self, op: str, a: ll.Value, c: ll.Value, t: PrimitiveType) -> ll.Value:
        if op in INT_CMP:
            return self._compare(op, a, c, t)
        if t.is_float:
            return self._float_binop(op, a, c, t)
        return self._int_binop(op, a, c, t)

    def _compare(self, op: str, a: ll.Value, c: ll.Value, t: PrimitiveType) -> ll.Value:
        b = self.b
        if t.is_float:
            if op == "ne":
                return b.fcmp_unordered("!=", a, c)
            return b.fcmp_ordered(FLOAT_CMP[op], a, c)
        if t.kind == "int":
            return b.icmp_signed(INT_CMP[op], a, c)
        return b.icmp_unsigned(INT_CMP[op], a, c)

    def _float_binop(self, op: str, a: ll.Value, c: ll.Value, t: PrimitiveType) -> ll.Value:
        b, f = self.b, self.flags
        if op in FLOAT_SIMPLE:
            return getattr(b, FLOAT_SIMPLE[op])(a, c, flags=f)  # type: ignore[no-any-return]
        if op == "floordiv":
            return self.float_call("llvm.floor", [b.fdiv(a, c, flags=f)], t)
        if op == "mod":
            q = self.float_call("llvm.floor", [b.fdiv(a, c, flags=f)], t)
            return b.fsub(a, b.fmul(q, c, flags=f), flags=f)
        if op == "raw_mod":
            return b.frem(a, c)
        if op in ("min", "max"):
            return self.float_min_max(op, a, c, t)
        if op == "pow":
            return self.float_call("llvm.pow", [a, c], t)
        if op == "atan2":
            return self.libm_call("atan2", [a, c], t)
        raise NotImplementedError(f"float {op}")

    def _int_binop(self, op: str, a: ll.Value, c: ll.Value, t: PrimitiveType) -> ll.Value:
        b = self.b
        signed = t.kind == "int"
        ty = reg(t)
        if op in INT_SIMPLE:
            return getattr(b, INT_SIMPLE[op])(a, c)  # type: ignore[no-any-return]
        if op in ("shl", "shr", "lshr"):
            amount = b.and_(c, ll.Constant(ty, ty.width - 1)) if ty.width > 1 else ll.Constant(ty, 0)
            if op == "shl":
                return b.shl(a, amount)
            if op == "lshr":
                return b.lshr(a, amount)
            return b.ashr(a, amount) if signed else b.lshr(a, amount)
        if op in ("min", "max"):
            name = ("llvm.s" if signed else "llvm.u") + op
            return b.call(intrinsic(self.m, name, ty, [ty, ty]), [a, c])
        if op == "pow":
            return b.call(runtime_ir.ipow(self.m, ty, signed), [a, c])
        if op in ("floordiv", "mod", "raw_div", "raw_mod", "truediv"):
            return self._int_division(op, a, c, t)
        raise NotImplementedError(f"integer {op}")

    def _int_division(self, op: str, a: ll.Value, c: ll.Value, t: PrimitiveType) -> ll.Value:
        """Division and modulo; a zero divisor gives 0 (never a SIGFPE that would kill the process)."""
        b = self.b
        ty = reg(t)
        zero, one = ll.Constant(ty, 0), ll.Constant(ty, 1)
        if ty.width == 1:  # u1: x / 1 == x, x % 1 == 0
            return a if op in ("floordiv", "raw_div", "truediv") else zero
        is_zero = b.icmp_unsigned("==", c, zero)
        safe = b.select(is_zero, one, c)
        if t.kind == "int":
            # INT_MIN / -1 overflows (and traps on x86): divide by 1 and negate instead.
            minus_one = b.icmp_signed("==", safe, ll.Constant(ty, -1))
            safe = b.select(minus_one, one, safe)
            q = b.sdiv(a, safe)
            q = b.select(minus_one, b.sub(zero, q), q)
            r = b.select(minus_one, zero, b.srem(a, safe))
            if op in ("floordiv", "mod"):
                # Python floors: adjust when the remainder is nonzero and has the divisor's opposite sign.
                adjust = b.and_(b.icmp_signed("!=", r, zero), b.icmp_signed("<", b.xor(r, safe), zero))
                q = b.select(adjust, b.sub(q, one), q)
                r = b.select(adjust, b.add(r, safe), r)
        else:
            q = b.udiv(a, safe)
            r = b.urem(a, safe)
        out = q if op in ("floordiv", "raw_div", "truediv") else r
        return b.select(is_zero, zero, out)

    def unop(self, op: str, x: ll.Value, t: PrimitiveType) -> ll.Value:
        b = self.b
        ty = reg(t)
        if op == "neg":
            return b.fneg(x, flags=self.flags) if t.is_float else b.sub(ll.Constant(ty, 0), x)
        if op == "invert":
            return b.xor(x, ll.Constant(ty, -1))
        if op == "abs" and not t.is_float:
            if t.kind != "int":
                return x
            return b.call(intrinsic(self.m, "llvm.abs", ty, [ty, I1]), [x, ll.Constant(I1, 0)])
        if op == "popcnt":
            return b.call(intrinsic(self.m, "llvm.ctpop", ty, [ty]), [x])
        if op == "clz":
            return b.call(intrinsic(self.m, "llvm.ctlz", ty, [ty, I1]), [x, ll.Constant(I1, 0)])
        if op == "ffs":
            zero = ll.Constant(ty, 0)
            pos = b.add(b.call(intrinsic(self.m, "llvm.cttz", ty, [ty, I1]), [x, ll.Constant(I1, 0)]), ll.Constant(ty, 1))
            pos = b.select(b.icmp_unsigned("==", x, zero), zero, pos)
            i32 = ll.IntType(32)
            return pos if ty.width == 32 else (b.trunc(pos, i32) if ty.width > 32 else b.zext(pos, i32))
        if op == "rsqrt":
            root = self.float_call("llvm.sqrt", [x], t)
            return b.fdiv(ll.Constant(ty, 1.0), root, flags=self.flags)
        if op in INTRINSIC_UNARY:
            return self.float_call(INTRINSIC_UNARY[op], [x], t)
        if op in LIBM_UNARY:
            return self.libm_call(LIBM_UNARY[op], [x], t)
        raise NotImplementedError(f"unary {op} on {t}")

    def float_min_max(self, op: str, a: ll.Value, c: ll.Value, t: PrimitiveType) -> ll.Value:
        """`llvm.minimumnum` / `maximumnum` (IEEE 754-2019: a NaN operand gives the other one), operands swapped:
        with the fast-math flags' `nsz` x86 compiles them as `minnum` (vminps and a NaN blend), NVPTX as `min.f32`
        / `max.f32`, and the swap keeps 1.3.3's result for two zeros of different signs (the first operand). Not `llvm.minnum`: LLVM 22's loop
        vectorizer (llvmlite 0.50, built with assertions) mishandles a minnum/maxnum reduction over a loop whose
        trip count it knows: it aborts the process at 3 iterations and skips the last 3 of 7 (a block reduction
        over 8 warps came out wrong), a `freeze` in between being pushed aside by InstCombine; nor compares and
        selects, whose long unrolled chains compile in exponential time (tests/codegen/test_vectorizer_guards.py)."""
        return self.float_call("llvm.minimumnum" if op == "min" else "llvm.maximumnum", [c, a], t)

    def float_call(self, name: str, args: list[ll.Value], t: PrimitiveType) -> ll.Value:
        b = self.b
        if t is dtypes.f16:
            wide = [b.fpext(a, F32) for a in args]
            return b.fptrunc(self.float_call(name, wide, dtypes.f32), reg(t))
        ty = reg(t)
        return b.call(intrinsic(self.m, name, ty, [ty] * len(args)), args, fastmath=self.flags)

    def libm_call(self, name: str, args: list[ll.Value], t: PrimitiveType) -> ll.Value:
        b = self.b
        if t is dtypes.f16:
            wide = [b.fpext(a, F32) for a in args]
            return b.fptrunc(self.libm_call(name, wide, dtypes.f32), reg(t))
        symbol = name + ("f" if t is dtypes.f32 else "")
        ty = reg(t)
        fn = self.m.globals.get(symbol) or ll.Function(self.m, ll.FunctionType(ty, [ty] * len(args)), symbol)
        return b.call(fn, args)


def intrinsic(m: ll.Module, base: str, ty: ll.Type, args: list[ll.Type]) -> ll.Function:
    """Declare `base.<type suffix>` (e.g. llvm.smax.i32) with an explicit signature."""
    if isinstance(ty, ll.IntType):
        suffix = f"i{ty.width}"
    else:
        suffix = {"half": "f16", "float": "f32", "double": "f64"}[str(ty)]
    name = f"{base}.{suffix}"
    fn = m.globals.get(name)
    if fn is None:
        fn = ll.Function(m, ll.FunctionType(ty, args), name)
    return fn  # type: ignore[no-any-return]


class NvptxMath(MathLowering):
    """Math on NVIDIA GPUs: libdevice instead of the intrinsics NVPTX cannot lower, and instead of libm."""

    prefix = "__nv_"  # libdevice's names are libm's with this prefix

    def float_call(self, name: str, args: list[ll.Value], t: PrimitiveType) -> ll.Value:
        if name in LIBDEVICE and t.bits != 16:
            return self._device_call(LIBDEVICE[name], args, t)
        return super().float_call(name, args, t)  # f16 widens to f32 and comes back here

    def libm_call(self, name: str, args: list[ll.Value], t: PrimitiveType) -> ll.Value:
        if t.bits == 16:
            return super().libm_call(name, args, t)  # widens to f32 and comes back here
        return self._device_call(name, args, t)

    def _device_call(self, name: str, args: list[ll.Value], t: PrimitiveType) -> ll.Value:
        symbol = self.prefix + name + ("f" if t.bits == 32 else "")
        ty = reg(t)
        fn = self.m.globals.get(symbol) or ll.Function(self.m, ll.FunctionType(ty, [ty] * len(args)), symbol)
        return self.b.call(fn, args)


class HostNvptxMath(NvptxMath):
    """The CUDA backend's math compiled for the host (runtime/emulator.py): libm has libdevice's functions
    under the C names."""

    prefix = ""


# Builds the math object of one function being lowered (a backend passes one of the classes above).
MathFactory = Callable[[ll.Module, ll.IRBuilder, tuple[str, ...]], MathLowering]
