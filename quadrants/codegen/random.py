"""Lower `qd.random()` draws: Philox-4x32-10 (Salmon et al., SC'11: the generator of cuRAND, JAX and
Random123) on the operands passes/random_streams.py bound, then the conversion to the drawn type.

Consumes a bound `ir.Random`; produces instructions. The generator is one internal, always-inlined function per
module (`qd.philox4x32_10`): shared by the CPU and the NVPTX backends, with no state, so a loop of draws
vectorizes on the CPU and each GPU thread computes its own. Its inputs:

    key     = the launch key (u64: two 32-bit key words)
    counter = (draw counter, stream, index low 32 bits, index high 32 bits)

Outputs used: word 0 for 32-bit types, words 0 and 1 for 64-bit ones. Conversions (as Quadrants 1.3.3 does):
f32 = (w0 >> 8) * 2**-24 and f64 = (w01 >> 11) * 2**-53, both in [0, 1) with every multiple of the step
possible; f16 = (w0 >> 21) * 2**-11 (exact in f16, so never rounded up to 1.0); integers take the bits as
they are (the whole range of the type, signed or not).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from llvmlite import ir as ll

from quadrants.codegen.llvm_types import F32, F64, I32, I64, reg
from quadrants.ir import nodes as ir
from quadrants.types import dtypes

PHILOX_M = (0xD2511F53, 0xCD9E8D57)  # round multipliers
PHILOX_W = (0x9E3779B9, 0xBB67AE85)  # key schedule increments (golden ratio, sqrt(3) - 1)
PHILOX_ROUNDS = 10
FUNCTION = "qd.philox4x32_10"
PAIR = ll.LiteralStructType([I32, I32])


def philox(module: ll.Module) -> ll.Function:
    """`{i32, i32} qd.philox4x32_10(i64 key, i32 c0, i32 c1, i64 c23)`: output words 0 and 1, defined once per
    module."""
    fn = module.globals.get(FUNCTION)
    if fn is not None:
        return fn  # type: ignore[no-any-return]
    fn = ll.Function(module, ll.FunctionType(PAIR, [I64, I32, I32, I64]), FUNCTION)
    fn.linkage = "internal"
    fn.attributes.add("alwaysinline")
    fn.attributes.add("nounwind")
    key, c0, c1, c23 = fn.args
    b = ll.IRBuilder(fn.append_basic_block("entry"))
    mulhilo = _mulhilo_nvptx(module) if module.triple.startswith("nvptx") else _mulhilo
    k0, k1 = _split(b, key)
    lo, hi = _split(b, c23)
    c = [c0, c1, lo, hi]
    for r in range(PHILOX_ROUNDS):
        if r:
            k0 = b.add(k0, ll.Constant(I32, PHILOX_W[0]))
            k1 = b.add(k1, ll.Constant(I32, PHILOX_W[1]))
        lo0, hi0 = mulhilo(b, c[0], PHILOX_M[0])
        lo1, hi1 = mulhilo(b, c[2], PHILOX_M[1])
        c = [b.xor(b.xor(hi1, c[1]), k0), lo1, b.xor(b.xor(hi0, c[3]), k1), lo0]
    out = b.insert_value(ll.Constant(PAIR, ll.Undefined), c[0], 0)
    b.ret(b.insert_value(out, c[1], 1))
    return fn


def _mulhilo(b: ll.IRBuilder, x: ll.Value, m: int) -> tuple[ll.Value, ll.Value]:
    """The low and high words of the 64-bit product of `x` and `m` (one widening multiply on the CPU)."""
    return _split(b, b.mul(b.zext(x, I64), ll.Constant(I64, m), flags=["nuw"]))


def _mulhilo_nvptx(module: ll.Module) -> Callable[[ll.IRBuilder, ll.Value, int], tuple[ll.Value, ll.Value]]:
    """`mul.lo.u32` and `mul.hi.u32`: NVPTX would make a 64-bit multiply (several instructions) of the above."""
    name = "llvm.nvvm.mulhi.ui"
    mulhi = module.globals.get(name) or ll.Function(module, ll.FunctionType(I32, [I32, I32]), name)

    def mulhilo(b: ll.IRBuilder, x: ll.Value, m: int) -> tuple[ll.Value, ll.Value]:
        return b.mul(x, ll.Constant(I32, m)), b.call(mulhi, [x, ll.Constant(I32, m)])

    return mulhilo


def _split(b: ll.IRBuilder, x: ll.Value) -> tuple[ll.Value, ll.Value]:
    """The low and high 32 bits of an i64."""
    return b.trunc(x, I32), b.trunc(b.lshr(x, ll.Constant(I64, 32)), I32)


def lower_random(lw: Any, s: ir.Random) -> None:
    """A bound draw (`lw` is the FnLowering): the generator's words, converted to `s.type`."""
    assert s.key is not None and s.counter is not None, "qd.random() draw not bound by passes/random_streams.py"
    b: ll.IRBuilder = lw.b
    index = ll.Constant(I64, 0)
    if s.index is not None:
        index = lw.v(s.index)
        if index.type != I64:
            index = b.sext(index, I64)
    words = b.call(philox(lw.m), [lw.v(s.key), lw.v(s.counter), ll.Constant(I32, s.stream), index])
    w0 = b.extract_value(words, 0)
    t = s.type
    assert isinstance(t, dtypes.PrimitiveType)
    if t.bits == 64:
        w1 = b.extract_value(words, 1)
        bits = b.or_(b.shl(b.zext(w0, I64), ll.Constant(I64, 32)), b.zext(w1, I64))
        if t is dtypes.f64:
            step = b.sitofp(b.lshr(bits, ll.Constant(I64, 11)), F64)
            lw.values[id(s)] = b.fmul(step, ll.Constant(F64, 2.0**-53))
        else:
            lw.values[id(s)] = bits
    elif t is dtypes.f32:
        lw.values[id(s)] = b.fmul(b.sitofp(b.lshr(w0, ll.Constant(I32, 8)), F32), ll.Constant(F32, 2.0**-24))
    elif t is dtypes.f16:
        value = b.fmul(b.sitofp(b.lshr(w0, ll.Constant(I32, 21)), F32), ll.Constant(F32, 2.0**-11))
        lw.values[id(s)] = b.fptrunc(value, reg(t))
    else:
        lw.values[id(s)] = w0  # i32 / u32: the same bits
