"""`qd.simt.block`: shared memory and barriers of a GPU block (see quadrants/lang/simt/__init__.py)."""

from __future__ import annotations

from typing import Any

from quadrants.frontend.intrinsics import _kernel_only

sync = _kernel_only("simt.block.sync")
thread_idx = _kernel_only("simt.block.thread_idx")


class SharedArray:
    """`qd.simt.block.SharedArray(shape, dtype)` inside a kernel's parallel loop: an array that all threads of a
    block share (one per block), indexed like an ndarray; `qd.simt.block.sync()` orders their accesses."""

    __qd_intrinsic__ = "simt.block.SharedArray"

    def __init__(self, shape: Any, dtype: Any) -> None:
        from quadrants.errors import QuadrantsSyntaxError

        raise QuadrantsSyntaxError("qd.simt.block.SharedArray can only be used inside a kernel or a qd.func")


__all__ = ["SharedArray", "sync", "thread_idx"]
