"""`qd.ad`: the Python layer of automatic differentiation (what programs call around `kernel.grad`).

Consumes fields and kernels; produces side effects on their gradient companions. The adjoint kernels themselves
are built by `quadrants/passes/autodiff/` (ARCHITECTURE.md, "Automatic differentiation").
"""

from __future__ import annotations

from quadrants.lang.field import clear_all_gradients
from quadrants.lang.tape import Tape

__all__ = ["Tape", "clear_all_gradients"]
