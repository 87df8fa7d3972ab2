"""Quadrants' `quadrants.lang._py_tensor` import path: the python backend's tensor (runtime/python_backend/tensor.py).

Importing it imports torch."""

from quadrants.runtime.python_backend.tensor import PyTensor, create_tensor

__all__ = ["PyTensor", "create_tensor"]
