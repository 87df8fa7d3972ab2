"""`qd.checkpoint(cp_id, yield_on=flag)` and `qd.GraphStatus`: the pause / resume model of graph kernels.

In a `@qd.kernel(graph=True, checkpoints=True)` kernel, `with qd.checkpoint(cp_id, yield_on=flag):` marks a stage
(frontend/graph.py): after it runs, a non-zero `flag` (a 0-d i32 ndarray parameter) makes the launch stop
there, skipping every later stage, and the call returns `GraphStatus(yielded=True, checkpoint=cp_id)`.
`kernel.resume(*args, from_checkpoint=cp_id)` launches again, skipping the stages declared before `cp_id`.
Called from Python scope, `qd.checkpoint` is a context manager that does nothing.
"""

from __future__ import annotations

import contextlib
import enum
import importlib
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from quadrants.runtime.abi import GraphABI


@contextlib.contextmanager
def _no_op() -> Iterator[None]:
    yield


def checkpoint(cp_id: Any = None, yield_on: Any = None) -> contextlib.AbstractContextManager[None]:
    """`with qd.checkpoint(cp_id, yield_on=flag):` a stage of a checkpoints kernel; outside kernels, nothing."""
    del cp_id, yield_on
    return _no_op()


checkpoint.__qd_intrinsic__ = "checkpoint"  # type: ignore[attr-defined]


class GraphStatus:
    """What a call of a kernel with `qd.checkpoint(..., yield_on=...)` stages returns.

    `yielded`: a stage's flag was non-zero after it ran, so the launch stopped there; `checkpoint`: that stage's
    `cp_id` (the int or IntEnum member given to `qd.checkpoint`), None when nothing yielded. Pass it to
    `kernel.resume(..., from_checkpoint=...)` to run again from that stage.
    """

    __slots__ = ("yielded", "checkpoint")

    def __init__(self, yielded: bool, checkpoint: Any) -> None:
        self.yielded = yielded
        self.checkpoint = checkpoint

    def __repr__(self) -> str:
        if self.yielded:
            return f"GraphStatus(yielded=True, checkpoint={self.checkpoint!r})"
        return "GraphStatus(yielded=False)"


@dataclass(frozen=True)
class DoWhileLevel:
    """A `qd.graph.do_while` loop of a kernel (`kernel._primal.graph_do_while_levels`), under Quadrants' names."""

    cond_arg_name: str  # the flag as written (`counter`, `self.counter`)
    parent_id: int  # the enclosing loop's level, -1 for none
    cond_cpp_arg_id: int  # the flag's index among the kernel's native arguments


@dataclass
class GraphRecords:
    """What a graph kernel's compile recorded (its ABI's `graph`: a cache hit has it too), as Quadrants' kernel
    attributes show it, and the translation between the user's checkpoint labels and the stages."""

    labels: list[Any] = field(default_factory=list)  # per stage: its cp_id (an IntEnum member as declared), or None
    yield_on: list[str | None] = field(default_factory=list)
    yield_ids: list[int] = field(default_factory=list)
    levels: list[DoWhileLevel] = field(default_factory=list)

    @classmethod
    def from_abi(cls, g: GraphABI | None) -> GraphRecords:
        if g is None:
            return cls()
        return cls([_label(value, enum_name) for value, enum_name, _, _ in g.checkpoints],
                    [name for _, _, name, _ in g.checkpoints], [arg for _, _, _, arg in g.checkpoints],
                    [DoWhileLevel(*lv) for lv in g.levels])  # fmt: skip

    def stage_of(self, label: Any, kernel_name: str) -> int:
        """The stage `kernel.resume(from_checkpoint=label)` starts from."""
        for k, known in enumerate(self.labels):
            if known is not None and known == label:
                return k
        available = [x for x in self.labels if x is not None]
        raise RuntimeError(f"from_checkpoint={label!r} does not match any qd.checkpoint(cp_id=...) in kernel "
                           f"{kernel_name!r}. Available cp_id labels (source-declaration order): {available}.")  # fmt: skip

    def status(self, yielded: int) -> GraphStatus | None:
        """The call's result: a GraphStatus when the kernel has a stage that can yield (else None, as in
        Quadrants: there is nothing to report)."""
        LAST_CALL.yielded = yielded
        if not any(n is not None for n in self.yield_on):
            return None
        if yielded < 0:
            return GraphStatus(False, None)
        return GraphStatus(True, self.labels[yielded] if self.labels[yielded] is not None else yielded)


def _label(value: int | None, enum_name: str) -> Any:
    """A stage's label as the user wrote it: the IntEnum member, found again by its class's module and qualname
    (from a cache entry, in another process), else the int."""
    if value is None or not enum_name:
        return value
    module, _, qualname = enum_name.partition(":")
    obj: Any = sys.modules.get(module)
    if obj is None:
        try:
            obj = importlib.import_module(module)
        except Exception:  # noqa: BLE001 - not importable here: the int still compares equal
            return value
    for part in qualname.split("."):
        obj = getattr(obj, part, None)
    try:
        return obj(value) if isinstance(obj, type) and issubclass(obj, enum.Enum) else value
    except ValueError:
        return value


@dataclass
class LastCall:
    """What `impl.get_runtime().prog.get_num_offloaded_tasks_on_last_call()` and friends report: the last
    kernel launched through the general path (lang/kernel.py) and, for a checkpoints kernel, its yielded stage."""

    tasks: int = 0
    yielded: int = -1


LAST_CALL = LastCall()
