"""`quadrants.lang.misc`: where Quadrants defines `init`, the architectures, the SNode axes and the kernel hints.
Programs import from it by that path (`from quadrants.lang.misc import get_host_arch_list, loop_unique`); the
names are this package's own, gathered here under Quadrants' module name.
"""

from __future__ import annotations

from typing import Any

from quadrants._config import amdgpu, cpu, cuda, metal, python, vulkan
from quadrants._config import gpu_archs as gpu
from quadrants.frontend.intrinsics import (
    assume_in_range,
    block_local,
    cache_read_only,
    graph_do_while,
    loop_config,
    loop_unique,
    no_activate,
)
from quadrants.lang.compat import Extension as extension
from quadrants.lang.compat import is_extension_supported
from quadrants.lang.program import init, reset
from quadrants.lang.snode import axes, i, ij, ijk, ijkl, ijl, ik, ikl, il, j, jk, jkl, jl, k, kl, l


def get_host_arch_list() -> list[object]:
    """The architectures of the host: its CPU."""
    return [cpu]


def is_extension_enabled(ext: extension) -> bool:
    """Whether the running program's architecture offers `ext` (the adstack also needs
    `ad_stack_experimental_enabled`), as Quadrants answers it."""
    from quadrants.lang.program import current_config

    cfg = current_config()
    if cfg is None:
        raise RuntimeError("qd.is_extension_enabled needs qd.init() first")
    supported = is_extension_supported(cfg.arch, ext)
    return supported and bool(cfg.ad_stack_experimental_enabled) if ext is extension.adstack else supported


def dump_compile_config() -> None:
    """Print the running program's settings, one `name=value` a line, sorted (they are in the cache keys: a
    diff of two processes' dumps shows why one missed the other's fastcache entries)."""
    from quadrants.lang.program import current_config

    cfg = current_config()
    if cfg is None:
        raise RuntimeError("qd.dump_compile_config needs qd.init() first")
    print("\n".join(f"{k}={getattr(cfg, k)}" for k in sorted(vars(cfg)) if not k.startswith("_")))


def clock_freq_hz() -> float:
    """The compute device's nominal clock in Hz, the rate `qd.clock_counter()` counts at on it: CUDA devices
    only (NotImplementedError elsewhere, as in Quadrants: a CPU's time-stamp counter has no rate to ask for)."""
    from quadrants.runtime import device

    query = getattr(device.current(), "clock_rate_khz", None)  # a real GPU's driver (not the CPU, not the emulator)
    if query is None:
        raise NotImplementedError("qd.clock_freq_hz() needs a CUDA device (qd.init(arch=qd.cuda) on a GPU)")
    return float(query() * 1000)


__all__ = [
    "amdgpu", "assume_in_range", "axes", "block_local", "cache_read_only", "clock_freq_hz", "cpu", "cuda",
    "dump_compile_config", "extension", "get_host_arch_list", "gpu", "graph_do_while", "i", "ij", "ijk", "ijkl", "ijl", "ik", "ikl", "il", "init",
    "is_extension_enabled", "is_extension_supported", "j", "jk", "jkl", "jl", "k", "kl", "l", "loop_config", "loop_unique", "metal",
    "no_activate", "python", "reset", "vulkan",
]  # fmt: skip


def _check_ir_load_envs_against_caching(cfg: Any, src_ll_cache: bool) -> None:
    """Quadrants' check of QD_LOAD_IR / QUADRANTS_LOAD_PTX (read from the environment as qd.init reads them)
    against `cfg.offline_cache` and `src_ll_cache`, for `cfg.arch` (any of Quadrants' archs): a ValueError where
    a cache would keep the edited files from being read (`_config.check_ir_loading`)."""
    from quadrants import _config

    env, _ = _config.load_config({})
    _config.check_ir_loading(cfg.arch, env.load_ir, env.load_ptx, cfg.offline_cache, src_ll_cache)
