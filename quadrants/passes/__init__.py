"""IR-to-IR passes, run in `PIPELINE` order on every kernel after the frontend.

Each pass is one module with a `run(kernel) -> None` that rewrites the kernel in place; its docstring shows
the IR before and after, and tests/golden/passes/ holds that before/after for one kernel per pass.

`run_pipeline` re-verifies the IR after every pass when `VERIFY_EACH` is set (or `verify_each=True` is
passed), naming the pass that broke it. The test suite sets `VERIFY_EACH` for every kernel it compiles
(tests/conftest.py, `--no-verify-passes` turns it off); a normal compile verifies only before and after the
whole pipeline (quadrants/driver/build.py).
"""

from __future__ import annotations

from collections.abc import Callable

from quadrants.ir import nodes as ir
from quadrants.ir.verifier import IRVerifyError, verify
from quadrants.passes import demote_atomics, reductions

PIPELINE: list[tuple[str, Callable[[ir.Kernel], None]]] = [
    ("reductions", reductions.run),
    ("demote_atomics", demote_atomics.run),
]

VERIFY_EACH = False  # read at every call, so a test session can switch it on after import


def run_pipeline(kernel: ir.Kernel, verify_each: bool | None = None) -> None:
    """Run every pass in order; with `verify_each` (default: `VERIFY_EACH`), verify the IR after each."""
    check = VERIFY_EACH if verify_each is None else verify_each
    for name, fn in PIPELINE:
        fn(kernel)
        if check:
            try:
                verify(kernel)
            except IRVerifyError as e:
                raise IRVerifyError(f"pass {name!r} left invalid IR: {e}") from e
