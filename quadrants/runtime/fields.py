"""Field memory: fields are laid out one after another in memory regions, as in Quadrants.

A region collects fields until it is first used (by a kernel or from Python); then it is allocated, zeroed, and
closed, and later fields open a new region. Kernels bake a field's (region, byte offset, shape) into their code
and find region base addresses in a table passed with every launch - which is why a compiled kernel that uses
fields depends on the layout of every field allocated before them (so fields disable fastcache: docs/fastcache.md).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from quadrants.runtime import device
from quadrants.runtime.device import Memory

ALIGN = 64
MAX_REGIONS = 4096


@dataclass
class Region:
    size: int = 0
    buffer: np.ndarray | None = None  # uint8, once materialized


@dataclass
class FieldMemory:
    memory: Memory = field(default_factory=device.current)  # host memory, or a GPU's managed memory
    regions: list[Region] = field(default_factory=list)
    table: np.ndarray = field(init=False)  # region base addresses, read by kernels

    table_address: int = field(init=False)  # passed with every launch

    def __post_init__(self) -> None:
        self.table = self.memory.zeros(MAX_REGIONS * 8)[: MAX_REGIONS * 8].view(np.uint64)
        self.table_address = int(self.table.ctypes.data)

    def place(self, nbytes: int) -> tuple[int, int]:
        """Reserve `nbytes` for a new field: (region id, byte offset)."""
        if not self.regions or self.regions[-1].buffer is not None:
            if len(self.regions) >= MAX_REGIONS:
                raise MemoryError(f"more than {MAX_REGIONS} field regions")
            self.regions.append(Region())
        region = self.regions[-1]
        offset = (region.size + ALIGN - 1) // ALIGN * ALIGN
        region.size = offset + max(nbytes, 1)
        return len(self.regions) - 1, offset

    def materialize(self, region_id: int) -> np.ndarray:
        region = self.regions[region_id]
        if region.buffer is None:
            buf = self.memory.zeros(region.size + ALIGN)
            skip = (-buf.ctypes.data) % ALIGN
            region.buffer = buf[skip : skip + region.size]
            self.table[region_id] = region.buffer.ctypes.data
        return region.buffer

    def view(self, region_id: int, offset: int, dtype: np.dtype, shape: tuple[int, ...]) -> np.ndarray:
        buf = self.materialize(region_id)
        count = int(np.prod(shape)) if shape else 1
        return buf[offset : offset + count * dtype.itemsize].view(dtype).reshape(shape)
