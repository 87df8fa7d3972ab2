"""`qd.simt`: the GPU's thread model inside kernels - block shared memory and barriers (`qd.simt.block`) and
warp operations (`qd.simt.warp`), as Quadrants names them.

These objects only mark calls for the frontend (frontend/simt_calls.py turns them into `ir.SharedArray` and
`ir.Simt`); only the CUDA backend compiles them (on a GPU, and in the emulator with the block's threads run
side by side: runtime/emulator.py). On the CPU backend a kernel that uses one is refused with its location, as
Quadrants refuses `qd.simt.block.sync()` there.
"""

from quadrants.lang.simt import block, warp

__all__ = ["block", "warp"]
