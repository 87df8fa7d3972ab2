"""The compiler driver: the pipeline as a list of typed stages.

    source + specialized params --frontend--> ir.Kernel --passes--> ir.Kernel --lower--> LLVM IR
        --compile--> object code --load--> Launcher

Consumes a kernel's source and its specialization; produces a `CompiledKernel` that keeps every intermediate
(IR text, LLVM IR, object code) for dumps and caches, with per-stage timings. llvmlite is imported here,
inside `compile_kernel`, the first time anything is compiled.
"""

from __future__ import annotations

import hashlib
import os
import re
import time
from dataclasses import dataclass, field
from typing import Any

from quadrants import _logging
from quadrants._config import Config, compile_relevant
from quadrants._stats import STATS
from quadrants.frontend.source import FunctionSource
from quadrants.frontend.visitor import FrontendOptions, FrontendResult, ParamSpec, build_kernel
from quadrants.ir import nodes as ir
from quadrants.ir.printer import format_kernel
from quadrants.ir.verifier import verify
from quadrants.passes import run_pipeline
from quadrants.runtime.abi import ArgABI, KernelABI, SiteABI


@dataclass
class CompiledKernel:
    abi: KernelABI
    object_code: bytes
    ir_text: str
    llvm_ir: str
    frontend: FrontendResult
    timings: dict[str, float] = field(default_factory=dict)





def frontend_options(config: Config) -> FrontendOptions:
    return FrontendOptions(
        default_ip=config.default_ip,
        default_fp=config.default_fp,
        debug=config.debug,
        unrolling_limit=config.unrolling_limit,
    )


def build_ir(
    source: FunctionSource, name: str, params: list[ParamSpec], returns: tuple[Any, ...], config: Config
) -> FrontendResult:
    """Stages 1 and 2: frontend, then passes, verified."""
    result = build_kernel(source, name, params, returns, frontend_options(config))
    verify(result.kernel)
    run_pipeline(result.kernel)
    verify(result.kernel)
    return result


def symbol_for(name: str, ir_text: str, config: Config) -> str:
    safe = re.sub(r"[^0-9A-Za-z_]", "_", name)[:48]
    h = hashlib.sha256()
    h.update(ir_text.encode())
    h.update(repr(sorted(compile_relevant(config).items())).encode())
    return f"qd_{safe}_{h.hexdigest()[:16]}"


def compile_kernel(
    source: FunctionSource, name: str, params: list[ParamSpec], returns: tuple[Any, ...], config: Config
) -> CompiledKernel:
    """All stages: frontend and passes, then code generation."""
    t0 = time.perf_counter()
    fe = build_ir(source, name, params, returns, config)
    ir_text = format_kernel(fe.kernel)
    return generate(fe, ir_text, name, config, {"frontend": time.perf_counter() - t0})


def generate(
    fe: FrontendResult, ir_text: str, name: str, config: Config, timings: dict[str, float] | None = None
) -> CompiledKernel:
    """Stages 3 and 4: lower the IR to LLVM, optimize, emit object code. Imports llvmlite."""
    from quadrants.codegen.compile import compile_ir
    from quadrants.codegen.cpu import cpu_target, target_machine
    from quadrants.codegen.kernel import TargetInfo, lower_kernel
    from quadrants.codegen.lower import CodegenOptions

    timings = dict(timings or {})
    t1 = time.perf_counter()
    target = cpu_target(config.cpu_target)
    tm = target_machine(target, 2)
    symbol = symbol_for(name, ir_text, config)
    module = lower_kernel(
        fe.kernel,
        CodegenOptions(fast_math=config.fast_math, bounds_checked=config.bounds_checked),
        symbol,
        TargetInfo(triple=target.triple, data_layout=str(tm.target_data)),
    )
    llvm_ir = str(module)
    timings["lower"] = time.perf_counter() - t1
    stages = config.dump_stages
    obj = compile_ir(llvm_ir, symbol, target, config.opt_level, keep_ir="opt" in stages, keep_asm="asm" in stages)
    timings.update(obj.timings)
    abi = make_abi(fe.kernel, symbol, keep_sites=config.bounds_checked)
    out = CompiledKernel(abi=abi, object_code=obj.object_code, ir_text=ir_text, llvm_ir=llvm_ir, frontend=fe,
                         timings=timings)  # fmt: skip
    if config.print_ir:
        print(ir_text, end="")
    if stages:
        _dump(config, symbol, {"ir": ir_text, "llvm": llvm_ir, "opt": obj.optimized_ir, "asm": obj.asm})
    STATS.add(timings)
    return out


@dataclass
class CompiledCuda:
    """A kernel compiled by the CUDA backend: its launch plan and images - `sm_80` (a cubin), `ptx:sm_80` (PTX
    text, for the driver to JIT on newer GPUs), or `host` (object code for runtime/emulator.py)."""

    abi: KernelABI
    plan: Any  # codegen.cuda.CudaPlan
    images: dict[str, bytes]
    llvm_ir: str
    timings: dict[str, float] = field(default_factory=dict)
    frontend: FrontendResult | None = None
    ir_text: str = ""

    @property
    def ptx(self) -> dict[str, str]:
        return {k[4:]: v.decode() for k, v in self.images.items() if k.startswith("ptx:")}

    @property
    def cubins(self) -> dict[str, bytes]:
        return {k: v for k, v in self.images.items() if k.startswith("sm_")}


def generate_cuda(fe: FrontendResult, ir_text: str, name: str, config: Config, archs: tuple[str, ...] = ("sm_80",),
                  cubin: bool = True) -> CompiledCuda:  # fmt: skip
    """Stages 3 and 4 for the GPU: lower to NVPTX, PTX per architecture, and cubins with `ptxas` when it is
    installed (`cubin=True`). With `config.cuda_emulate`, host object code for the emulator instead. Raises
    codegen.nvptx.NvptxError."""
    from quadrants.codegen.cuda import lower_cuda_kernel
    from quadrants.codegen.lower import CodegenOptions

    t0 = time.perf_counter()
    symbol = symbol_for(name, ir_text, config)
    opts = CodegenOptions(fast_math=config.fast_math, bounds_checked=config.bounds_checked)
    abi = make_abi(fe.kernel, symbol, keep_sites=config.bounds_checked)
    if config.cuda_emulate:
        from quadrants.codegen.compile import compile_ir
        from quadrants.codegen.cpu import cpu_target, target_machine
        from quadrants.codegen.kernel import TargetInfo

        target = cpu_target("host")
        host = TargetInfo(target.triple, str(target_machine(target, 2).target_data))
        module, plan = lower_cuda_kernel(fe.kernel, opts, symbol, emulate_on=host)
        llvm_ir = str(module)
        obj = compile_ir(llvm_ir, symbol, target, config.opt_level)
        timings = {"cuda_lower": time.perf_counter() - t0, **obj.timings}
        return CompiledCuda(abi, plan, {"host": obj.object_code}, llvm_ir, timings, fe, ir_text)
    from quadrants.codegen import nvptx

    module, plan = lower_cuda_kernel(fe.kernel, opts, symbol, archs[0])
    llvm_ir = str(module)
    timings = {"cuda_lower": time.perf_counter() - t0}
    entry_points = tuple(t.name for t in plan.tasks)
    images: dict[str, bytes] = {}
    for arch in archs:
        res = nvptx.emit_ptx(llvm_ir, arch, config.opt_level, entry_points)
        for k, v in res.timings.items():
            timings[k] = timings.get(k, 0.0) + v
        images[f"ptx:{res.arch}"] = res.ptx.encode()
        if cubin and nvptx.ptxas_path() is not None:
            t1 = time.perf_counter()
            images[res.arch] = nvptx.assemble(res.ptx, res.arch)
            timings["ptxas"] = timings.get("ptxas", 0.0) + time.perf_counter() - t1
    return CompiledCuda(abi, plan, images, llvm_ir, timings, fe, ir_text)


def check_ptx(fe: FrontendResult, ir_text: str, name: str, config: Config) -> None:
    """`ptx_check`: compile the kernel for the GPU archs listed and assemble each with ptxas; a codegen or ptxas
    failure is a compilation error."""
    import dataclasses

    from quadrants.codegen.nvptx import NvptxError
    from quadrants.errors import QuadrantsCompilationError

    archs = tuple(a.strip() for a in config.ptx_check.split(",") if a.strip())
    try:
        generate_cuda(fe, ir_text, name, dataclasses.replace(config, cuda_emulate=False), archs)
    except NvptxError as e:
        raise QuadrantsCompilationError(f"the CUDA backend failed on kernel {name!r}: {e}") from None
    STATS.count("ptx_checked")


def make_abi(kernel: ir.Kernel, symbol: str, keep_sites: bool = True) -> KernelABI:
    """The kernel's calling convention. Check sites only matter when checks are compiled in (`debug`,
    `check_out_of_bound`); without them the ABI stays small (it is read at every cache hit)."""
    args = []
    written = written_params(kernel)
    for k, p in enumerate(kernel.params):
        if isinstance(p.type, ir.NdType):
            args.append(ArgABI(p.name, "ndarray", p.type.dtype.name, p.type.ndim, p.type.elem_shape, k in written))
        else:
            args.append(ArgABI(p.name, "scalar", p.type.name))
    sites = site_abis(kernel) if keep_sites else ()
    has_print = any(isinstance(s, ir.Print) for s in ir.walk(kernel.body))
    return KernelABI(symbol=symbol, args=tuple(args), rets=tuple(t.name for t in kernel.ret_types),
                     sites=sites, has_print=has_print, ret_shapes=kernel.ret_shapes)  # fmt: skip


def site_abis(kernel: ir.Kernel) -> tuple[SiteABI, ...]:
    """The kernel's check sites as the ABI records them (relative to the kernel or func they are in)."""
    sites = []
    for s in kernel.sites:
        loc = s.loc
        if loc is None:
            sites.append(SiteABI(s.kind, s.detail, "", 0, 0, 0, "", ""))
        else:
            offset = loc.lineno - s.first_line if s.first_line else -1
            sites.append(SiteABI(s.kind, s.detail, loc.filename, loc.lineno, loc.col, loc.end_col, loc.line_text,
                                 loc.func_name, s.owner, offset))  # fmt: skip
    return tuple(sites)


def written_params(kernel: ir.Kernel) -> set[int]:
    """Indices of the ndarray parameters the kernel may write (stores, atomics, reductions into them)."""
    out: set[int] = set()

    def mark(ptr: ir.Value) -> None:
        if isinstance(ptr, ir.ExtPtr) and isinstance(ptr.arr, ir.Arg):  # an element of an ndarray argument
            out.add(ptr.arr.index)

    for s in ir.walk(kernel.body):
        if isinstance(s, (ir.Store, ir.AtomicRMW)):
            mark(s.ptr)
        elif isinstance(s, ir.RangeFor):
            for r in s.reductions:
                mark(r.ptr)
    return out


def _dump(config: Config, symbol: str, texts: dict[str, Any]) -> None:
    suffix = {"ir": ".qd.txt", "llvm": ".ll", "opt": ".opt.ll", "asm": ".s"}
    os.makedirs(config.debug_dump_path, exist_ok=True)
    for stage in config.dump_stages:
        text = texts.get(stage)
        if text is None:
            continue
        path = os.path.join(config.debug_dump_path, symbol + suffix.get(stage, "." + stage))
        with open(path, "w") as f:
            f.write(text)
        _logging.info(f"wrote {path}", tag="dump")
