"""Stages 1 and 2: the frontend (Python AST → IR), then the passes, with the IR verified after each.

Imported only when something compiles: a cache hit never loads the frontend.
"""

from __future__ import annotations

from typing import Any

from quadrants import _config
from quadrants._config import Config
from quadrants.frontend.source import FunctionSource
from quadrants.frontend.visitor import FrontendOptions, FrontendResult, ParamSpec, build_kernel
from quadrants.ir.printer import format_kernel
from quadrants.ir.verifier import verify
from quadrants.passes import run_pipeline
from quadrants.passes.autodiff import adstack, make_adjoint
from quadrants.passes.autodiff.forward import make_dual
from quadrants.passes.autodiff.validation import make_validation


def frontend_options(config: Config, mode: str = "") -> FrontendOptions:
    return FrontendOptions(
        default_ip=config.default_ip,
        default_fp=config.default_fp,
        debug=config.debug,
        unrolling_limit=config.unrolling_limit,
        autodiff=mode,
    )


def build_ir(
    source: FunctionSource, name: str, params: list[ParamSpec], returns: tuple[Any, ...], config: Config,
    mode: str = "",
) -> FrontendResult:
    """The frontend, then (`mode="reverse"`: the adjoint of `kernel.grad`; `"forward"`: the dual kernel that
    `qd.ad.FwdMode` runs; `"validation"`: a validating Tape's checked primal) the autodiff pass, then the passes,
    verified; the kernel's IR is `result.kernel`."""
    result = build_kernel(source, name, params, returns, frontend_options(config, mode))
    verify(result.kernel)
    if mode == "reverse":
        limit = adstack.CUDA_FRAME_LIMIT if config.arch is _config.cuda else adstack.CPU_FRAME_LIMIT
        make_adjoint(result.kernel, config.ad_stack_experimental_enabled, config.ad_stack_size, limit)
        verify(result.kernel)
    elif mode == "forward":
        make_dual(result.kernel)
        verify(result.kernel)
    elif mode == "validation":
        make_validation(result.kernel)
        verify(result.kernel)
    run_pipeline(result.kernel, verify_each=config.verify_passes)
    verify(result.kernel)
    return result


def build_ir_text(
    source: FunctionSource, name: str, params: list[ParamSpec], returns: tuple[Any, ...], config: Config,
    mode: str = "",
) -> tuple[FrontendResult, str]:
    """`build_ir` and the IR's text (what the offline key is made of; an adjoint's says `[reverse]`)."""
    fe = build_ir(source, name, params, returns, config, mode)
    return fe, format_kernel(fe.kernel)
