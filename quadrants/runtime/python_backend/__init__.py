"""The python backend: `qd.init(arch=qd.python)` runs kernels and funcs as plain Python, for debugging.

Nothing is compiled or cached: a kernel's call binds its arguments as a compiled call does (lang/kernel.py) and
calls the function; `qd.func`s called there (or from Python scope) run as Python too. Storage is torch: fields and
ndarrays are `PyTensor`s (tensor.py), whose `.shape` is the index space kernels see (a vec3 field of shape (n,)
is an (n, 3) tensor whose `.shape` is (n,)). The language's built-ins that only exist inside kernels (atomics,
`qd.loop_config`) get their Python meaning from ops.py while the backend is active. Loops run one after another.

Consumes the active program's arch (lang/program.py sets `active`); produces tensors and Python-scope semantics.
This module itself does not import torch: the rest of the package asks `active()` on every call that could differ.
"""

from __future__ import annotations

import importlib.util
import sys
from typing import Any

_active = False


def active() -> bool:
    """Whether the current program is `qd.init(arch=qd.python)`."""
    return _active


def set_active(on: bool) -> None:
    global _active
    _active = on


def available() -> bool:
    """Whether torch, which holds the backend's data, can be imported (checked without importing it)."""
    return importlib.util.find_spec("torch") is not None


def is_tensor(x: Any) -> bool:
    """Whether `x` is a torch tensor (torch is imported while the backend is active)."""
    return _active and isinstance(x, sys.modules["torch"].Tensor)


def index_shape(x: Any) -> tuple[int, ...] | None:
    """The index space of `x` when it is one of the backend's tensors (what `qd.grouped(x)` iterates), else None."""
    if not _active:
        return None
    from quadrants.runtime.python_backend.tensor import PyTensor

    return tuple(int(n) for n in x.shape) if isinstance(x, PyTensor) else None
