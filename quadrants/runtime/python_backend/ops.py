"""The python backend's meaning of the built-ins that otherwise exist only inside kernels.

`frontend/intrinsics.py` calls `IMPLS[name]` while the backend is active. Kernels run one iteration after another,
so an atomic is a read-modify-write of the element in place: its target must be an element of a field or ndarray
(`a[i]` is a view of it there), never a local, which plain Python cannot update through a call. It returns the old
value, as the atomics do. `qd.loop_config` and `qd.block_local` change nothing when nothing runs in parallel.

Consumes torch tensors (the backend's data) and values; produces old values and updated tensors.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from quadrants.errors import QuadrantsSyntaxError
from quadrants.runtime.python_backend.tensor import torch_dtype

_UPDATES: dict[str, Callable[[torch.Tensor, torch.Tensor], torch.Tensor]] = {
    "atomic_add": torch.add,
    "atomic_sub": torch.sub,
    "atomic_mul": torch.mul,
    "atomic_min": torch.minimum,
    "atomic_max": torch.maximum,
    "atomic_and": torch.bitwise_and,
    "atomic_or": torch.bitwise_or,
    "atomic_xor": torch.bitwise_xor,
    "atomic_exchange": lambda old, new: new.expand_as(old),
}


def _operand(x: torch.Tensor, y: Any) -> torch.Tensor:
    return torch.as_tensor(np.asarray(y) if hasattr(y, "__qd_matrix__") else y, dtype=x.dtype)


def _old(x: torch.Tensor) -> Any:
    return x.item() if x.dim() == 0 else x.clone()


def _target(name: str, x: Any) -> torch.Tensor:
    if not isinstance(x, torch.Tensor):
        raise QuadrantsSyntaxError(
            f"qd.{name}(x, ...) on the python backend needs x to be an element of a field or ndarray (got "
            f"{type(x).__name__}: a local cannot be updated in place by a call)"
        )
    return x


def _update(name: str) -> Callable[..., Any]:
    combine = _UPDATES[name]

    def update(x: Any, y: Any) -> Any:
        x = _target(name, x)
        old = _old(x)
        x.copy_(combine(x.clone(), _operand(x, y)))
        return old

    update.__name__ = name
    return update


def atomic_cas(x: Any, compare: Any, value: Any) -> Any:
    x = _target("atomic_cas", x)
    old = _old(x)
    if bool(torch.all(x == _operand(x, compare))):
        x.copy_(_operand(x, value).expand_as(x))
    return old


def _nothing(*_args: Any, **_kwargs: Any) -> None:
    return None


IMPLS: dict[str, Callable[..., Any]] = {
    **{name: _update(name) for name in _UPDATES},
    "atomic_cas": atomic_cas,
    "loop_config": _nothing,
    "block_local": _nothing,
    "loop_unique": lambda val, *_hints, **_kw: val,
    "assume_in_range": lambda val, *_hints: val,
}


def cast(x: Any, dtype: Any) -> Any:
    """`qd.cast` of a tensor with elements: the elements converted (a 0-d tensor or number: the dtype's call)."""
    if isinstance(x, torch.Tensor) and x.dim() > 0:
        return x.to(torch_dtype(dtype))
    return dtype(x)
