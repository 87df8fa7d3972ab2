"""`quadrants._tensor_wrapper`: Quadrants' module path of the `qd.Tensor` wrapper classes (lang/tensor.py)."""

from quadrants.lang.tensor import MatrixTensor, Tensor, VectorTensor, wrap

__all__ = ["Tensor", "VectorTensor", "MatrixTensor", "wrap"]
