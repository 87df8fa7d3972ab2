"""`qd.simt`: the GPU's thread model inside kernels - block shared memory, barriers and fences (`qd.simt.block`,
`qd.simt.grid`), warp operations (`qd.simt.warp`) and the subgroup library (`qd.simt.subgroup`: shuffles, votes,
reductions, scans, sorting), as Quadrants names them.

These objects only mark calls for the frontend (frontend/simt_calls.py turns them into `ir.SharedArray` and
`ir.Simt`); only the CUDA backend compiles them (on a GPU, and in the emulator with the block's threads run
side by side: runtime/emulator.py). On the CPU backend a kernel that uses one is refused with its location, as
Quadrants refuses `qd.simt.block.sync()` there.
"""

from quadrants.lang.simt import block, grid, warp

__all__ = ["block", "grid", "subgroup", "warp"]


def __getattr__(name: str) -> object:
    """`qd.simt.subgroup`, imported on first use (its ~70 library funcs are not on the start-up path)."""
    if name == "subgroup":
        import importlib

        return importlib.import_module("quadrants.lang.simt.subgroup")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
