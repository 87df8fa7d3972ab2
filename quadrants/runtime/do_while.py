"""`while qd.graph_do_while(flag):` kernels: a launcher that runs the kernel again while `flag` is non-zero.

Consumes a backend's launcher of a kernel whose ABI names its flag (`KernelABI.do_while`, the index of a 0-d
i32 ndarray among the arguments); produces a launcher with the same surface whose calls (general and fast path)
repeat the launch until the flag reads 0 after one: a do-while on the host, which is what Quadrants does where it
has no CUDA graph conditional node (CPU, GPUs before sm_90). Reading the flag waits for the launch (a device
sync on the CUDA backend).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from quadrants.runtime.launch import MISS, _walk
from quadrants.runtime.leaves import Guard, Leaf


def flag_value(v: Any) -> int:
    """The flag's value: a qd.ndarray, a numpy array or a torch tensor of one i32."""
    v = getattr(v, "_unwrap", lambda: v)()
    if hasattr(v, "to_numpy"):
        return int(np.asarray(v.to_numpy()).reshape(()))
    if hasattr(v, "item"):
        return int(v.item())
    return int(np.asarray(v).reshape(()))


class DoWhileLauncher:
    """`inner`, repeated while the flag leaf `index` is non-zero after a launch (everything else is inner's)."""

    def __init__(self, inner: Any, index: int) -> None:
        self.__dict__["inner"] = inner
        self.__dict__["index"] = index

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self.inner, name, value)

    def call(self, values: list[Any], leaves: list[Leaf]) -> Any:
        flag = _walk(values, leaves[self.index].path)
        result = self.inner.call(values, leaves)
        while flag_value(flag):
            result = self.inner.call(values, leaves)
        return result

    def fast_path(self, nparams: int, leaves: list[Leaf], guards: list[Guard]) -> Callable[..., Any] | None:
        fast = self.inner.fast_path(nparams, leaves, guards)
        if fast is None:
            return None
        path = leaves[self.index].path

        def repeat(*args: Any) -> Any:
            result = fast(*args)
            if result is MISS:
                return result
            flag = _walk(list(args), path)
            while flag_value(flag):
                result = fast(*args)
            return result

        return repeat
