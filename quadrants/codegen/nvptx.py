"""The NVIDIA GPU target: LLVM IR -> PTX (llvmlite's NVPTX backend) -> cubin (`ptxas`).

Consumes the LLVM IR text of a lowered kernel (codegen/cuda.py) and a GPU architecture (`sm_80`); produces PTX
text for a pinned PTX ISA and, where `ptxas` exists, a cubin. Transcendental math comes from libdevice, linked
only when a kernel calls it: LLVM's NVPTX backend cannot lower `llvm.sin/exp/log/pow` and aborts the whole
process on them, so `emit_ptx` refuses any module that still calls one (a Python error, not an abort).
"""

from __future__ import annotations

import functools
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field

import llvmlite.binding as llvm

from quadrants._config import cuda_toolkit_homes, libdevice_override
from quadrants.codegen.nvptx_isa import ptx_isa, sm_number  # in a module of its own: the cache keys read it

TRIPLE = "nvptx64-nvidia-cuda"
DEFAULT_ARCH = "sm_80"
# Intrinsics NVPTX cannot select (LLVM aborts the process): they must never reach the backend.
FORBIDDEN = re.compile(r"@llvm\.(sin|cos|tan|exp|exp2|exp10|log|log2|log10|pow|powi|asin|acos|atan|atan2|sinh|cosh|"
                       r"tanh)\.f(16|32|64)\b")  # fmt: skip


class NvptxError(RuntimeError):
    """The GPU code generator or `ptxas` rejected a kernel."""


@dataclass
class PtxResult:
    ptx: str
    arch: str
    timings: dict[str, float] = field(default_factory=dict)


@functools.cache
def _init() -> None:
    llvm.initialize_all_targets()
    llvm.initialize_all_asmprinters()


def parse_arch(arch: str) -> int:
    """`sm_80` / `80` / `8.0` -> 80."""
    return sm_number(arch)


@functools.cache
def target_machine(arch: str, opt: int = 3) -> llvm.TargetMachine:
    _init()
    sm = f"sm_{parse_arch(arch)}"
    try:
        isa = ptx_isa(sm)  # before LLVM, which aborts the process on an ISA too old for the architecture
    except ValueError as e:
        raise NvptxError(str(e)) from None
    target = llvm.Target.from_triple(TRIPLE)
    return target.create_target_machine(cpu=sm, features=f"+ptx{isa}", opt=opt)


def data_layout(arch: str = DEFAULT_ARCH) -> str:
    return str(target_machine(arch).target_data)


# ---- libdevice --------------------------------------------------------------------------------------------


def libdevice_path() -> str | None:
    """libdevice.10.bc: QD_LIBDEVICE, the CUDA toolkit (CUDA_HOME, /usr/local/cuda*), or NVIDIA's pip wheels
    (`nvidia-cuda-nvcc` of CUDA 12, `nvidia-nvvm` of CUDA 13)."""
    candidates = [libdevice_override()]
    for home in cuda_toolkit_homes() + sorted(glob.glob("/usr/local/cuda-*"), reverse=True) + _wheel_homes():
        candidates.append(os.path.join(home, "nvvm", "libdevice", "libdevice.10.bc"))
    return next((c for c in candidates if c and os.path.isfile(c)), None)


def _wheel_homes() -> list[str]:
    """The toolkit folders NVIDIA's pip wheels install: `nvidia/cuda_nvcc/` (CUDA 12: ptxas and libdevice in one
    wheel) and `nvidia/cu13/` (CUDA 13: `nvidia-cuda-nvcc` brings ptxas, `nvidia-nvvm` libdevice), newest first.
    Found without importing `nvidia` (a namespace package: its portions are the `nvidia/` folders on sys.path)."""
    homes: list[str] = []
    for entry in sys.path:
        base = os.path.join(entry or ".", "nvidia")
        if os.path.isdir(base):
            homes += sorted(glob.glob(os.path.join(base, "cu[0-9]*")), reverse=True)
            homes.append(os.path.join(base, "cuda_nvcc"))
    return homes


@functools.cache
def _libdevice_bytes() -> bytes:
    path = libdevice_path()
    if path is None:
        raise NvptxError("this kernel needs libdevice (GPU math functions) but libdevice.10.bc was not found: "
                         "install the CUDA toolkit or the nvidia-cuda-nvcc wheel, or set QD_LIBDEVICE")  # fmt: skip
    with open(path, "rb") as f:
        return f.read()


# ---- PTX ----------------------------------------------------------------------------------------------


def emit_ptx(llvm_ir: str, arch: str = DEFAULT_ARCH, opt_level: int = 1, kernels: tuple[str, ...] = ()) -> PtxResult:
    """Optimize a lowered module for `arch` and emit PTX. `kernels`: the entry points (everything else is made
    internal so unused libdevice code disappears)."""
    _init()
    tm = target_machine(arch)
    t0 = time.perf_counter()
    module = llvm.parse_assembly(llvm_ir)
    module.triple = TRIPLE
    module.data_layout = str(tm.target_data)
    if re.search(r"@\"?__nv_", llvm_ir):
        lib = llvm.parse_bitcode(_libdevice_bytes())
        lib.triple, lib.data_layout = module.triple, module.data_layout
        module.link_in(lib)
        for fn in module.functions:
            if not fn.is_declaration and fn.name not in kernels:
                fn.linkage = "internal"
    module.verify()
    t1 = time.perf_counter()
    pto = llvm.create_pipeline_tuning_options(speed_level=0 if opt_level <= 0 else 3)
    pb = llvm.create_pass_builder(tm, pto)
    dce = llvm.create_new_module_pass_manager()
    dce.add_global_dead_code_eliminate_pass()  # drop unused libdevice before the (costly) pipeline sees it
    dce.run(module, pb)
    if opt_level > 0:
        pb = llvm.create_pass_builder(tm, pto)
        pb.getModulePassManager().run(module, pb)
    t2 = time.perf_counter()
    bad = FORBIDDEN.search(str(module))
    if bad is not None:
        raise NvptxError(f"internal error: {bad.group(0)} reached the NVPTX backend (it would abort the process)")
    ptx = tm.emit_assembly(module)
    t3 = time.perf_counter()
    return PtxResult(ptx, f"sm_{parse_arch(arch)}", {"nvptx_parse_link": t1 - t0, "nvptx_opt": t2 - t1,
                                                     "nvptx_emit": t3 - t2})  # fmt: skip


# ---- cubin ----------------------------------------------------------------------------------------------


def ptxas_path() -> str | None:
    """`ptxas`: on PATH, in the CUDA toolkit (CUDA_HOME, CUDA_PATH, /usr/local/cuda), or from NVIDIA's
    `nvidia-cuda-nvcc` pip wheel (what an image that only builds cubins installs: no toolkit)."""
    found = shutil.which("ptxas")
    if found:
        return found
    for home in cuda_toolkit_homes() + _wheel_homes():
        if os.access(os.path.join(home, "bin", "ptxas"), os.X_OK):
            return os.path.join(home, "bin", "ptxas")
    return None


def assemble(ptx: str, arch: str) -> bytes:
    """PTX -> cubin for `arch` with `ptxas` (raises NvptxError with ptxas's message when it rejects the PTX)."""
    exe = ptxas_path()
    if exe is None:
        raise NvptxError("ptxas not found (install the CUDA toolkit or put ptxas on PATH)")
    sm = f"sm_{parse_arch(arch)}"
    with tempfile.TemporaryDirectory(prefix="qd-ptxas-") as tmp:
        src, out = os.path.join(tmp, "k.ptx"), os.path.join(tmp, "k.cubin")
        with open(src, "w") as f:
            f.write(ptx)
        proc = subprocess.run([exe, f"-arch={sm}", "-o", out, src], capture_output=True, text=True)
        if proc.returncode != 0:
            raise NvptxError(f"ptxas -arch={sm} rejected the PTX: {proc.stderr.strip()[:2000]}")
        with open(out, "rb") as f:
            return f.read()
