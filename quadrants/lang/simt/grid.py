"""`qd.simt.grid`: the whole launch's scope (see quadrants/lang/simt/__init__.py)."""

from __future__ import annotations

import warnings
from typing import Any

from quadrants.frontend.intrinsics import DEPRECATED, _kernel_only

mem_fence = _kernel_only("simt.grid.mem_fence")  # orders this thread's memory accesses for every block of the grid


def memfence() -> Any:
    """Deprecated spelling of `mem_fence()`, as in Quadrants (in kernels: frontend/simt_calls.py warns)."""
    warnings.warn(DEPRECATED["simt.grid.memfence"][1], DeprecationWarning, stacklevel=2)
    return mem_fence()


memfence.__qd_intrinsic__ = "simt.grid.memfence"  # type: ignore[attr-defined]

__all__ = ["mem_fence", "memfence"]
