"""Golden code generation, reviewed as diffs: for each kernel of tests/golden_cases.py, the CPU backend's LLVM IR
before optimisation (tests/golden/llvm/), the CUDA backend's task plan (tests/golden/cuda_plan/) and its PTX
for sm_80 (tests/golden/ptx/).

Regenerate with `pytest tests/codegen/test_golden.py --update-golden` and read the diff; a missing golden fails.
The PTX comes from llvmlite's NVPTX target: it needs no CUDA toolkit, and an llvmlite upgrade may change it.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tests import golden_support as gs
from tests.golden_cases import CASES


@pytest.mark.parametrize("name", list(CASES))
def test_golden_cpu_llvm_ir(name: str, golden: Callable[[str, str], None]) -> None:
    golden(f"llvm/{name}.ll", gs.cpu_llvm_ir_unoptimised(CASES[name]))


@pytest.mark.parametrize("name", list(CASES))
def test_golden_cuda_plan(name: str, golden: Callable[[str, str], None]) -> None:
    golden(f"cuda_plan/{name}.json", gs.cuda_plan(CASES[name]))


@pytest.mark.parametrize("name", list(CASES))
def test_golden_ptx(name: str, golden: Callable[[str, str], None]) -> None:
    golden(f"ptx/{name}.ptx", gs.ptx(CASES[name]))
