"""The sparse runtime's host side: resetting a sparse SNode tree and giving its pools' memory back.

Kernels allocate the cells of pointer and dynamic levels from per-node pools (codegen/sparse.py: a header of
64 bytes in the tree's memory, chunks of anonymous `mmap` pages, each starting with a link to the next and its
size). `reset` unmaps every chunk of the tree's pools (the pages go back to the system: the process's resident
memory falls) and zeroes the tree's memory, so every slot is null, every length and activity bit 0.
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
    lib.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
    return lib


def _free_chunks(address: int) -> None:
    libc = _libc()
    chunk = ctypes.c_void_p.from_address(address + POOL_CHUNKS).value
    while chunk:
        nxt = ctypes.c_void_p.from_address(chunk).value
        libc.munmap(chunk, ctypes.c_uint64.from_address(chunk + 8).value)
        chunk = nxt


def reset(buf: np.ndarray, base: int, size: int, pools: list[int]) -> None:
    """Free the chunks of the pools whose headers are at `pools` (bytes from the tree's `base` in `buf`), then
    zero the tree's `size` bytes."""
    address = int(buf.ctypes.data) + base
    for off in pools:
        _free_chunks(address + off)
    buf[base : base + size] = 0


def carved(buf: np.ndarray, base: int, pool: int) -> int:
    """Cells the pool at `pool` has carved from its chunks since the tree was last reset."""
    return int(ctypes.c_int64.from_address(int(buf.ctypes.data) + base + pool + POOL_CARVED).value)
