"""`qd.ad`: the Python layer of automatic differentiation (what programs call around `kernel.grad`).

Consumes fields and kernels; produces side effects on their gradient companions. The adjoint and dual kernels
themselves are built by `quadrants/passes/autodiff/` (ARCHITECTURE.md, "Automatic differentiation").
"""

from __future__ import annotations

from quadrants.lang.custom_grad import grad_for, grad_replaced, no_grad
from quadrants.lang.field import clear_all_gradients
from quadrants.lang.fwd_mode import FwdMode
from quadrants.lang.grad_check import GradChecker
from quadrants.lang.tape import Tape

__all__ = ["FwdMode", "GradChecker", "Tape", "clear_all_gradients", "grad_for", "grad_replaced", "no_grad"]
