"""LLVM IR text -> optimized module -> object code (and, on request, optimized IR and assembly).

Consumes the text of a lowered kernel module; produces `CompiledObject`. Optimization follows `opt_level`:
0 runs no passes; 1 (the default) the O2 pipeline without loop unrolling (vectorization stays on: unrolling
the scalar remainder loops of vectorized loops costs ~15% of compile time for little speed); 2 and 3 the full
O3 pipeline.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import llvmlite.binding as llvm

from quadrants.codegen.cpu import CpuTarget, target_machine


@dataclass
class CompiledObject:
    symbol: str
    object_code: bytes
    optimized_ir: str | None = None
    asm: str | None = None
    timings: dict[str, float] = field(default_factory=dict)


def _levels(opt_level: int) -> tuple[int, int, bool]:
    """(pass pipeline speed level, codegen level, loop unrolling)."""
    if opt_level <= 0:
        return 0, 0, False
    if opt_level == 1:
        return 2, 2, False
    return 3, 3, True


def _exact_reciprocals(llvm_ir: str) -> str:
    """Every defined function gets `"reciprocal-estimates"="none"`: under fast-math (`arcp`, `afn`) LLVM would
    otherwise compute `1 / sqrt(x)` and divisions from the CPU's reciprocal (square root) estimate refined by one
    Newton step on machines that have fast estimates (AVX-512): `1 / sqrt(4)` came out 0.49999997. Quadrants'
    results are the correctly rounded ones, and the vectorizer keeps its other fast-math freedoms."""
    lines = llvm_ir.split("\n")
    for k, line in enumerate(lines):
        if line.startswith("define "):
            brace = line.endswith("{")
            head = line[:-1].rstrip() if brace else line
            lines[k] = head + ' "reciprocal-estimates"="none"' + (" {" if brace else "")
    return "\n".join(lines)


def compile_ir(
    llvm_ir: str, symbol: str, target: CpuTarget, opt_level: int, keep_ir: bool = False, keep_asm: bool = False
) -> CompiledObject:
    speed, cg, unroll = _levels(opt_level)
    tm = target_machine(target, cg)
    t0 = time.perf_counter()
    module = llvm.parse_assembly(_exact_reciprocals(llvm_ir))
    module.verify()
    t1 = time.perf_counter()
    if speed > 0:
        pto = llvm.create_pipeline_tuning_options(speed_level=speed)
        pto.loop_unrolling = unroll
        pb = llvm.create_pass_builder(tm, pto)
        pb.getModulePassManager().run(module, pb)
    t2 = time.perf_counter()
    obj = tm.emit_object(module)
    t3 = time.perf_counter()
    out = CompiledObject(symbol=symbol, object_code=bytes(obj))
    out.timings = {"llvm_parse": t1 - t0, "llvm_opt": t2 - t1, "llvm_codegen": t3 - t2}
    if keep_ir:
        out.optimized_ir = str(module)
    if keep_asm:
        out.asm = tm.emit_assembly(module)
    return out
