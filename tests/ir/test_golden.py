"""Golden IR text, reviewed as diffs: each case's IR after the frontend and passes (tests/golden/ir/), and
each pass's input and output for a kernel it rewrites (tests/golden/passes/).

Regenerate with `pytest tests/ir/test_golden.py --update-golden` and read the diff; a missing golden fails.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tests import golden_support as gs
from tests.golden_cases import CASES, PASS_CASES


@pytest.mark.parametrize("name", list(CASES))
def test_golden_ir(name: str, golden: Callable[[str, str], None]) -> None:
    golden(f"ir/{name}.ir", gs.ir_text(CASES[name]))


@pytest.mark.parametrize("pass_name", gs.pass_names())
def test_golden_pass(pass_name: str, golden: Callable[[str, str], None]) -> None:
    """The frontend's IR before and after this pass alone."""
    case = PASS_CASES.get(pass_name)
    assert case is not None, f"pass {pass_name!r} has no kernel in tests/golden_cases.py PASS_CASES"
    kernel = gs.frontend_ir(case)
    before = gs.format_ir(kernel)
    gs.run_pass(pass_name, kernel)
    after = gs.format_ir(kernel)
    assert after != before, f"pass {pass_name!r} leaves kernel {case.label()!r} unchanged: pick one it rewrites"
    golden(f"passes/{pass_name}.ir", f"# pass {pass_name}, kernel {case.label()}\n# before\n{before}# after\n{after}")
