"""What the frontend keeps while it translates a graph kernel's constructs (frontend/graph.py): the kernel's
flags, where the translation is (inside a checkpoint, a `qd.graph.parallel` region or section, which
do-while levels), and the locals of the checkpoint gates. One per kernel translation (`FrontendBuilder.graph`);
its records end up on the `ir.Kernel` (`graph_levels`, `checkpoints`, `resume_arg`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from quadrants.ir import nodes as ir


@dataclass
class GraphState:
    graph: bool = False  # @qd.kernel(graph=True)
    checkpoints: bool = False  # @qd.kernel(graph=True, checkpoints=True)
    levels: list[int] = field(default_factory=list)  # the enclosing do-while levels, outermost first
    in_checkpoint: bool = False
    in_region: bool = False  # directly in a `with qd.graph.parallel_context():` body
    in_section: bool = False  # in a `with qd.graph.parallel():` body
    implicit_fors: set[int] = field(default_factory=set)  # ids of the ast.For nodes a checkpoints kernel wraps
    resume: ir.Alloca | None = None  # the stage this launch starts from (0 after a do-while iteration)
    yielded: ir.Alloca | None = None  # the stage that yielded, -1 while none has

    @property
    def level(self) -> int:
        return self.levels[-1] if self.levels else -1


def kernel_flags(fn: Any) -> tuple[bool, bool]:
    """(graph, checkpoints) as `@qd.kernel(...)` marked the function (lang/kernel.py)."""
    return bool(getattr(fn, "__qd_graph__", False)), bool(getattr(fn, "__qd_checkpoints__", False))
