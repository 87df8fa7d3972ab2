"""Python-scope access to an ndarray's or field's memory: layouts, and the `to_numpy` / `to_torch` options.

Consumes a tensor's physical numpy array (its memory in storage order) and a `qd.tensor(layout=)` permutation;
produces the canonical view that every host accessor works on, and numpy arrays / torch tensors that copy it
(`copy=True`) or alias it (`copy=False`; `copy=None` aliases where it can). A layout is the canonical axis at each
memory level, outermost first, so physical axis p holds canonical axis `layout[p]`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from quadrants.errors import QuadrantsSyntaxError
from quadrants.runtime import device


def check_layout(layout: Any, ndim: int, what: str = "shape") -> tuple[int, ...]:
    """`layout` as a tuple, `()` for None or the identity; a ValueError names a wrong length or a
    non-permutation."""
    if layout is None:
        return ()
    if isinstance(layout, (str, bytes)) or not hasattr(layout, "__iter__"):
        raise TypeError(f"layout must be a tuple of ints, got {layout!r}")
    lay = tuple(layout)
    if len(lay) != ndim:
        raise ValueError(f"layout has {len(lay)} entries but {what} has {ndim} dimensions; they must match")
    if not all(isinstance(a, (int, np.integer)) and not isinstance(a, bool) for a in lay) or sorted(lay) != list(
        range(ndim)
    ):
        raise ValueError(f"layout={lay!r} is not a permutation of range({ndim})")
    lay = tuple(int(a) for a in lay)
    return () if lay == tuple(range(ndim)) else lay


def order_layout(order: str, ndim: int) -> tuple[int, ...]:
    """Quadrants' `qd.field(order="ji")` as a layout: the axis letters outermost first. A bad order is Quadrants'
    compile error in its words, raised at declaration."""
    if len(order) != ndim:
        raise QuadrantsSyntaxError(f"The dimensionality of shape and order must be the same ({ndim} != {len(order)})")
    if len(set(order)) != ndim:
        raise QuadrantsSyntaxError("The axes in order must be different")
    for ch in order:
        if not 0 <= ord(ch) - ord("i") < ndim:
            raise QuadrantsSyntaxError(f"Invalid axis {ch}")
    return check_layout(tuple(ord(c) - ord("i") for c in order), ndim)


def inverse(layout: tuple[int, ...]) -> tuple[int, ...]:
    inv = [0] * len(layout)
    for p, axis in enumerate(layout):
        inv[axis] = p
    return tuple(inv)


def physical_shape(shape: tuple[int, ...], layout: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(shape[a] for a in layout) if layout else shape


def physical_key(key: tuple[int, ...], layout: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(key[a] for a in layout) if layout else key


def canonical_view(phys: np.ndarray, layout: tuple[int, ...]) -> np.ndarray:
    """The canonical view of `phys` (a numpy view: no copy); element axes, after the indexed ones, stay."""
    if not layout:
        return phys
    return phys.transpose(inverse(layout) + tuple(range(len(layout), phys.ndim)))


# What Quadrants 1.3.3 shares through DLPack (its `copy=False` raises for anything else, f16 included): kept
# so that a program's copy=False behaves the same here.
_ZERO_COPY_DTYPES = frozenset(np.dtype(t) for t in (np.float32, np.float64, np.int32, np.int64, np.bool_))


def _refusal(view: np.ndarray, mem: Any, zero_d_ok: bool) -> str | None:
    """Why the memory cannot be shared, or None."""
    if view.dtype not in _ZERO_COPY_DTYPES:
        return f"Zero-copy not available for dtype={view.dtype}"
    if not zero_d_ok and view.ndim == 0:
        return "Zero-copy not available for a 0-d scalar field"
    return None


def _np_dtype(dtype: Any) -> Any:
    return getattr(dtype, "np_dtype", None) or np.dtype(dtype)


def to_numpy(view: np.ndarray, mem: Any, dtype: Any = None, copy: bool | None = True,
             zero_d_ok: bool = True) -> np.ndarray:  # fmt: skip
    """`copy=True`: an independent array; `copy=False`: the memory itself (a ValueError where it cannot be,
    as Quadrants raises: GPU memory, a dtype conversion, a dtype it does not share, a 0-d field unless
    `zero_d_ok`); `copy=None`: the memory where it can be."""
    mem.host_access()
    want = None if dtype is None else _np_dtype(dtype)
    if copy is not True:
        reason = _refusal(view, mem, zero_d_ok)
        if reason is not None:
            pass
        elif mem is not device.HOST:
            reason = "Zero-copy numpy requires a CPU backend (numpy arrays cannot reference GPU memory)"
        elif want is not None and want != view.dtype:
            reason = f"copy=False is incompatible with dtype conversion ({view.dtype} -> {want})"
        if reason is None:
            return view
        if copy is False:
            raise ValueError(reason)
    out = view.copy()
    return out if want is None or want == out.dtype else out.astype(want)


def to_torch(view: np.ndarray, mem: Any, device_: Any = None, copy: bool | None = True,
             zero_d_ok: bool = True) -> Any:  # fmt: skip
    """A torch tensor of the canonical view: a copy, or (`copy=False` / `None`) a tensor over the memory itself
    when it is host memory and `device_` is the CPU (refusals as `to_numpy`'s)."""
    import torch

    mem.host_access()
    if copy is not True:
        reason = _refusal(view, mem, zero_d_ok)
        if reason is not None:
            pass
        elif mem is not device.HOST:
            reason = "Zero-copy torch is not available for a GPU's managed memory here"
        elif device_ is not None and torch.device(device_).type != "cpu":
            reason = f"copy=False is incompatible with device transfer (data on cpu, requested {device_})"
        if reason is None:
            return torch.from_numpy(view)
        if copy is False:
            raise ValueError(reason)
    out = torch.from_numpy(np.ascontiguousarray(view).copy())
    return out if device_ is None else out.to(device_)


def from_numpy(view: np.ndarray, mem: Any, arr: Any) -> None:
    """Copy `arr` (of the canonical shape) in, converting its dtype."""
    a = np.asarray(arr)
    mem.host_access()
    if a.shape != view.shape:
        raise ValueError(f"Mismatch shape: {tuple(view.shape)} expected, but {tuple(a.shape)} provided")
    np.copyto(view, a, casting="unsafe")


def torch_to_numpy(arr: Any) -> np.ndarray:
    """A torch tensor's data as numpy (any device; a copy when it is not on the CPU)."""
    import torch

    t = torch.Tensor.detach(arr)
    if t.device.type != "cpu":
        t = t.cpu()
    return t.numpy()  # type: ignore[no-any-return]


def to_dlpack(view: np.ndarray, mem: Any, versioned: bool = False) -> Any:
    """A DLPack capsule over the canonical view (strides carry the layout): CPU memory only."""
    from quadrants.errors import QuadrantsRuntimeError

    if mem is not device.HOST:
        raise QuadrantsRuntimeError("to_dlpack() is supported on the CPU backend only (here, a GPU's managed "
                                    "memory is not shared through DLPack yet): use to_numpy() / to_torch()")  # fmt: skip
    if versioned:
        return view.__dlpack__(max_version=(1, 0))
    return view.__dlpack__()


class CapsuleOnCpu:
    """A DLPack capsule (as `to_dlpack()` returns it, either version) dressed as an object of the DLPack protocol,
    which `np.from_dlpack` takes: `np.from_dlpack(CapsuleOnCpu(f.to_dlpack(versioned=True)))` shares the memory.
    Quadrants' name for it, `quadrants.lang.field._DLPackV1Adapter`, is this class."""

    __slots__ = ("_capsule",)

    def __init__(self, capsule: Any) -> None:
        self._capsule = capsule

    def __dlpack__(self, stream: Any = None, **_: Any) -> Any:
        return self._capsule

    def __dlpack_device__(self) -> tuple[int, int]:
        return (1, 0)  # kDLCPU, device 0
