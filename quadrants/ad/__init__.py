"""`qd.ad`: the Python layer of automatic differentiation (what programs call around `kernel.grad`).

Consumes fields and kernels; produces side effects on their gradient companions. The adjoint and dual kernels
themselves are built by `quadrants/passes/autodiff/` (ARCHITECTURE.md, "Automatic differentiation").
"""

from quadrants.lang.custom_grad import grad_for, grad_replaced, no_grad
from quadrants.lang.field import clear_all_gradients
from quadrants.lang.fwd_mode import FwdMode
from quadrants.lang.tape import Tape

# exactly Quadrants' names (`dir(qd.ad)`); the gradient checker of `Tape(grad_check=...)` is
# quadrants.lang.grad_check.GradChecker
__all__ = ["FwdMode", "Tape", "clear_all_gradients", "grad_for", "grad_replaced", "no_grad"]
