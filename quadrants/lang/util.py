"""Quadrants' `quadrants.lang.util` conversions between dtypes and numpy / torch types.

Programs import these from Quadrants' internal module (Genesis: `from quadrants.lang.util import
to_pytorch_type, to_numpy_type`), so they live under the same name, with the same behaviour: an unknown type
is an AssertionError for numpy and a RuntimeError for torch. torch is imported only when asked for.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from quadrants.types import dtypes

# u1 is numpy's bool; the rest map to the numpy type of the same width and kind
_TORCH_NAMES = {dtypes.f16: "float16", dtypes.f32: "float32", dtypes.f64: "float64", dtypes.i8: "int8",
                dtypes.i16: "int16", dtypes.i32: "int32", dtypes.i64: "int64", dtypes.u1: "bool",
                dtypes.u8: "uint8", dtypes.u16: "uint16", dtypes.u32: "uint32",
                dtypes.u64: "uint64"}  # fmt: skip


def to_numpy_type(dt: Any) -> Any:
    """The numpy scalar type of a dtype (`qd.f32` -> `np.float32`, `qd.u1` -> `np.bool_`)."""
    assert isinstance(dt, dtypes.PrimitiveType), f"not a quadrants dtype: {dt!r}"
    return dt.np_dtype.type


def to_pytorch_type(dt: Any) -> Any:
    """The torch dtype of a dtype (`qd.f32` -> `torch.float32`); torch's float32/int32/bool pass through."""
    import torch

    name = _TORCH_NAMES.get(dt)
    if name is not None:
        found = getattr(torch, name, None)
        if found is None:
            raise RuntimeError(f"PyTorch doesn't support {dt} data type before version 2.3.0.")
        return found
    if dt in (torch.float32, torch.int32, torch.bool):
        return dt
    raise RuntimeError(f"PyTorch doesn't support {dt} data type.")


def to_quadrants_type(dt: Any) -> dtypes.PrimitiveType:
    """The dtype of a numpy or torch type, or a dtype itself."""
    if isinstance(dt, dtypes.PrimitiveType):
        return dt
    if type(dt).__module__.startswith("torch"):
        for prim, name in _TORCH_NAMES.items():
            if str(dt) == f"torch.{name}":
                return prim
        raise AssertionError(f"unknown torch type {dt}")
    return dtypes.from_numpy(np.dtype(dt))


def has_pytorch() -> bool:
    """Whether torch can be imported (without importing it), as Quadrants' helper of this name says."""
    import importlib.util

    return importlib.util.find_spec("torch") is not None
