"""`qd.simt.warp`: CUDA warp operations under Quadrants' names (see quadrants/lang/simt/__init__.py; the portable
forms are `qd.simt.subgroup`'s). The shuffles take `(mask, value, offset)`, `_i32` / `_f32` naming the value's
type; the votes `(mask, predicate)` and give an i32 0 or 1; `ballot`, `match_*` and `active_mask` give i32 lane
masks, as Quadrants' do (`match_*` need sm_70 or later)."""

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
all_nonzero = _kernel_only("simt.warp.all_nonzero")  # (mask, predicate): every lane's is non-zero
any_nonzero = _kernel_only("simt.warp.any_nonzero")
unique = _kernel_only("simt.warp.unique")  # (mask, predicate): every lane's is the same (all zero or all not)
ballot = _kernel_only("simt.warp.ballot")  # (predicate): the lanes whose predicate is non-zero
match_any = _kernel_only("simt.warp.match_any")  # (mask, value): the lanes holding this lane's value
match_all = _kernel_only("simt.warp.match_all")  # (mask, value): all lanes where every lane holds it, else 0
active_mask = _kernel_only("simt.warp.active_mask")  # the lanes executing this

__all__ = ["active_mask", "all_nonzero", "any_nonzero", "ballot", "match_all", "match_any", "shfl_down_f32",
           "shfl_down_i32", "shfl_sync_f32", "shfl_sync_i32", "shfl_up_f32", "shfl_up_i32", "shfl_xor_i32", "sync",
           "unique"]  # fmt: skip
