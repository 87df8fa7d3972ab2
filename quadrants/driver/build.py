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
from quadrants.runtime.leaves import Guard, GuardKind


def frontend_options(config: Config, mode: str = "") -> FrontendOptions:
    return FrontendOptions(
        default_ip=config.default_ip,
        default_fp=config.default_fp,
        debug=config.debug,
        unrolling_limit=config.unrolling_limit,
        autodiff=mode,
        raise_on_templated_floats=bool(config.raise_on_templated_floats),
    )


def build_ir(
    source: FunctionSource, name: str, params: list[ParamSpec], returns: tuple[Any, ...], config: Config,
    mode: str = "",
) -> FrontendResult:
    """The frontend, then (`mode="reverse"`: the adjoint of `kernel.grad`; `"forward"`: the dual kernel that
    `qd.ad.FwdMode` runs; `"validation"`: a validating Tape's checked primal) the autodiff pass, then the passes,
    verified; the kernel's IR is `result.kernel`."""
    result = build_kernel(source, name, params, returns, frontend_options(config, mode))
    if config.verify_passes or mode:  # the frontend's own output (the final check below covers it otherwise)
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
    mode: str = "", guards: list[Guard] | None = None,
) -> tuple[FrontendResult, str]:
    """`build_ir` and the IR's text (what the offline key is made of; an adjoint's says `[reverse]`). `guards`:
    the specialization's, of which the kernel records those its code depends on (`guards_read`)."""
    fe = build_ir(source, name, params, returns, config, mode)
    if guards:
        fe.kernel.guards = guards_read(guards, fe.member_reads)
    return fe, format_kernel(fe.kernel)


def guards_read(guards: list[Guard], reads: set[tuple[Any, ...]]) -> tuple[int, ...] | None:
    """The indices of the guards a kernel's code depends on; None when that is all of them. A guard of a struct
    parameter's member (a data_oriented object's baked primitive, a field member) matters only when the code
    read that member or something inside it; a class guard, and a guard of a whole parameter, always matter
    (they fix what the members are). Reading a member reads what is inside it; reading a struct whole (Python
    run on the object) reads all of its members."""
    keep = []
    for k, g in enumerate(guards):
        path = g.path
        if g.kind is GuardKind.CLASS or len(path) <= 1 or any(path[: n] in reads for n in range(1, len(path) + 1)):
            keep.append(k)
    return None if len(keep) == len(guards) else tuple(keep)
