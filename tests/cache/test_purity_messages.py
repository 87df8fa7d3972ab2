"""What the purity check says, in-process: a warning comes from the kernel's own line (not a line inside
quadrants), and an error does not suggest an UPPERCASE constant for a name that already is one."""

from __future__ import annotations

import inspect
import sys
import warnings

import numpy as np

import quadrants as qd
from tests.conftest import qd_init

FACTOR = 2.0
GRID = np.zeros(3, np.float32)


@qd.kernel(fastcache=True)
def scaled(x: qd.f32) -> qd.f32:
    return x * FACTOR


@qd.kernel(fastcache=True)
def reads_grid() -> qd.f32:
    return GRID[0]


def _line_of(fn: object, text: str) -> int:
    lines, first = inspect.getsourcelines(fn)
    return first + next(k for k, line in enumerate(lines) if text in line)


def test_an_uppercase_constant_warns_from_the_kernel_line_that_reads_it() -> None:
    qd_init()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert scaled(3.0) == 6.0
    pure = [w for w in caught if "[PURE.VIOLATION]" in str(w.message)]
    assert len(pure) == 1 and "'FACTOR'" in str(pure[0].message)
    assert pure[0].filename == __file__ and pure[0].lineno == _line_of(scaled.fn, "x * FACTOR")


def test_an_uppercase_name_holding_an_array_is_not_told_to_be_an_uppercase_constant() -> None:
    """`qd audit` judges a captured array by the compiler's rules (the frontend refuses it before them)."""
    from quadrants.aot.audit import audit

    report = audit([sys.modules[__name__]])
    (grid,) = [f for f in report.findings if "'GRID'" in f.message]
    assert grid.kind == "violation" and "reads_grid" in grid.kernel
    assert "or an UPPERCASE constant" not in grid.message and "an UPPERCASE name may hold only a constant" in grid.message
