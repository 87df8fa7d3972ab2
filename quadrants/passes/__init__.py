"""IR-to-IR passes, run in `PIPELINE` order on every kernel after the frontend.

Each pass is one module with a `run(kernel) -> None` that rewrites the kernel in place; its docstring shows
the IR before and after. `run_pipeline(kernel, verify_each=True)` re-verifies after every pass (tests/ir/test_verifier.py verifies after
each pass of `PIPELINE` on the golden kernels).
"""

from __future__ import annotations

from collections.abc import Callable

from quadrants.ir import nodes as ir
from quadrants.ir.verifier import verify
from quadrants.passes import demote_atomics, reductions

PIPELINE: list[tuple[str, Callable[[ir.Kernel], None]]] = [
    ("reductions", reductions.run),
    ("demote_atomics", demote_atomics.run),
]


def run_pipeline(kernel: ir.Kernel, verify_each: bool = False) -> None:
    for _name, fn in PIPELINE:
        fn(kernel)
        if verify_each:
            verify(kernel)
