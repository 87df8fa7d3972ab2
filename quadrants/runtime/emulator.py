"""A CUDA device emulated on the CPU, to test the CUDA backend where no GPU is (`qd.init(arch=qd.cuda,
cuda_emulate=True)`, or QD_CUDA_EMULATE=1).

Kernels go through the CUDA backend's lowering - the same tasks, grid-stride loops, temps and reduction
combining as on a GPU - but are compiled for the host; every task takes a pointer to a thread record (`_Thread`,
codegen/simt.py's THREAD) with its thread and block ids first. Memory is host memory. Launch grids are
deliberately small (a few blocks of a few threads) so that grid-stride loops take several turns, as on a GPU.

A task that uses `qd.simt` barriers or shared memory (`CudaTask.cooperative`) cannot run its threads one after
another: each block runs as `block` host threads side by side (the task's own block size, `qd.loop_config
(block_dim=)`), which meet at a barrier the emulator provides; the block's shared memory and the exchange area
of its shuffles are zeroed buffers of the block. A thread that has returned no longer counts at the barrier
(as on the GPU, where exited threads do not hold `bar.sync` back). A warp barrier waits for the whole block
there: code whose warps synchronize separately, in different branches, is refused by no check and would hang.
"""

from __future__ import annotations

import ctypes
import threading
from typing import Any

import numpy as np

from quadrants.runtime.device import Device, LoadedCuda

EMULATED_BLOCK = 4  # threads per block (a task that is not cooperative)
EMULATED_GRID = 3  # blocks of a parallel task at most


class _Thread(ctypes.Structure):
    """The record a task reads its ids and block resources from (the fields of codegen/simt.py's THREAD)."""

    _fields_ = [("tid", ctypes.c_int32), ("ntid", ctypes.c_int32), ("ctaid", ctypes.c_int32),
                ("nctaid", ctypes.c_int32), ("shared", ctypes.c_void_p), ("barrier", ctypes.c_void_p),
                ("barrier_arg", ctypes.c_void_p), ("exchange", ctypes.c_void_p)]  # fmt: skip


class _BlockBarrier:
    """`bar.sync` for the host threads of one emulated block; `depart` takes a returned thread out of it."""

    def __init__(self, threads: int) -> None:
        self.live = threads
        self.arrived = 0
        self.generation = 0
        self.cond = threading.Condition()

    def wait(self) -> None:
        with self.cond:
            gen = self.generation
            self.arrived += 1
            if self.arrived >= self.live:
                self._release()
                return
            while gen == self.generation:
                self.cond.wait()

    def depart(self) -> None:
        with self.cond:
            self.live -= 1
            if self.arrived and self.arrived >= self.live:
                self._release()

    def _release(self) -> None:
        self.arrived = 0
        self.generation += 1
        self.cond.notify_all()


_BARRIER_FN = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
_barriers: dict[int, _BlockBarrier] = {}  # barrier_arg -> the block's barrier, while the block runs


@_BARRIER_FN
def _barrier_entry(arg: int) -> None:
    _barriers[arg].wait()


_BARRIER_ADDRESS = ctypes.cast(_barrier_entry, ctypes.c_void_p).value


class EmulatedDevice(Device):
    name = "cuda (emulated on the CPU)"
    emulated = True
    arch = "sm_80"
    multiprocessors = 1

    def __init__(self) -> None:
        self._lock = threading.Lock()

    def load(self, image: dict[str, bytes], plan: Any) -> LoadedCuda:
        from quadrants.runtime.loader import OrcLoader

        obj = image["host"]
        names = [t.name for t in plan.tasks]
        addresses, keep = OrcLoader.load_pack([obj], names)
        functions = tuple(_Task(addresses[n], t) for n, t in zip(names, plan.tasks))
        return LoadedCuda(plan, functions, keep)

    def launch(self, fn: Any, grid: int, block: int, params: list[tuple[Any, Any]]) -> None:
        cfunc = fn.cfunc([t for t, _ in params])
        values = [v for _, v in params]
        with self._lock:  # one stream: launches run one after another, whichever Python thread makes them
            if fn.task.cooperative:
                for b in range(grid):
                    _run_block(cfunc, values, b, grid, block, fn.task.shared)
                return
            thread = _Thread(ntid=block, nctaid=grid)
            ref = ctypes.addressof(thread)
            for b in range(grid):
                thread.ctaid = b
                for t in range(block):
                    thread.tid = t
                    cfunc(ref, *values)

    def sync(self) -> None:
        pass  # launches run to completion

    def grid(self, task: Any) -> tuple[int, int]:
        if not task.parallel:
            return 1, 1
        block = task.block if task.cooperative else EMULATED_BLOCK  # its code may depend on its block size
        count = task.count if task.count is not None else EMULATED_GRID * block
        return max(1, min(EMULATED_GRID, -(-count // block))), block


def _run_block(cfunc: Any, values: list[Any], b: int, grid: int, block: int, shared: int) -> None:
    """One block of a cooperative task: `block` host threads side by side, sharing its memory and barrier."""
    shared_mem = np.zeros(max(shared, 16), np.uint8)
    exchange = np.zeros(block, np.uint64)
    barrier = _BlockBarrier(block)
    key = id(barrier)
    _barriers[key] = barrier
    records = [_Thread(t, block, b, grid, shared_mem.ctypes.data, _BARRIER_ADDRESS, key, exchange.ctypes.data)
               for t in range(block)]  # fmt: skip
    failures: list[BaseException] = []

    def run(record: _Thread) -> None:
        try:
            cfunc(ctypes.addressof(record), *values)
        except BaseException as e:  # noqa: BLE001 - reported after the block (a thread cannot raise to us)
            failures.append(e)
        finally:
            barrier.depart()

    threads = [threading.Thread(target=run, args=(r,), daemon=True) for r in records]
    try:
        for th in threads:
            th.start()
        for th in threads:
            th.join()
    finally:
        del _barriers[key]
    if failures:
        raise failures[0]


class _Task:
    """A task function compiled for the host and its plan entry (cooperative or not, its shared memory)."""

    def __init__(self, address: int, task: Any) -> None:
        self.address = address
        self.task = task
        self._cfunc: Any = None

    def cfunc(self, argtypes: list[Any]) -> Any:
        if self._cfunc is None:
            self._cfunc = ctypes.CFUNCTYPE(None, ctypes.c_void_p, *argtypes)(self.address)
        return self._cfunc
