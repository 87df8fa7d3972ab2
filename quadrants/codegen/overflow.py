"""Debug-mode integer overflow checks (`qd.init(debug=True)`): an add, sub, mul or shl whose result does not fit
its type flags its check site in the context's `warned` bytes, and the kernel goes on with the wrapped value
(Quadrants warns, it does not stop); the launcher prints one warning per flagged site after the launch
(runtime/launch.py), naming the line where the kernel is now.

Consumes an `ir.Binary` with a site and its already-lowered result; produces the check and the flag store.
"""

from __future__ import annotations

from typing import Any

from llvmlite import ir as ll

from quadrants.codegen.llvm_types import CTX_WARNED, I1, I8, I64, PTR, reg
from quadrants.ir import nodes as ir
from quadrants.types.dtypes import PrimitiveType

# `fl` is the FnLowering (codegen/lower.py) lowering the function: not imported, lower.py imports this module.


def flag_overflow(fl: Any, s: ir.Binary, result: ll.Value) -> None:
    t = s.type
    assert isinstance(t, PrimitiveType) and s.site >= 0
    b, ty = fl.b, reg(t)
    a, c = fl.v(s.lhs), fl.v(s.rhs)
    signed = t.kind == "int"
    if s.op == "shl":  # as Quadrants checks it: shifting the result back must give the operand
        amount = b.and_(c, ll.Constant(ty, ty.width - 1))
        back = b.ashr(result, amount) if signed else b.lshr(result, amount)
        over = b.icmp_unsigned("!=", back, a)
    else:
        name = f"llvm.{'s' if signed else 'u'}{s.op}.with.overflow.i{ty.width}"
        fn = fl.m.globals.get(name) or ll.Function(
            fl.m, ll.FunctionType(ll.LiteralStructType([ty, I1]), [ty, ty]), name
        )
        over = b.extract_value(b.call(fn, [a, c]), 1)
    with b.if_then(over, likely=False):
        warned = b.load(fl.ctx_field(CTX_WARNED), typ=PTR)
        flag = b.gep(warned, [ll.Constant(I64, s.site)], source_etype=I8)
        b.store(ll.Constant(I8, 1), flag)  # every thread that overflows stores the same byte
