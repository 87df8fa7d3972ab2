"""Quadrants' `quadrants.lang.impl` functions that programs call (Genesis: `impl.current_cfg().debug`).

Only what programs reach is here: the active settings and the device's shared-memory size.
"""

from __future__ import annotations

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
