"""Quadrants' `quadrants._kernels` copy helpers that programs call directly (Genesis reads fields and ndarrays
into torch tensors / numpy arrays with them).

Same names, arguments and effect as in Quadrants: each writes the elements of a field or ndarray into an
existing array `arr` (numpy, or torch on any device), converting to `arr`'s dtype. Quadrants runs them as
kernels; here they are copies from the host view of the memory, so calling one compiles nothing.
"""

from __future__ import annotations

from typing import Any

import numpy as np


def _write(arr: Any, src: np.ndarray) -> None:
    """`arr[I] = src[I]` over src's extent (a larger `arr` keeps the rest, as the kernels' loops leave it)."""
    target = arr[tuple(slice(0, n) for n in src.shape)] if arr.shape != src.shape else arr
    if isinstance(target, np.ndarray):
        np.copyto(target, src, casting="unsafe")
    else:  # torch: copy_ converts the dtype and moves to the tensor's device
        import torch

        target.copy_(torch.from_numpy(np.ascontiguousarray(src)))


def _field_view(field: Any) -> np.ndarray:
    from quadrants.lang.tensor import Tensor

    if isinstance(field, Tensor):
        field = field._unwrap()
    return field._memory()


def _ndarray_view(nd: Any) -> np.ndarray:
    from quadrants.lang.tensor import Tensor

    if isinstance(nd, Tensor):
        nd = nd._unwrap()
    nd._mem.host_access()
    return nd._view  # canonical, whatever the layout


def tensor_to_ext_arr(tensor: Any, arr: Any) -> None:
    """A scalar field's elements into `arr` (of the field's shape)."""
    _write(arr, _field_view(tensor))


def matrix_to_ext_arr(mat: Any, arr: Any, as_vector: bool) -> None:
    """A vector/matrix field's elements into `arr`: `shape + (n,)` with `as_vector`, else `shape + (n, m)`.
    As Quadrants' kernel does, `as_vector` on a matrix field keeps each row's last column, and a vector field
    without it fills `shape + (n, 1)`."""
    src = _field_view(mat)
    if len(mat.element_shape) == 1:
        out = src if as_vector else src[..., None]
    else:
        out = src[..., -1] if as_vector else src
    _write(arr, out)


def ndarray_to_ext_arr(ndarray: Any, arr: Any) -> None:
    """A scalar ndarray's elements into `arr` (of the ndarray's shape)."""
    _write(arr, _ndarray_view(ndarray))


def ndarray_matrix_to_ext_arr(ndarray: Any, arr: Any, layout_is_aos: bool, as_vector: bool) -> None:
    """A vector/matrix ndarray's elements into `arr`: element axes last (`layout_is_aos`), else first;
    `as_vector` for vector ndarrays (`arr[I, p]`), else `arr[I, p, q]`."""
    src = _ndarray_view(ndarray)
    nelem = 1 if as_vector else 2
    if len(ndarray.element_shape) != nelem:
        raise ValueError(f"ndarray_matrix_to_ext_arr: as_vector={bool(as_vector)} does not fit elements of shape "
                         f"{ndarray.element_shape}")  # fmt: skip
    if not layout_is_aos:
        batch = src.ndim - nelem
        src = np.moveaxis(src, tuple(range(batch, src.ndim)), tuple(range(nelem)))
    _write(arr, src)
