"""The verifier rejects malformed IR, and every pass keeps IR valid."""

from __future__ import annotations

import pytest

from quadrants.ir import nodes as ir
from quadrants.ir.verifier import IRVerifyError, verify
from quadrants.passes import PIPELINE
from quadrants.types import dtypes as T


def _kernel(*stmts: ir.Stmt, rets: tuple = ()) -> ir.Kernel:
    return ir.Kernel(name="k", params=[], ret_types=rets, body=ir.Block(list(stmts)))


def test_use_before_definition() -> None:
    a = ir.Const(value=1, type=T.i32)
    b = ir.Binary(op="add", lhs=a, rhs=a, type=T.i32)
    verify(_kernel(a, b))
    with pytest.raises(IRVerifyError, match="not defined before use"):
        verify(_kernel(b, a))


def test_type_mismatch() -> None:
    a = ir.Const(value=1, type=T.i32)
    f = ir.Const(value=1.0, type=T.f32)
    with pytest.raises(IRVerifyError, match="add"):
        verify(_kernel(a, f, ir.Binary(op="add", lhs=a, rhs=f, type=T.f32)))


def test_value_defined_in_branch_is_not_visible_after() -> None:
    c = ir.Const(value=1, type=T.u1)
    inner = ir.Const(value=2, type=T.i32)
    use = ir.Binary(op="add", lhs=inner, rhs=inner, type=T.i32)
    with pytest.raises(IRVerifyError, match="not defined"):
        verify(_kernel(c, ir.If(cond=c, then=ir.Block([inner])), use))


def test_break_outside_loop_and_in_parallel_loop() -> None:
    with pytest.raises(IRVerifyError, match="outside a loop"):
        verify(_kernel(ir.Break()))
    z = ir.Const(value=0, type=T.i32)
    loop = ir.RangeFor(begin=z, end=z, parallel=True, body=ir.Block([ir.Break()]), type=T.i32)
    with pytest.raises(IRVerifyError, match="parallel"):
        verify(_kernel(z, loop))


def test_parallel_loop_must_be_top_level() -> None:
    z = ir.Const(value=0, type=T.i32)
    c = ir.Const(value=1, type=T.u1)
    inner = ir.RangeFor(begin=z, end=z, parallel=True, type=T.i32)
    with pytest.raises(IRVerifyError, match="top level"):
        verify(_kernel(z, c, ir.If(cond=c, then=ir.Block([inner]))))


def test_passes_keep_the_ir_valid(fresh_runtime) -> None:
    from quadrants.driver.build import build_kernel, frontend_options
    from quadrants.lang.program import get
    from tests.ir.test_golden import CASES

    for kernel, params, rets in CASES.values():
        result = build_kernel(kernel.source, "k", params, rets, frontend_options(get().config))
        verify(result.kernel)
        for _name, run in PIPELINE:
            run(result.kernel)
            verify(result.kernel)
