"""Quadrants' `quadrants.lang.impl` functions that programs call (Genesis: `impl.current_cfg().debug`).

Only what programs reach is here: the active settings, the device's shared-memory size, and `get_runtime()`,
the runtime object whose few members programs and tests use (`prog.config()`, `prog.get_device_caps()`,
`materialize()`, `sync()`, the default types, the number of compiled kernels).
"""

from __future__ import annotations

from typing import Any

from quadrants import _config
from quadrants.errors import QuadrantsRuntimeError
from quadrants.lang import program


def current_cfg() -> _config.Config:
    """The settings of the active program (`.debug`, `.arch`, ...), as `qd.cfg`. Before `qd.init` this is
    Quadrants' error."""
    cfg = program.current_config()
    if cfg is None:
        raise QuadrantsRuntimeError("_prog attribute not initialized. Maybe you forgot to call `qd.init()` first?")
    return cfg


def get_max_shared_memory_bytes(*, is_lowerbound_ok: bool) -> int:
    """Shared memory per block, in bytes: the GPU's opt-in limit on CUDA; 0 on the CPU (no shared memory)
    when a lower bound will do; otherwise a RuntimeError, as in Quadrants."""
    arch = current_cfg().arch
    if arch is _config.cuda:
        from quadrants.runtime import device

        query = getattr(device.current(), "max_shared_memory_bytes", None)  # a real GPU (not the emulator)
        if query is not None:
            return int(query())
        if is_lowerbound_ok:
            return 48 * 1024  # every CUDA GPU since sm_20 gives a block at least this much
    elif is_lowerbound_ok and arch is _config.cpu:
        return 0
    raise RuntimeError(f"get_max_shared_memory_bytes not implemented for arch {arch}")


def get_cuda_compute_capability() -> int:
    """The CUDA device's compute capability as Quadrants gives it (80 for sm_80; the emulator's is its target's),
    which `qd.simt.warp.match_*` need at 70 or more. Without the CUDA backend: a RuntimeError."""
    dev = program.get().device if current_cfg().arch is _config.cuda else None
    arch = getattr(dev, "arch", None)
    if not isinstance(arch, str) or not arch.startswith("sm_"):
        raise RuntimeError("get_cuda_compute_capability needs the CUDA backend (qd.init(arch=qd.cuda))")
    return int(arch.removeprefix("sm_").rstrip("af"))


class _DeviceCaps:
    """`prog.get_device_caps()`: Quadrants' SPIR-V capability table. No backend here is SPIR-V, so every
    capability reads 0, as on Quadrants' CPU and CUDA backends."""

    def get(self, capability: Any) -> int:
        return 0

    def hashed_key(self) -> str:
        """What the device contributes to the cache keys (the backend's `device_key`)."""
        from quadrants.backends import device_key

        return device_key(program.get().config)


class _ProgramView:
    """`get_runtime().prog`: the active program's settings and device capabilities."""

    def config(self) -> _config.Config:
        return current_cfg()

    def get_device_caps(self) -> _DeviceCaps:
        return _DeviceCaps()

    def synchronize(self) -> None:
        program.sync()

    def _get_num_ndarrays(self) -> int:
        """How many ndarrays of the running program are alive (one that is no longer referenced is freed)."""
        from quadrants.runtime.ndarray import LIVE

        return len(LIVE)

    # Quadrants' graph introspection. No backend here builds CUDA graphs (a graph kernel's loops launch one by
    # one, as Quadrants does on the CPU), so the graph cache is always empty; the task count and the yielded
    # checkpoint are those of the last kernel launched through the general path (lang/checkpoint.LAST_CALL).
    def get_graph_cache_size(self) -> int:
        return 0

    def get_graph_cache_used_on_last_call(self) -> bool:
        return False

    def get_graph_num_nodes_on_last_call(self) -> int:
        return 0

    def get_graph_total_builds(self) -> int:
        return 0

    def get_graph_num_checkpoints_on_last_call(self) -> int:
        return 0  # (conditional IF nodes: none without a CUDA graph)

    def get_num_offloaded_tasks_on_last_call(self) -> int:
        from quadrants.lang.checkpoint import LAST_CALL

        return LAST_CALL.tasks

    def get_graph_last_yield_cp_id_on_last_call(self) -> int:
        from quadrants.lang.checkpoint import LAST_CALL

        return LAST_CALL.yielded


class Runtime:
    """`impl.get_runtime()`: Quadrants' PyQuadrants as programs reach it. Fields need no materialize step here
    (their memory is placed when they are made), so `materialize()` only starts the program, as a kernel call
    would."""

    prog = _ProgramView()

    @property
    def ndarrays(self) -> list[Any]:
        """The running program's live ndarrays."""
        from quadrants.runtime.ndarray import LIVE

        return list(LIVE)

    @property
    def _arch(self) -> _config.Arch:
        return current_cfg().arch

    @property
    def default_fp(self) -> Any:
        return program.get().config.default_fp

    @default_fp.setter
    def default_fp(self, dtype: Any) -> None:
        program.set_defaults(default_fp=dtype)

    @property
    def default_ip(self) -> Any:
        return program.get().config.default_ip

    @default_ip.setter
    def default_ip(self, dtype: Any) -> None:
        """Assigning the attribute takes any integer type, unsigned ones too (as Quadrants' attribute does: its
        literals and `int` are then that type, and wrap as it does); `qd.init(default_ip=)` and `set_default_ip`
        take i32 or i64 only."""
        from quadrants.types import dtypes

        t = dtypes.to_dtype(dtype) if dtypes.is_dtype_like(dtype) else None
        if t is None or not t.is_integral or t.itemsize < 4:
            raise ValueError(f"default_ip must be a 32- or 64-bit integer type, got {dtype!r}")
        program.set_defaults(parse=False, default_ip=t)

    def set_default_fp(self, dtype: Any) -> None:
        program.set_defaults(default_fp=dtype)

    def set_default_ip(self, dtype: Any) -> None:
        program.set_defaults(default_ip=dtype)

    @property
    def materialized(self) -> bool:
        return program.current_config() is not None

    def materialize(self) -> None:
        program.get()

    def sync(self) -> None:
        program.sync()

    def get_num_compiled_functions(self) -> int:
        return program.compiled_count()


_RUNTIME = Runtime()


def get_runtime() -> Runtime:
    """The runtime object (one per process; it reads the active program at each use)."""
    return _RUNTIME


def __getattr__(name: str) -> object:
    """`Kernel` (the class of `qd.kernel` objects; programs annotate `kernel._primal` with it) and
    `QuadrantsSyntaxError`, under the names Quadrants' `quadrants.lang.impl` has them; imported on first use."""
    if name == "Kernel":
        from quadrants.lang.kernel import Kernel

        return Kernel
    if name == "QuadrantsSyntaxError":
        from quadrants.errors import QuadrantsSyntaxError

        return QuadrantsSyntaxError
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
