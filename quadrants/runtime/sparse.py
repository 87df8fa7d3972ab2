"""The sparse runtime's host side: resetting a sparse SNode tree and giving its pools' memory back.

Kernels allocate the cells of pointer and dynamic levels from per-node pools (codegen/sparse.py: a header of
64 bytes in the tree's memory, chunks taken from `malloc`, each starting with a link to the next and its
size). `reset` frees every chunk of the tree's pools, zeroes the tree's memory (so every slot is null, every
length and activity bit 0) and asks the allocator to return free pages to the system (`malloc_trim`), which is
what makes deactivate_all lower the process's resident memory.
"""

from __future__ import annotations

import ctypes
import ctypes.util
from functools import cache

import numpy as np

POOL_CHUNKS, POOL_CARVED = 40, 56  # codegen/sparse.py's pool header (not imported: no llvmlite here)


@cache
def _libc() -> ctypes.CDLL:
    lib = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
    lib.free.argtypes = [ctypes.c_void_p]
    return lib


def _free_chunks(address: int) -> None:
    libc = _libc()
    chunk = ctypes.c_void_p.from_address(address + POOL_CHUNKS).value
    while chunk:
        nxt = ctypes.c_void_p.from_address(chunk).value
        libc.free(chunk)
        chunk = nxt


def _trim_system() -> None:
    trim = getattr(_libc(), "malloc_trim", None)
    if trim is not None:
        trim(0)


def reset(buf: np.ndarray, base: int, size: int, pools: list[int]) -> None:
    """Free the chunks of the pools whose headers are at `pools` (bytes from the tree's `base` in `buf`), then
    zero the tree's `size` bytes."""
    address = int(buf.ctypes.data) + base
    for off in pools:
        _free_chunks(address + off)
    buf[base : base + size] = 0
    if pools:
        _trim_system()


def carved(buf: np.ndarray, base: int, pool: int) -> int:
    """Cells the pool at `pool` has carved from its chunks since the tree was last reset."""
    return int(ctypes.c_int64.from_address(int(buf.ctypes.data) + base + pool + POOL_CARVED).value)
