"""How a kernel compiled by the CUDA backend launches: its tasks in order (plain data: cache entries store it,
and loading a cached kernel must not import llvmlite)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

BLOCK_DIM = 128  # threads per block of a parallel task


@dataclass(frozen=True)
class CudaTask:
    name: str
    parallel: bool
    count: int | None = None  # iterations when constant (sizes the grid exactly); None: a saturating grid
    block: int = BLOCK_DIM
    cooperative: bool = False  # uses qd.simt barriers or shared memory: its block's threads must run together
    shared: int = 0  # bytes of block shared memory it declares (the emulator allocates them per block)

    def to_json(self) -> list[Any]:
        return [self.name, self.parallel, self.count, self.block, self.cooperative, self.shared]


@dataclass(frozen=True)
class CudaPlan:
    """The tasks, and in what order the host launches them. `program` is None for a straight sequence (each
    task once, in order); a kernel whose serial control flow holds parallel loops (frontend/graph.py's
    do-whiles and checkpoint gates) has a program, a list of steps: `k` (launch task k), `["loop", steps]`
    (repeat until a break), `["if", slot, then, else]` (the u1 condition a task left in temps slot `slot`:
    read after a sync), `["break"]`, `["continue"]`."""

    tasks: tuple[CudaTask, ...]
    temps: int  # 8-byte slots
    program: list[Any] | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"tasks": [t.to_json() for t in self.tasks], "temps": self.temps}
        if self.program is not None:
            out["program"] = self.program
        return out

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> CudaPlan:
        return cls(tuple(CudaTask(*t) for t in d["tasks"]), d["temps"], d.get("program"))
