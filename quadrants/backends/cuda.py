"""The CUDA backend: a kernel becomes tasks (codegen/cuda.py), NVPTX → PTX per architecture (codegen/nvptx.py)
and cubins (`ptxas`), loaded and launched on a GPU through cuda-python (runtime/cuda_driver.py,
runtime/cuda_launch.py) - or, with `cuda_emulate`, the same tasks compiled for the host and run by
runtime/emulator.py, which tests this backend without a GPU.

    entry       the images (`sm_80` cubin, `ptx:sm_80` PTX text, or `host` object code) back to back, with the
                launch plan and the ABI in the metadata
    device_key  `cuda/<sm>/ptx<ISA>` (plus the host's capabilities when emulated)
    runnable    a real GPU runs an older architecture's cubin of its major version, or PTX not above it
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from quadrants._config import Config
from quadrants._stats import STATS
from quadrants.backends import dumps
from quadrants.backends.host import device_capabilities
from quadrants.cache.store import CacheStore, Entry
from quadrants.runtime.abi import KernelABI

if TYPE_CHECKING:
    from quadrants.frontend.records import FrontendResult

DEFAULT_ARCH = "sm_80"  # what is compiled for without a device or `cuda_arch`


@dataclass
class CompiledCuda:
    """A kernel compiled by the CUDA backend: its launch plan and images - `sm_80` (a cubin), `ptx:sm_80` (PTX
    text, for the driver to JIT on newer GPUs), or `host` (object code for runtime/emulator.py)."""

    abi: KernelABI
    plan: Any  # codegen.cuda_plan.CudaPlan
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


class CudaBackend:
    bundles = False

    def __init__(self, config: Config, store: CacheStore | None, device: Any = None) -> None:
        """`device`: a runtime.device.Device (a GPU or the emulator); None when only compiling (qd precompile)."""
        self.config = config
        self.store = store
        self.device = device

    @property
    def arch(self) -> str:
        return self.config.cuda_arch or DEFAULT_ARCH

    @property
    def target(self) -> str:
        return f"cuda:{self.config.cuda_arch}"

    def device_key(self) -> str:
        from quadrants.codegen.nvptx_isa import ptx_isa  # a table: no llvmlite

        gpu = f"cuda/{self.arch}/ptx{ptx_isa(self.arch)}"
        return f"{gpu}/emulated-on:{device_capabilities('host')}" if self.config.cuda_emulate else gpu

    def recorded_as(self) -> tuple[str, str]:
        return "cuda", self.config.cuda_arch

    def check_target(self) -> None:
        return None  # any architecture compiles here: NVPTX is built into llvmlite

    def runnable_targets(self, listed: dict[str, Any]) -> list[str]:
        """Older architectures of a real GPU, newest first (the device picks a compatible image of each)."""
        if self.device is None or self.device.emulated:
            return []
        own = _sm(self.config.cuda_arch)
        archs = [a for a in listed.get("cuda", []) if a != self.config.cuda_arch and 0 < _sm(a) <= own]
        return [f"cuda:{a}" for a in sorted(archs, key=_sm, reverse=True)]

    # ---- compile --------------------------------------------------------------------------------------------

    def render(self, fe: FrontendResult, ir_text: str, symbol: str) -> RenderedCuda:
        return render_cuda(fe, ir_text, symbol, self.config, self.arch)

    def compile(self, rendered: RenderedCuda) -> CompiledCuda:
        compiled = compile_rendered(rendered, self.config, (self.arch,), edited=True)
        dumps.written(self.config, rendered.abi.symbol, rendered.ir_text, {"llvm": compiled.llvm_ir,
                                                                           "ptx": compiled.ptx})  # fmt: skip
        STATS.add(compiled.timings)
        return compiled

    def entry(self, compiled: CompiledCuda) -> tuple[bytes, dict[str, Any]]:
        body, layout = bytearray(), {}
        for name, image in compiled.images.items():
            layout[name] = [len(body), len(image)]
            body += image
        return bytes(body), {"cuda": compiled.plan.to_json(), "images": layout, "abi": compiled.abi.to_dict()}

    @property
    def linker(self) -> None:
        return None  # GPU modules load one by one: no shared objects, no bundles

    def bundle_object(self, compiled: CompiledCuda) -> None:
        return None

    def entry_object(self, entry: Entry) -> None:
        return None

    # ---- load -----------------------------------------------------------------------------------------------

    def load(self, compiled: CompiledCuda, path: str | None) -> Any:
        return self.device.load(compiled.images, compiled.plan) if self.device is not None else None

    def load_entry(self, entry: Entry) -> tuple[KernelABI, Any]:
        from quadrants.codegen.cuda_plan import CudaPlan

        meta = entry.meta
        abi = KernelABI.from_dict(meta["abi"])
        if self.device is None:
            return abi, None
        images = {k: bytes(entry.body[o : o + n]) for k, (o, n) in meta["images"].items()}
        return abi, self.device.load(images, CudaPlan.from_json(meta["cuda"]))

    def companions(self) -> list[tuple[str, str]]:
        return []  # a GPU entry holds all its code

    def prepare(self, load: bool) -> bool:
        return True  # nothing to link against: the tasks are self-contained

    def launcher(self, abi: KernelABI, loaded: Any, program: Any) -> Any:
        from quadrants.runtime.cuda_launch import CudaLauncher
        from quadrants.types.python_values import wrap_matrix

        return CudaLauncher(abi, loaded, program.device, program.fields.table_address, wrap_matrix,
                            check_errors=self.config.bounds_checked, rand=program.random)  # fmt: skip


def gpu_available() -> bool:
    """A cheap probe (about 0.2 ms): can the CUDA driver library be opened?"""
    import ctypes

    try:
        ctypes.CDLL("libcuda.so.1")
    except OSError:
        return False
    return True


def open_gpu(config: Config) -> tuple[Any, str]:
    """(the device, "") - the emulator with `cuda_emulate`, else the GPU through cuda-python - or (None, why not)."""
    if config.cuda_emulate:
        from quadrants.runtime.emulator import EmulatedDevice

        return EmulatedDevice(), ""
    if not gpu_available():
        return None, "no CUDA driver found"
    try:
        from quadrants.runtime.cuda_driver import CudaDevice

        return CudaDevice(stack_limit=config.cuda_stack_limit), ""
    except Exception as e:  # noqa: BLE001 - cuda-python missing, no device, driver too old: say which
        return None, f"the CUDA device could not be used ({e})"


@dataclass
class RenderedCuda:
    """A kernel rendered for the GPU: the NVPTX module (or, emulated, a host module) and its launch plan."""

    llvm_ir: str
    plan: Any  # codegen.cuda_plan.CudaPlan
    abi: KernelABI
    frontend: FrontendResult
    ir_text: str
    timings: dict[str, float]


def render_cuda(fe: FrontendResult, ir_text: str, symbol: str, config: Config, arch: str) -> RenderedCuda:
    """The kernel's tasks as an NVPTX module for `arch`; with `config.cuda_emulate`, as host functions for
    runtime/emulator.py (thread ids read from a global, math from libm)."""
    from quadrants.codegen.abi import error_checks, make_abi
    from quadrants.codegen.cuda import lower_cuda_kernel
    from quadrants.codegen.lower import CodegenOptions

    t0 = time.perf_counter()
    checks = error_checks(fe.kernel, config.bounds_checked)
    opts = CodegenOptions(fast_math=config.fast_math, contract=True, bounds_checked=config.bounds_checked,
                          error_checks=checks)  # fmt: skip
    host = None
    if config.cuda_emulate:
        from quadrants.codegen.cpu import cpu_target, target_machine
        from quadrants.codegen.kernel import TargetInfo

        target = cpu_target("host")
        host = TargetInfo(target.triple, str(target_machine(target, 2).target_data))
    module, plan = lower_cuda_kernel(fe.kernel, opts, symbol, arch, emulate_on=host)
    abi = make_abi(fe.kernel, symbol, keep_sites=checks)
    return RenderedCuda(str(module), plan, abi, fe, ir_text, {"cuda_lower": time.perf_counter() - t0})


def compile_rendered(r: RenderedCuda, config: Config, archs: tuple[str, ...], cubin: bool = True,
                     edited: bool = False) -> CompiledCuda:  # fmt: skip
    """PTX per architecture in `archs`, and cubins with `ptxas` when it is installed (`cubin`); emulated, host
    object code. `edited`: the module and the PTX are read from `debug_dump_path` where `load_ir` / `load_ptx`
    ask for it (the kernel a program compiles to run, not the PTX check's copies). Raises
    codegen.nvptx.NvptxError, QuadrantsCompilationError for a replacement that does not compile."""
    timings = dict(r.timings)
    symbol = r.abi.symbol
    llvm_ir = dumps.replacement(config, symbol, "llvm", r.llvm_ir) if edited else r.llvm_ir
    with dumps.blamed(config, symbol, "llvm", llvm_ir is not r.llvm_ir):  # (NvptxError is a RuntimeError)
        if config.cuda_emulate:
            from quadrants.codegen.compile import compile_ir
            from quadrants.codegen.cpu import cpu_target

            obj = compile_ir(llvm_ir, symbol, cpu_target("host"), config.opt_level)
            return CompiledCuda(r.abi, r.plan, {"host": obj.object_code}, llvm_ir, {**timings, **obj.timings},
                                r.frontend, r.ir_text)  # fmt: skip
        from quadrants.codegen import nvptx

        entry_points = tuple(t.name for t in r.plan.tasks)
        images: dict[str, bytes] = {}
        for arch in archs:
            res = nvptx.emit_ptx(llvm_ir, arch, config.opt_level, entry_points)
            for k, v in res.timings.items():
                timings[k] = timings.get(k, 0.0) + v
            ptx = dumps.replacement(config, symbol, "ptx", res.ptx, res.arch) if edited else res.ptx
            images[f"ptx:{res.arch}"] = ptx.encode()
            if cubin and nvptx.ptxas_path() is not None:
                t1 = time.perf_counter()
                with dumps.blamed(config, symbol, "ptx", ptx is not res.ptx, res.arch):
                    images[res.arch] = nvptx.assemble(ptx, res.arch)
                timings["ptxas"] = timings.get("ptxas", 0.0) + time.perf_counter() - t1
    return CompiledCuda(r.abi, r.plan, images, llvm_ir, timings, r.frontend, r.ir_text)


def compile_cuda(fe: FrontendResult, ir_text: str, symbol: str, config: Config, archs: tuple[str, ...],
                 cubin: bool = True) -> CompiledCuda:  # fmt: skip
    """Render and compile in one step (the PTX check and tests), for `archs` (the module is rendered for the
    first)."""
    return compile_rendered(render_cuda(fe, ir_text, symbol, config, archs[0]), config, archs, cubin)


def check_ptx(fe: FrontendResult, ir_text: str, name: str, symbol: str, config: Config) -> None:
    """`ptx_check` (the test suite's CUDA check, on any backend): compile the kernel for the GPU archs listed and
    assemble each with ptxas; a codegen or ptxas failure is a compilation error."""
    from quadrants.codegen.nvptx import NvptxError
    from quadrants.errors import QuadrantsCompilationError

    archs = tuple(a.strip() for a in config.ptx_check.split(",") if a.strip())
    try:
        compile_cuda(fe, ir_text, symbol, dataclasses.replace(config, cuda_emulate=False), archs)
    except NvptxError as e:
        raise QuadrantsCompilationError(f"the CUDA backend failed on kernel {name!r}: {e}") from None
    STATS.count("ptx_checked")


def _sm(arch: str) -> int:
    """`sm_86` -> 86 (0 when not a GPU architecture)."""
    digits = arch.removeprefix("sm_")
    return int(digits) if digits.isdigit() else 0
