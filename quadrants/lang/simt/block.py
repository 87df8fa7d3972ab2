"""`qd.simt.block`: shared memory and barriers of a GPU block (see quadrants/lang/simt/__init__.py)."""

from __future__ import annotations

from typing import Any

from quadrants.frontend.intrinsics import _kernel_only

sync = _kernel_only("simt.block.sync")
thread_idx = _kernel_only("simt.block.thread_idx")
global_thread_idx = _kernel_only("simt.block.global_thread_idx")  # the thread's index in the grid
mem_fence = _kernel_only("simt.block.mem_fence")  # orders this thread's memory accesses for its block
# a barrier that also folds every thread's predicate: all / any non-zero (an i32 0 or 1), or how many
sync_all_nonzero = _kernel_only("simt.block.sync_all_nonzero")
sync_any_nonzero = _kernel_only("simt.block.sync_any_nonzero")
sync_count_nonzero = _kernel_only("simt.block.sync_count_nonzero")


def mem_sync() -> Any:
    """Deprecated spelling of `mem_fence()`, as in Quadrants (in kernels: frontend/simt_calls.py warns)."""
    import warnings

    from quadrants.frontend.intrinsics import DEPRECATED

    warnings.warn(DEPRECATED["simt.block.mem_sync"][1], DeprecationWarning, stacklevel=2)
    return mem_fence()


mem_sync.__qd_intrinsic__ = "simt.block.mem_sync"  # type: ignore[attr-defined]


class SharedArray:
    """`qd.simt.block.SharedArray(shape, dtype)` inside a kernel's parallel loop: an array that all threads of a
    block share (one per block), indexed like an ndarray; `qd.simt.block.sync()` orders their accesses."""

    __qd_intrinsic__ = "simt.block.SharedArray"

    def __init__(self, shape: Any, dtype: Any) -> None:
        from quadrants.errors import QuadrantsSyntaxError

        raise QuadrantsSyntaxError("qd.simt.block.SharedArray can only be used inside a kernel or a qd.func")


_SCANS = ("reduce", "reduce_all", "reduce_add", "reduce_min", "reduce_max", "reduce_all_add", "reduce_all_min",
          "reduce_all_max", "inclusive_scan", "exclusive_scan", "inclusive_add", "inclusive_min", "inclusive_max",
          "exclusive_add", "exclusive_min", "exclusive_max", "radix_rank_match_atomic_or")  # fmt: skip


def __getattr__(name: str) -> object:
    """The block's reductions, scans and radix ranking (block_scans.py), imported on first use: kernel-language
    code over `qd.simt.subgroup`, not on the start-up path."""
    if name in _SCANS:
        from quadrants.lang.simt import block_scans

        return getattr(block_scans, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [*_SCANS, "SharedArray", "global_thread_idx", "mem_fence", "mem_sync", "sync", "sync_all_nonzero",
           "sync_any_nonzero", "sync_count_nonzero", "thread_idx"]  # fmt: skip
