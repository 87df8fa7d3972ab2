"""`quadrants._tensor`: the module path where Quadrants keeps its tensor factory, which programs and tests
import from (`from quadrants._tensor import _with_layout`). The implementation is lang/tensor.py."""

from quadrants.lang.tensor import Backend, Tensor, tensor
from quadrants.lang.tensor import with_layout as _with_layout

__all__ = ["Backend", "Tensor", "tensor", "_with_layout"]
