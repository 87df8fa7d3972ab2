"""`qd.simt`: the GPU's thread model inside kernels - block shared memory, barriers and fences (`qd.simt.block`,
`qd.simt.grid`), warp operations (`qd.simt.warp`) and the subgroup library (`qd.simt.subgroup`: shuffles, votes,
reductions, scans, sorting), as Quadrants names them.

These objects only mark calls for the frontend (frontend/simt_calls.py turns them into `ir.SharedArray` and
`ir.Simt`); only the CUDA backend compiles them (on a GPU, and in the emulator with the block's threads run
side by side: runtime/emulator.py). On the CPU backend a kernel that uses one is refused with its location, as
Quadrants refuses `qd.simt.block.sync()` there.
"""

from quadrants.lang.simt import block, grid, warp

__all__ = ["block", "grid", "subgroup", "warp", "Tile16x16", "Tile32x32"]


def __getattr__(name: str) -> object:
    """`qd.simt.subgroup` and the register tiles (`Tile16x16`, `Tile32x32`: _tile.py), imported on first use (their
    library funcs are not on the start-up path)."""
    import importlib

    if name == "subgroup":
        return importlib.import_module("quadrants.lang.simt.subgroup")
    if name in ("Tile16x16", "Tile32x32"):
        return getattr(importlib.import_module("quadrants.lang.simt._tile"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
