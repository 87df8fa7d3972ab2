"""`qd.BufferView`: a contiguous window `[offset, offset + size)` of a 1-D ndarray, as in Quadrants.

Made by `BufferView(arr, offset, size)` or by slicing a 1-D ndarray (`x[8:24]`); narrowed by `subview(offset,
size)` or by slicing the view. A kernel or func parameter annotated `BufferView[qd.f32]` (or plain `BufferView`,
the dtype then comes from the argument) takes one: it passes as three runtime arguments, the ndarray and two i32
scalars (`arr`, `offset`, `size`; lang/args.py), so views of one ndarray at other offsets reuse the compiled
kernel. In a kernel `v[i]` is `arr[offset + i]`, `v.size` / `v.offset` are the bounds, and `v.subview(o, n)`,
`v[a:b]` and `BufferView(arr, o, n)` make narrower views (frontend/views.py). Indices are not checked against
the view (a write past its end lands in the ndarray, as in Quadrants without debug mode).
"""

from __future__ import annotations

from typing import Any

from quadrants.runtime.ndarray import Ndarray
from quadrants.types.annotations import BufferViewType


class BufferView:
    """A window of a 1-D ndarray (of scalars, vectors or matrices)."""

    __slots__ = ("arr", "offset", "size")
    __qd_buffer_view__ = True  # what the frontend and the specializer recognize it by (they do not import lang)
    __qd_intrinsic__ = "BufferView"  # `BufferView(arr, offset, size)` inside a kernel

    def __init__(self, arr: Any, offset: int, size: int) -> None:
        if isinstance(arr, BufferView):
            raise TypeError("Cannot nest BufferView(view, ...); use view.subview(offset, size) instead")
        if not isinstance(arr, Ndarray):
            raise TypeError(f"BufferView needs a qd.ndarray, got {type(arr).__name__}")
        if isinstance(arr.__dict__.get("grad"), Ndarray):
            raise TypeError("BufferView does not support ndarrays with gradients (needs_grad=True)")
        if len(arr.shape) != 1:
            raise TypeError(f"BufferView requires a 1D ndarray, got shape {arr.shape}")
        offset, size = _index(offset, "offset"), _index(size, "size")
        if offset < 0 or size < 0 or offset + size > arr.shape[0]:
            raise ValueError(
                f"BufferView out of range: offset={offset}, size={size}, ndarray length={arr.shape[0]}"
            )
        self.arr = arr
        self.offset = offset
        self.size = size

    def __class_getitem__(cls, dtype: Any) -> BufferViewType:
        """`BufferView[qd.f32]` as a kernel/func parameter annotation."""
        return BufferViewType(dtype)

    @property
    def shape(self) -> tuple[int]:
        return (self.size,)

    @property
    def dtype(self) -> Any:
        return self.arr.dtype

    def get_ndarray(self) -> Ndarray:
        """The ndarray this view is a window of."""
        return self.arr

    def subview(self, offset: int, size: int) -> BufferView:
        """The window `[offset, offset + size)` of this view (offsets relative to it)."""
        offset, size = _index(offset, "offset"), _index(size, "size")
        if offset < 0 or size < 0 or offset + size > self.size:
            raise ValueError(f"BufferView subview out of range: offset={offset}, size={size}, view size={self.size}")
        return BufferView(self.arr, self.offset + offset, size)

    def __getitem__(self, key: Any) -> BufferView:
        if not isinstance(key, slice):
            raise TypeError(
                f"BufferView can only be indexed with a slice in Python scope (got {type(key).__name__}); "
                "read elements through get_ndarray() or in a kernel"
            )
        start, stop = slice_bounds(key, self.size)
        return BufferView(self.arr, self.offset + start, stop - start)

    def __len__(self) -> int:
        return self.size

    def __repr__(self) -> str:
        return f"BufferView(offset={self.offset}, size={self.size}, arr={self.arr!r})"


def slice_bounds(key: slice, length: int) -> tuple[int, int]:
    """A step-1 slice of a sequence of `length` elements as (start, stop), negative bounds counted from the end."""
    start, stop, step = key.indices(length)
    if step != 1:
        raise ValueError(f"BufferView slice requires step=1, got step={step}")
    return start, max(stop, start)


def view_of(arr: Ndarray, key: slice) -> BufferView:
    """`x[a:b]` of an ndarray: the view of those elements (1-D ndarrays only, as in Quadrants)."""
    if len(arr.shape) != 1:
        raise TypeError(f"ndarray slice to BufferView requires a 1D array, got shape {arr.shape}")
    start, stop = slice_bounds(key, arr.shape[0])
    return BufferView(arr, start, stop - start)


def _index(v: Any, what: str) -> int:
    try:
        return int(v.__index__())
    except AttributeError:
        raise TypeError(f"BufferView {what} must be an integer, got {type(v).__name__}") from None
