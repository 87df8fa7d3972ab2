"""A CUDA device emulated on the CPU, to test the CUDA backend where no GPU is (`qd.init(arch=qd.cuda,
cuda_emulate=True)`, or QD_CUDA_EMULATE=1).

Kernels go through the CUDA backend's lowering - the same tasks, grid-stride loops, temps and reduction
combining as on a GPU - but are compiled for the host, with thread ids read from a global the emulator sets
before running each (block, thread) in turn. Memory is host memory. Launch grids are deliberately small (a few
blocks of a few threads) so that grid-stride loops take several turns, as on a GPU.
"""

from __future__ import annotations

import ctypes
import threading
from typing import Any

from quadrants.runtime.device import Device, LoadedCuda

EMULATED_BLOCK = 4  # threads per block
EMULATED_GRID = 3  # blocks of a parallel task at most


class EmulatedDevice(Device):
    name = "cuda (emulated on the CPU)"
    emulated = True
    arch = "sm_80"
    multiprocessors = 1

    def __init__(self) -> None:
        self._lock = threading.Lock()

    def load(self, image: dict[str, bytes], plan: Any) -> LoadedCuda:
        from quadrants.codegen.cuda import sreg_symbol
        from quadrants.runtime.loader import OrcLoader

        obj = image["host"]
        names = [t.name for t in plan.tasks]
        sreg = sreg_symbol(names[0].rsplit("_t", 1)[0]) if names else ""
        addresses, keep = OrcLoader.load_pack([obj], names + ([sreg] if names else []))
        sregs = (ctypes.c_int32 * 4).from_address(addresses[sreg]) if names else None
        functions = tuple(_Task(addresses[n], sregs) for n in names)
        return LoadedCuda(plan, functions, keep)

    def launch(self, fn: Any, grid: int, block: int, params: list[tuple[Any, Any]]) -> None:
        cfunc = fn.cfunc([t for t, _ in params])
        values = [v for _, v in params]
        sreg = fn.sregs
        with self._lock:  # one stream: launches run one after another, whichever Python thread makes them
            sreg[1], sreg[3] = block, grid
            for b in range(grid):
                sreg[2] = b
                for t in range(block):
                    sreg[0] = t
                    cfunc(*values)

    def sync(self) -> None:
        pass  # launches run to completion

    def grid(self, task: Any) -> tuple[int, int]:
        if not task.parallel:
            return 1, 1
        count = task.count if task.count is not None else EMULATED_GRID * EMULATED_BLOCK
        return max(1, min(EMULATED_GRID, -(-count // EMULATED_BLOCK))), EMULATED_BLOCK


class _Task:
    """A task function compiled for the host, and the thread-id global its code reads."""

    def __init__(self, address: int, sregs: Any) -> None:
        self.address = address
        self.sregs = sregs
        self._cfunc: Any = None

    def cfunc(self, argtypes: list[Any]) -> Any:
        if self._cfunc is None:
            self._cfunc = ctypes.CFUNCTYPE(None, *argtypes)(self.address)
        return self._cfunc
