"""The sparse runtime's host side: resetting a sparse SNode tree and giving its pools' memory back.

Kernels allocate the cells of pointer and dynamic levels from per-node pools (codegen/sparse_pool.py: a header
of 64 bytes in the tree's memory; on the CPU chunks of anonymous `mmap` pages, each starting with a link to the
next and its size; on a device the tree's arena, at the tree's end after its 64-byte header, carved in order).
`reset` unmaps every CPU chunk of the tree's pools (the pages go back to the system: the process's resident
memory falls) and zeroes the tree up to the end of what its arena carved (device memory: with the device's
memset), so every slot is null, every length and activity bit 0, and the arena's cells read zero again.
"""

from __future__ import annotations

import ctypes
import ctypes.util
from functools import cache

import numpy as np

from quadrants.runtime.device import Memory

# codegen/sparse_pool.py's pool and arena headers (not imported: no llvmlite here)
POOL_CHUNKS, POOL_LIVE, POOL_CARVED = 40, 48, 56
ARENA_USED, ARENA_HEADER = 0, 64


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


def _word(buf: np.ndarray, at: int) -> int:
    return int(ctypes.c_int64.from_address(int(buf.ctypes.data) + at).value)


def arena_used(buf: np.ndarray, base: int, arena: int) -> int:
    """Bytes the tree's arena (header `arena` bytes from its `base` in `buf`) has carved since the last reset."""
    return _word(buf, base + arena + ARENA_USED) if arena >= 0 else 0


def reset(memory: Memory, buf: np.ndarray, base: int, size: int, pools: list[int], arena: int) -> None:
    """Free the chunks of the pools whose headers are at `pools` (bytes from the tree's `base` in `buf`), then
    zero the tree's `size` bytes: those before the arena's cells and the cells it carved (the rest never left
    zero)."""
    memory.host_access()
    address = int(buf.ctypes.data) + base
    for off in pools:
        _free_chunks(address + off)
    end = size if arena < 0 else arena + ARENA_HEADER + arena_used(buf, base, arena)
    memory.clear(address, min(end, size))


def counter(buf: np.ndarray, base: int, pool: int, field: int = POOL_CARVED) -> int:
    """A pool's counter: the cells it carved since the tree was last reset (POOL_CARVED), or those live."""
    return _word(buf, base + pool + field)
