"""`qd.simt.warp`: warp barriers and shuffles (see quadrants/lang/simt/__init__.py). The shuffles take
Quadrants' arguments `(mask, value, offset)`; `_i32` / `_f32` name the value's type."""

from __future__ import annotations

from quadrants.frontend.intrinsics import _kernel_only

sync = _kernel_only("simt.warp.sync")
shfl_down_i32 = _kernel_only("simt.warp.shfl_down_i32")
shfl_down_f32 = _kernel_only("simt.warp.shfl_down_f32")
shfl_up_i32 = _kernel_only("simt.warp.shfl_up_i32")
shfl_up_f32 = _kernel_only("simt.warp.shfl_up_f32")
shfl_xor_i32 = _kernel_only("simt.warp.shfl_xor_i32")
shfl_sync_i32 = _kernel_only("simt.warp.shfl_sync_i32")
shfl_sync_f32 = _kernel_only("simt.warp.shfl_sync_f32")

__all__ = ["shfl_down_f32", "shfl_down_i32", "shfl_sync_f32", "shfl_sync_i32", "shfl_up_f32", "shfl_up_i32",
           "shfl_xor_i32", "sync"]  # fmt: skip
