"""Lower `print` inside kernels: one printf call (and an fflush) per statement on the host; `print_format` is
also the format and arguments of the CUDA backend's vprintf (codegen/cuda.py).

Consumes an `ir.Print`; produces a private format string in the module and the call.
"""

from __future__ import annotations

from typing import Any

from llvmlite import ir as ll

from quadrants.codegen.llvm_types import F64, I8, I32, I64, PTR, reg
from quadrants.ir import nodes as ir
from quadrants.ir import printf
from quadrants.types.dtypes import PrimitiveType

# `fl` is the FnLowering (codegen/lower.py) lowering the function: not imported, lower.py imports this module.


def lower_print(fl: Any, s: ir.Print) -> None:
    data, args = print_format(fl, s)
    name = f"qd_fmt_{len([g for g in fl.m.globals if g.startswith('qd_fmt_')])}"
    g = ll.GlobalVariable(fl.m, ll.ArrayType(I8, len(data)), name)
    g.linkage = "internal"
    g.global_constant = True
    g.initializer = ll.Constant(ll.ArrayType(I8, len(data)), data)
    printf = fl.m.globals.get("printf") or ll.Function(
        fl.m, ll.FunctionType(I32, [PTR], var_arg=True), "printf"
    )
    fflush = fl.m.globals.get("fflush") or ll.Function(fl.m, ll.FunctionType(I32, [PTR]), "fflush")
    fl.b.call(printf, [g.bitcast(PTR), *args])
    fl.b.call(fflush, [ll.Constant(PTR, None)])


def print_format(fl: Any, s: ir.Print) -> tuple[bytearray, list[ll.Value]]:
    """A printf format (NUL-terminated) and its arguments: integers widened to 64 bits, floats to double."""
    fmt: list[str] = []
    args: list[ll.Value] = []
    specs = s.specs or ("",) * len(s.parts)
    for p, spec in zip(s.parts, specs):
        if isinstance(p, str):
            fmt.append(p.replace("%", "%%"))
            continue
        t = p.type
        assert isinstance(t, PrimitiveType)
        x = fl.v(p)
        if t.is_float:
            directive = "%.12f" if t.bits == 64 else "%f"
            args.append(fl.b.fpext(x, F64) if t.bits < 64 else x)
        elif t.kind == "int":
            directive = "%lld"
            args.append(fl.b.sext(x, I64) if t.bits < 64 else x)
        else:
            directive = "%llu"
            args.append(fl.b.zext(x, I64) if reg(t).width < 64 else x)
        fmt.append(printf.merge(spec, directive) if spec else directive)
    return bytearray("".join(fmt).encode("utf-8") + b"\0"), args
