"""Where kernel data lives, and (for GPUs) how kernels are loaded and launched.

`Memory` allocates the storage of ndarrays and fields and says when Python may touch it. On the CPU it is plain
host memory. A `Device` (an NVIDIA GPU through cuda-python, or the CPU emulator used to test the CUDA backend
without a GPU) allocates managed memory, which both the GPU and Python address: an ndarray is one allocation
that kernels receive by pointer and numpy views directly, and Python-scope access first waits for the kernels
in flight (`host_access`).
"""

from __future__ import annotations

import ctypes
import math
from dataclasses import dataclass
from typing import Any

import numpy as np


class Memory:
    """Host memory: what the CPU backend uses."""

    name = "host"

    def zeros(self, nbytes: int) -> np.ndarray:
        """A zeroed uint8 buffer that kernels and numpy can both address."""
        return np.zeros(max(nbytes, 1), np.uint8)

    def host_access(self) -> None:
        """Called before Python reads or writes kernel data."""

    def clear(self, address: int, nbytes: int) -> None:
        """Zero `nbytes` of kernel data at `address` (a GPU: on the device, no page moves to the host)."""
        ctypes.memset(address, 0, nbytes)

    def sync(self) -> None:
        """Wait for the kernels in flight (CPU kernels run synchronously: nothing to wait for)."""


HOST = Memory()
_current: Memory = HOST


def current() -> Memory:
    return _current


def set_current(memory: Memory) -> None:
    global _current
    _current = memory


@dataclass(frozen=True)
class LoadedCuda:
    """A kernel's tasks loaded on a device: one function handle per task of its plan."""

    plan: Any  # codegen.cuda.CudaPlan
    functions: tuple[Any, ...]
    keepalive: Any = None


class Device(Memory):
    """A CUDA device. Subclasses: runtime/cuda_driver.CudaDevice, runtime/emulator.EmulatedDevice."""

    arch: str = "sm_80"  # what code is compiled for
    emulated: bool = False
    multiprocessors: int = 1

    def load(self, image: dict[str, bytes], plan: Any) -> LoadedCuda:
        raise NotImplementedError

    def launch(self, fn: Any, grid: int, block: int, params: list[tuple[Any, Any]]) -> None:
        """Launch `fn` on `grid` blocks of `block` threads; `params` are (ctypes type, value) pairs."""
        raise NotImplementedError

    def sync(self) -> None:
        raise NotImplementedError

    def host_access(self) -> None:
        self.sync()

    def grid(self, task: Any) -> tuple[int, int]:
        """(blocks, threads per block) for a task: exact for a constant range, else enough to fill the GPU;
        the kernels loop grid-stride, so any grid is correct."""
        if not task.parallel:
            return 1, 1
        full = self.multiprocessors * 2048 // task.block
        if task.count is None:
            return max(1, full), task.block
        return max(1, min(full, math.ceil(task.count / task.block))), task.block


def managed_view(address: int, nbytes: int) -> np.ndarray:
    """A numpy uint8 view of `nbytes` at `address` (managed or host memory)."""
    return np.ctypeslib.as_array((ctypes.c_uint8 * max(nbytes, 1)).from_address(address))
