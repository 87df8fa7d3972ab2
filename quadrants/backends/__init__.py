"""Backends: one object per device, the only place that knows how code is made and run for it.

A backend turns a kernel's checked IR into code (`render`: an LLVM module; `compile`: object code or
PTX/cubins), lays that code out as a cache entry (`entry`), makes it callable (`load`, `load_entry`) and
wraps it in a launcher (`launcher`). It also supplies its part of every cache key (`device_key`) and says which
other targets' cached code this machine can run (`runnable_targets`). The driver (quadrants/driver/) runs the
pipeline and asks the backend for each device-specific step; the cache never sees a backend.

    cpu.py    the host CPU: LLVM object code, linked into shared objects (ld) or in-process (ORC)
    cuda.py   NVIDIA GPUs: NVPTX → PTX → cubins (ptxas), launched through cuda-python; or emulated on the host

Adding a device means adding one module with a class that satisfies `Backend`, and a line in `backend_for`.
Backend modules import llvmlite and the code generators only inside `render` and `compile`: a cache hit never
loads them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from quadrants._config import Config

if TYPE_CHECKING:  # annotations only: qd.init (open_device) and a cache hit load none of these for it
    from quadrants.cache.store import CacheStore, Entry
    from quadrants.frontend.records import FrontendResult
    from quadrants.runtime.abi import KernelABI


class Compiled(Protocol):
    """A kernel compiled by a backend: its ABI and the intermediates kept for dumps and tests."""

    abi: KernelABI
    llvm_ir: str
    ir_text: str
    frontend: FrontendResult | None


class Backend(Protocol):
    config: Config
    store: CacheStore | None
    bundles: bool  # its kernels can be linked together into bundles (one dlopen for many kernels)

    @property
    def target(self) -> str:
        """The target as `with_target` spells it and `qd cache ls` shows it: `host`, `x86-64-v3`, `cuda:sm_80`."""

    def device_key(self) -> str:
        """The device part of every cache key: what the generated code depends on besides the kernel."""

    def recorded_as(self) -> tuple[str, str]:
        """How `targets.json` lists this target: (its section, the name in it), e.g. ("cuda", "sm_80")."""

    def check_target(self) -> str | None:
        """Why code cannot be made for this target on this machine (None: it can). Run before compiling."""

    def runnable_targets(self, listed: dict[str, Any]) -> list[str]:
        """Of the targets `qd precompile` recorded (`targets.json`), those whose code this process can run in
        place of its own, best first (empty when it cannot use any)."""

    def render(self, fe: FrontendResult, ir_text: str, symbol: str) -> Any:
        """The kernel's IR (`fe.kernel`; `ir_text` is kept for dumps) as an LLVM module whose entry is `symbol`,
        with its ABI (and whatever else the backend launches by, e.g. the GPU's task plan)."""

    def compile(self, rendered: Any) -> Compiled:
        """The rendered module as code: object code, or PTX and cubins. Raises QuadrantsCompilationError."""

    def entry(self, compiled: Any) -> tuple[bytes, dict[str, Any]]:
        """The artifact entry's body and metadata for `compiled`."""

    @property
    def linker(self) -> str | None:
        """The system linker that makes shared objects and bundles (None: this backend makes none)."""

    def bundle_object(self, compiled: Any) -> bytes | None:
        """The object code the session bundle links for this kernel (None: this backend makes no bundles)."""

    def entry_object(self, entry: Entry) -> bytes | None:
        """The same for a kernel loaded from its artifact entry."""

    def load(self, compiled: Any, path: str | None) -> Any:
        """Make freshly compiled code callable (`path`: its artifact entry, when stored)."""

    def load_entry(self, entry: Entry) -> tuple[KernelABI, Any]:
        """Make an artifact entry's code callable."""

    def companions(self) -> list[tuple[str, str]]:
        """(kind, key) of the entries every kernel of this backend needs (the CPU's native runtime): a process
        asking the remote cache for its first entry asks for these in the same round trip."""

    def prepare(self, load: bool) -> bool:
        """Find or build what kernels link against (the CPU's native runtime), loading it when `load`;
        False when shared objects cannot be used (code then loads in-process)."""

    def launcher(self, abi: KernelABI, loaded: Any, program: Any) -> Any:
        """The callable that marshals a call's arguments and runs the loaded kernel."""


def backend_for(config: Config, store: CacheStore | None, device: Any = None) -> Backend:
    """The backend of `config.arch` (`device`: the GPU, or its emulator, for arch=cuda)."""
    if config.arch.name == "cuda":
        from quadrants.backends.cuda import CudaBackend

        return CudaBackend(config, store, device)
    from quadrants.backends.cpu import CpuBackend

    return CpuBackend(config, store)


def open_device(config: Config) -> tuple[Config, Any]:
    """The device `config.arch` asks for, and the config as it will run: arch=cuda/gpu gets the GPU through
    cuda-python (or the emulator, with `cuda_emulate`) when one is usable, else the CPU with a warning (an error
    with `enable_fallback=False`); an arch this package has no backend for runs on the CPU the same way."""
    import dataclasses

    from quadrants import _config

    if config.arch in _config.FOREIGN:
        _fallback(config, f"arch={config.arch.name} is not a backend of this package")
        return dataclasses.replace(config, arch=_config.cpu), None
    if config.arch is _config.python:  # no device: kernels run as Python on torch tensors (runtime/python_backend)
        from quadrants.runtime import python_backend

        if python_backend.available():
            return config, None
        _fallback(config, "arch=python needs torch, which is not installed")
        return dataclasses.replace(config, arch=_config.cpu), None
    if config.arch.name not in ("gpu", "cuda"):
        return config, None
    from quadrants.backends.cuda import open_gpu

    dev, why = open_gpu(config)
    if dev is None:
        _fallback(config, f"arch={config.arch.name}: {why}")
        return dataclasses.replace(config, arch=_config.cpu), None
    return dataclasses.replace(config, arch=_config.cuda, cuda_arch=config.cuda_arch or dev.arch), dev


def _fallback(config: Config, why: str) -> None:
    """Run on the CPU instead of the requested arch: a warning, or an error with enable_fallback=False."""
    if not config.enable_fallback:
        raise RuntimeError(f"{why}, and enable_fallback=False: not falling back to the CPU")
    from quadrants import _logging

    _logging.warn(f"{why}; falling back to the CPU", tag="init")


def device_key(config: Config) -> str:
    """The device part of `config`'s keys, without a device or a store (the CLI's cache commands)."""
    return backend_for(config, None).device_key()
