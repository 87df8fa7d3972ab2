"""IR-to-IR passes, run in `PIPELINE` order on every kernel after the frontend (`random_streams` first: code
generation needs the operands it gives `qd.random()` draws).

Each pass is one module with a `run(kernel) -> None` that rewrites the kernel in place; its docstring shows
the IR before and after, and tests/golden/passes/ holds that before/after for one kernel per pass.

`run_pipeline(kernel, verify_each=True)` re-verifies the IR after every pass, naming the pass that broke it.
The driver asks for it when the `verify_passes` option (QD_VERIFY_PASSES) is on: the test suite turns it on
for every kernel it compiles, in the processes it starts too (tests/conftest.py; `--no-verify-passes` turns
it off); a normal compile verifies only before and after the whole pipeline (quadrants/driver/build.py).
"""

from __future__ import annotations

from collections.abc import Callable

from quadrants.ir import nodes as ir
from quadrants.ir.verifier import IRVerifyError, verify
from quadrants.passes import bit_stores, demote_atomics, prune_args, random_streams, reductions, sparse_access

PIPELINE: list[tuple[str, Callable[[ir.Kernel], None]]] = [
    ("random_streams", random_streams.run),
    ("sparse_access", sparse_access.run),
    ("reductions", reductions.run),
    ("demote_atomics", demote_atomics.run),
    ("bit_stores", bit_stores.run),
    ("prune_args", prune_args.run),  # last: what is read is what the finished code reads
]

def run_pipeline(kernel: ir.Kernel, verify_each: bool = False) -> None:
    """Run every pass in order; with `verify_each`, verify the IR after each."""
    for name, fn in PIPELINE:
        fn(kernel)
        if verify_each:
            try:
                verify(kernel)
            except IRVerifyError as e:
                raise IRVerifyError(f"pass {name!r} left invalid IR: {e}") from e
