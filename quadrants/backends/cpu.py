"""The CPU backend: LLVM object code for the host (or a portable x86-64 level), run by the native runtime's
thread pool.

    render      IR --codegen.kernel.lower_kernel--> LLVM module (text) and the kernel's ABI
    compile     LLVM module --codegen.compile.compile_ir--> object code
    entry       `ld -shared` makes a shared object; the artifact entry is the .so followed by the object code
                (the file itself is what dlopen maps; the object serves ORC where shared objects cannot load)
    load        dlopen the entry (no llvmlite), else link the object in-process with ORC
    prepare     the native runtime (codegen/runtime.ll) as a cached shared object, loaded with global symbols so
                every kernel .so and bundle resolves it
    device_key  the host's capabilities (backends/host.py), or the portable target's name
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from quadrants import _logging
from quadrants._config import Config
from quadrants._stats import STATS
from quadrants.backends import dumps
from quadrants.backends.host import device_capabilities, host_runs
from quadrants.cache import keys
from quadrants.cache.store import CacheStore, Entry
from quadrants.runtime.abi import KernelABI
from quadrants.runtime.loader import Loaded, OrcLoader, SharedObjectLoader

if TYPE_CHECKING:
    from quadrants.frontend.records import FrontendResult


@dataclass
class Rendered:
    """A kernel rendered as an LLVM module (its text) for this CPU, with its ABI."""

    llvm_ir: str
    abi: KernelABI
    frontend: FrontendResult
    ir_text: str
    timings: dict[str, float]


@dataclass
class CompiledCpu:
    abi: KernelABI
    object_code: bytes
    ir_text: str
    llvm_ir: str
    frontend: FrontendResult | None
    timings: dict[str, float] = field(default_factory=dict)
    shared: bool = False  # its artifact entry starts with a shared object (`entry` linked one)


class CpuBackend:
    bundles = True

    def __init__(self, config: Config, store: CacheStore | None) -> None:
        self.config = config
        self.store = store
        self._prepared: dict[bool, bool] = {}  # load -> prepare's answer

    @property
    def target(self) -> str:
        return self.config.cpu_target

    def device_key(self) -> str:
        return device_capabilities(self.config.cpu_target)

    def recorded_as(self) -> tuple[str, str]:
        return "cpu", self.config.cpu_target

    def check_target(self) -> str | None:
        """A named CPU must be one LLVM knows. Checked in a child process: an unknown one makes LLVM print
        warnings and then abort the process that compiles for it."""
        import subprocess
        import sys

        target = self.config.cpu_target
        if target == "host":
            return None
        probe = "import sys\nfrom quadrants.codegen.cpu import probe_cpu\nprobe_cpu(sys.argv[1])\n"
        proc = subprocess.run([sys.executable, "-c", probe, target], capture_output=True, text=True, timeout=120)
        if proc.returncode != 0 or "not a recognized processor" in proc.stderr:
            return (f"target {target!r}: LLVM does not know this processor; expected \"host\", an x86-64 level "
                    "(x86-64, x86-64-v2 .. x86-64-v4) or an LLVM CPU name (skylake, znver3, neoverse-v1, ...)")
        return None

    def runnable_targets(self, listed: dict[str, Any]) -> list[str]:
        """Portable levels (`x86-64-v3`...) a `host` process can run: an image precompiled on one machine starts
        fast on another."""
        if self.config.cpu_target != "host":
            return []
        return [t for t in listed.get("cpu", []) if t != "host" and host_runs(t)]

    @property
    def linker(self) -> str | None:
        from quadrants.cache.link import find_linker  # imports subprocess: only when linking

        return find_linker(self.config.linker) if self.store is not None else None

    # ---- compile --------------------------------------------------------------------------------------------

    def render(self, fe: FrontendResult, ir_text: str, symbol: str) -> Rendered:
        """The kernel's IR as an LLVM module for this CPU: the entry function and one task per parallel loop."""
        from quadrants.codegen.abi import error_checks, make_abi
        from quadrants.codegen.cpu import cpu_target, target_machine
        from quadrants.codegen.kernel import TargetInfo, lower_kernel
        from quadrants.codegen.lower import CodegenOptions

        config = self.config
        t0 = time.perf_counter()
        target = cpu_target(config.cpu_target)
        info = TargetInfo(triple=target.triple, data_layout=str(target_machine(target, 2).target_data))
        checks = error_checks(fe.kernel, config.bounds_checked)
        options = CodegenOptions(fast_math=config.fast_math, bounds_checked=config.bounds_checked, error_checks=checks)
        module = lower_kernel(fe.kernel, options, symbol, info)
        abi = make_abi(fe.kernel, symbol, keep_sites=checks)
        return Rendered(str(module), abi, fe, ir_text, {"lower": time.perf_counter() - t0})

    def compile(self, rendered: Rendered) -> CompiledCpu:
        """Optimize the module and emit object code (`opt_level`; `dump_stages` writes each stage's text)."""
        from quadrants.codegen.compile import compile_ir
        from quadrants.codegen.cpu import cpu_target

        config, symbol = self.config, rendered.abi.symbol
        stages = config.dump_stages
        llvm_ir = dumps.replacement(config, symbol, "llvm", rendered.llvm_ir)  # QD_LOAD_IR: a hand-edited module
        with dumps.blamed(config, symbol, "llvm", llvm_ir is not rendered.llvm_ir):
            obj = compile_ir(llvm_ir, symbol, cpu_target(config.cpu_target), config.opt_level,
                             keep_ir="opt" in stages, keep_asm="asm" in stages)  # fmt: skip
        timings = {**rendered.timings, **obj.timings}
        dumps.written(config, symbol, rendered.ir_text, {"llvm": llvm_ir, "opt": obj.optimized_ir, "asm": obj.asm})
        STATS.add(timings)
        return CompiledCpu(rendered.abi, obj.object_code, rendered.ir_text, llvm_ir, rendered.frontend,
                           timings)  # fmt: skip

    def entry(self, compiled: CompiledCpu) -> tuple[bytes, dict[str, Any]]:
        so = self._link(compiled.object_code)
        compiled.shared = bool(so)
        return so + compiled.object_code, {"so": len(so), "obj": len(compiled.object_code),
                                           "abi": compiled.abi.to_dict()}  # fmt: skip

    def _link(self, object_code: bytes) -> bytes:
        """A shared object of one kernel (b"" without a linker, or when linking fails: ORC loads it then)."""
        linker = self.linker
        if linker is None:
            return b""
        from quadrants.cache.link import LinkError, link_shared

        t0 = time.perf_counter()
        try:
            return link_shared(object_code, linker)
        except (LinkError, OSError) as e:
            _logging.warn(f"linking failed, using the in-process JIT: {e}", tag="cache")
            return b""
        finally:
            STATS.time("link", time.perf_counter() - t0)

    def bundle_object(self, compiled: CompiledCpu) -> bytes:
        return compiled.object_code

    def entry_object(self, entry: Entry) -> bytes:
        return object_code(entry)

    # ---- load -----------------------------------------------------------------------------------------------

    def load(self, compiled: CompiledCpu, path: str | None) -> Loaded:
        shared = path if compiled.shared else None
        return self._open(shared, compiled.abi.symbol, lambda: compiled.object_code)

    def load_entry(self, entry: Entry) -> tuple[KernelABI, Loaded]:
        abi = KernelABI.from_dict(entry.meta["abi"])
        return abi, self._open(entry.path if entry.meta["so"] else None, abi.symbol, lambda: object_code(entry))

    def _open(self, shared: str | None, symbol: str, obj: Callable[[], bytes]) -> Loaded:
        """dlopen the shared object at `shared` (no llvmlite), else link the object code in-process with ORC."""
        loaded = try_dlopen(shared, symbol) if shared is not None and self.prepare(True) else None
        return loaded if loaded is not None else OrcLoader.load(obj(), symbol)

    def companions(self) -> list[tuple[str, str]]:
        return [("runtime", runtime_key(self.config, self.device_key()))]

    def prepare(self, load: bool) -> bool:
        ready = self._prepared.get(load)
        if ready is None:
            ready = self._prepared[load] = load_runtime_so(self.store, lambda: self.linker, self.config,
                                                           self.device_key(), load)  # fmt: skip
        return ready

    def launcher(self, abi: KernelABI, loaded: Loaded, program: Any) -> Any:
        from quadrants.runtime.launch import Launcher
        from quadrants.types.python_values import wrap_matrix

        return Launcher(abi, loaded, self.config.num_threads, program.fields.table_address, wrap_matrix,
                        rand=program.random)  # fmt: skip


def object_code(entry: Entry) -> bytes:
    """The relocatable object stored after the shared object in a CPU artifact entry."""
    so_size, obj_size = entry.meta["so"], entry.meta["obj"]
    return bytes(entry.body[so_size : so_size + obj_size])


def try_dlopen(path: str, symbol: str) -> Loaded | None:
    try:
        return SharedObjectLoader.load(path, symbol)
    except (OSError, AttributeError) as e:
        _logging.debug(f"cannot open {path} ({e}); linking in-process instead", tag="cache")
        return None


def runtime_key(config: Config, device: str) -> str:
    """The cache key of the native runtime library: the compiler and the device, not the kernels."""
    return keys.KeyParts("runtime", keys.runtime_parts(config, device)).digest()


def load_runtime_so(store: CacheStore | None, linker: Callable[[], str | None], config: Config, device: str,
                    load: bool) -> bool:  # fmt: skip
    """Find (or build and cache) the native runtime .so for this config and, if `load`, load it globally
    (`linker()` is asked only when it must be built: finding it imports subprocess)."""
    import ctypes

    from quadrants.runtime.loader import RUNTIME_SYMBOL_PROBE

    if store is None:
        return False
    rkey = runtime_key(config, device)
    if rkey in _RUNTIME_LOADED:
        return True
    entry = store.read("runtime", rkey)
    path = entry.path if entry is not None and entry.meta.get("so") else None
    if path is None:
        path = _build_runtime_so(store, rkey, linker(), config)
        if path is None:
            return False
    if not load:
        return True
    try:
        lib = ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
        getattr(lib, RUNTIME_SYMBOL_PROBE)
    except (OSError, AttributeError):
        return False
    _RUNTIME_LIBS.append(lib)
    _RUNTIME_LOADED.add(rkey)
    return True


def _build_runtime_so(store: CacheStore, rkey: str, linker: str | None, config: Config) -> str | None:
    if linker is None:
        return None
    from quadrants.cache.link import LinkError, link_shared
    from quadrants.codegen.compile import compile_ir
    from quadrants.codegen.cpu import cpu_target, target_machine
    from quadrants.codegen.runtime_ir import runtime_module_text

    target = cpu_target(config.cpu_target)
    tm = target_machine(target, 2)
    obj = compile_ir(runtime_module_text(target.triple, str(tm.target_data)), "qd_runtime", target, 2).object_code
    try:
        so = link_shared(obj, linker)
    except (LinkError, OSError):
        return None
    return store.write("runtime", rkey, so, {"so": len(so)})


_RUNTIME_LOADED: set[str] = set()
_RUNTIME_LIBS: list[Any] = []


