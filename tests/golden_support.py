"""The golden tests' only door into compiler internals, and the golden-file comparison they share.

Consumes a `GoldenCase` (a `@qd.kernel`, its specialized parameters and return types); produces the text of
one pipeline stage: our IR after the frontend alone or after the passes, one pass's output, the CPU backend's
LLVM IR before optimisation, the CUDA backend's task plan, its PTX. When the compiler's internals move (driver,
backends, codegen), re-point the small functions here; the tests and the golden files stay as they are.

Every stage is compiled with a default `Config()` (not the session's `qd.init`, which reads `QD_*` variables),
so a golden depends on the compiler alone, never on the environment. Two things that would still vary are
written as placeholders: the 16 hex digits of kernel symbols (a hash of the IR *and* of every compile option,
so adding an option would otherwise touch every golden) and the host's LLVM triple and data layout.
"""

from __future__ import annotations

import dataclasses
import difflib
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from quadrants._config import Config
from quadrants.backends.cpu import CpuBackend
from quadrants.cache import keys
from quadrants.driver import symbol_for
from quadrants.driver.build import build_ir, frontend_options
from quadrants.frontend.records import FrontendResult, ParamSpec, SpecKind
from quadrants.frontend.visitor import build_kernel
from quadrants.ir import nodes as ir
from quadrants.ir.printer import format_kernel
from quadrants.ir.verifier import verify
from quadrants.passes import PIPELINE
from quadrants.runtime.ndarray import nd_type

GOLDEN = Path(__file__).parent / "golden"
UPDATE_HINT = "pytest {test} --update-golden"
_SYMBOL_HASH = re.compile(r"\b(qd_\w*?)_[0-9a-f]{16}(?![0-9a-f])")
_HOST_TARGET = re.compile(r'^target (triple|datalayout) = ".*"$', re.MULTILINE)
_CALLSEQ = re.compile(r"// callseq \d+")  # NVPTX numbers call sequences across the whole process


def stable(text: str) -> str:
    """`text` with the parts that vary without the compiler changing replaced by placeholders."""
    text = _SYMBOL_HASH.sub(r"\1_HASH", text)
    text = _CALLSEQ.sub("// callseq N", text)
    return _HOST_TARGET.sub(r'target \1 = "HOST"', text)


# ---- cases ----------------------------------------------------------------------------------------------


def scalar(name: str, dtype: Any) -> ParamSpec:
    return ParamSpec(name, SpecKind.SCALAR, dtype)


def ndarray(name: str, dtype: Any, ndim: int) -> ParamSpec:
    return ParamSpec(name, SpecKind.NDARRAY, nd_type(dtype, ndim))


def template(name: str, value: Any) -> ParamSpec:
    return ParamSpec(name, SpecKind.TEMPLATE, value=value)


def dataclass_param(name: str, cls: type, members: list[ParamSpec]) -> ParamSpec:
    """A Python dataclass argument whose members are specialized as `members` (in the class's order)."""
    return ParamSpec(name, SpecKind.STRUCT, members=tuple(members), cls=cls)


@dataclass(frozen=True)
class GoldenCase:
    """A kernel specialized by hand, as a call with these arguments would specialize it."""

    kernel: Any  # a @qd.kernel
    params: list[ParamSpec]
    returns: tuple[Any, ...] = ()

    def label(self) -> str:
        return str(self.kernel.fn.__name__)


def config() -> Config:
    return Config()


# ---- stages ---------------------------------------------------------------------------------------------


def frontend_ir(case: GoldenCase) -> ir.Kernel:
    """The frontend's IR, verified, before any pass."""
    fe = build_kernel(case.kernel.source, case.label(), case.params, case.returns, frontend_options(config()))
    verify(fe.kernel)
    return fe.kernel


def _built(case: GoldenCase) -> tuple[FrontendResult, str]:
    fe = build_ir(case.kernel.source, case.label(), case.params, case.returns, config())
    return fe, format_kernel(fe.kernel)


def ir_text(case: GoldenCase) -> str:
    """Our IR after the frontend and every pass (what code generation consumes)."""
    return _built(case)[1]


def format_ir(kernel: ir.Kernel) -> str:
    return format_kernel(kernel)


def pass_names() -> list[str]:
    """The passes of the pipeline, in order."""
    return [name for name, _run in PIPELINE]


def run_pass(name: str, kernel: ir.Kernel) -> None:
    """Run the pass `name` alone on `kernel` (in place)."""
    dict(PIPELINE)[name](kernel)


def cpu_llvm_ir_unoptimised(case: GoldenCase) -> str:
    """The CPU backend's LLVM IR as lowering produced it, before LLVM optimises it."""
    fe, text = _built(case)
    backend = CpuBackend(config(), None)
    return stable(backend.render(fe, text, _symbol(case, text, backend.device_key())).llvm_ir)


def _symbol(case: GoldenCase, text: str, device: str) -> str:
    """The symbol the driver gives the kernel (its offline key's digits become HASH in goldens)."""
    return symbol_for(case.label(), keys.offline_key(text, config(), device).digest())


def cuda_plan(case: GoldenCase) -> str:
    """The CUDA backend's launch plan as JSON, one task a line: its 8-byte temporaries, then its tasks in
    launch order."""
    from quadrants.codegen.cuda import lower_cuda_kernel
    from quadrants.codegen.lower import CodegenOptions

    fe, text = _built(case)
    cfg = config()
    opts = CodegenOptions(fast_math=cfg.fast_math, bounds_checked=cfg.bounds_checked)
    _module, plan = lower_cuda_kernel(fe.kernel, opts, _symbol(case, text, "cuda"))
    tasks = ",\n".join(" " + json.dumps(dataclasses.asdict(t)) for t in plan.tasks)
    return stable(f'{{"temps": {plan.temps}, "tasks": [\n{tasks}\n]}}\n')


def ptx(case: GoldenCase, arch: str = "sm_80") -> str:
    """The PTX the CUDA backend emits for `arch`: llvmlite's NVPTX target, so no CUDA toolkit is needed (a
    kernel that calls GPU math functions needs libdevice, and skips without it)."""
    from quadrants.backends.cuda import compile_cuda
    from quadrants.codegen.nvptx import NvptxError, libdevice_path

    fe, text = _built(case)
    cfg = dataclasses.replace(config(), cuda_emulate=False)
    try:
        out = compile_cuda(fe, text, _symbol(case, text, "cuda"), cfg, (arch,), cubin=False)
    except NvptxError as e:
        if libdevice_path() is None and "libdevice" in str(e):
            pytest.skip(f"libdevice is not installed: {e}")
        raise
    return stable(out.ptx[arch])


# ---- golden files ---------------------------------------------------------------------------------------


def check_golden(relpath: str, text: str, update: bool, test: str) -> None:
    """Compare `text` with tests/golden/`relpath`. `update` (`--update-golden`) rewrites the file instead; a
    missing file fails (never created silently, so a golden is always a reviewed file)."""
    path = GOLDEN / relpath
    if update:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        return
    if not path.exists():
        pytest.fail(f"golden file tests/golden/{relpath} is missing: create it with `{UPDATE_HINT.format(test=test)}` "
                    "and review it before committing", pytrace=False)  # fmt: skip
    expected = path.read_text()
    if text != expected:
        diff = difflib.unified_diff(expected.splitlines(), text.splitlines(), f"tests/golden/{relpath}", "now", lineterm="")
        shown = "\n".join(list(diff)[:80])
        pytest.fail(f"tests/golden/{relpath} differs from the output (if intended, rewrite it with "
                    f"`{UPDATE_HINT.format(test=test)}` and review the diff):\n{shown}", pytrace=False)  # fmt: skip
