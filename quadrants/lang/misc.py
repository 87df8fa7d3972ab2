"""`quadrants.lang.misc`: where Quadrants defines `init`, the architectures, the SNode axes and the kernel hints.
Programs import from it by that path (`from quadrants.lang.misc import get_host_arch_list, loop_unique`); the
names are this package's own, gathered here under Quadrants' module name.
"""

from __future__ import annotations

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


__all__ = [
    "amdgpu", "assume_in_range", "axes", "block_local", "cache_read_only", "cpu", "cuda", "extension",
    "get_host_arch_list", "gpu", "graph_do_while", "i", "ij", "ijk", "ijkl", "ijl", "ik", "ikl", "il", "init",
    "is_extension_supported", "j", "jk", "jkl", "jl", "k", "kl", "l", "loop_config", "loop_unique", "metal",
    "no_activate", "python", "reset", "vulkan",
]  # fmt: skip
