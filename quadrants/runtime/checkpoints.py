"""Launching a checkpoints kernel (`@qd.kernel(graph=True, checkpoints=True)`): the hidden argument in, the
hidden result out.

Consumes a backend's launcher of a kernel whose ABI has a `graph.resume` argument (frontend/graph.py: the stage
to start from) and one hidden i32 result (the stage that yielded, -1 if none); produces a launcher with the
same surface whose calls (general path and fast path) pass `resume` (0 for a plain call) after the user's
arguments and hand the hidden result to `on_result` (lang/checkpoint.py turns it into a `qd.GraphStatus`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from quadrants.runtime.launch import MISS
from quadrants.runtime.leaves import Guard, Leaf, ScalarLeaf
from quadrants.types.dtypes import i32


class CheckpointLauncher:
    """`inner` with the resume argument appended (everything else is inner's)."""

    def __init__(self, inner: Any, on_result: Callable[[int], Any]) -> None:
        self.__dict__["inner"] = inner
        self.__dict__["on_result"] = on_result

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self.inner, name, value)

    def call(self, values: list[Any], leaves: list[Leaf], resume: int = 0) -> Any:
        out = self.inner.call([*values, resume], [*leaves, ScalarLeaf((len(values),), i32)])
        return self.on_result(int(out))

    def fast_path(self, nparams: int, leaves: list[Leaf], guards: list[Guard]) -> Callable[..., Any] | None:
        fast = self.inner.fast_path(nparams + 1, [*leaves, ScalarLeaf((nparams,), i32)], guards)
        if fast is None:
            return None
        on_result = self.on_result

        def call(*args: Any) -> Any:
            out = fast(*args, 0)
            return out if out is MISS else on_result(int(out))

        return call
