"""Quadrants' module path of the kernel class: programs and tests reach `quadrants.lang.kernel_impl.Kernel`
(and wrap its `launch_kernel`, the general path's launch). The class is lang/kernel.py's."""

from quadrants.lang.kernel import BoundKernel, Kernel, kernel

__all__ = ["BoundKernel", "Kernel", "kernel"]
