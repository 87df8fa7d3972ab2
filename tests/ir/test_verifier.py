"""The verifier rejects malformed IR, and every pass keeps IR valid."""

from __future__ import annotations

import os

import pytest

from quadrants import passes
from quadrants.ir import nodes as ir
from quadrants.ir.verifier import IRVerifyError, verify
from quadrants.passes import run_pipeline
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


def _function(*stmts: ir.Stmt, params: list | None = None, rets: tuple = ()) -> ir.Function:
    return ir.Function(name="f.0", params=params or [], ret_types=rets, body=ir.Block(list(stmts)))


def test_real_functions_see_only_their_own_values_and_return_anywhere() -> None:
    arg = ir.Arg(index=0, name="n", type=T.i32)
    one = ir.Const(value=1, type=T.u1)
    ret_in_if = ir.If(cond=one, then=ir.Block([ir.Return(values=(arg,))]))
    fn = _function(arg, one, ret_in_if, ir.Return(values=(arg,)), params=[ir.FuncParam("n", T.i32)], rets=(T.i32,))
    c = ir.Const(value=3, type=T.i32)
    out = ir.Alloca(var_type=T.i32, type=ir.PtrType(T.i32))
    kernel = _kernel(c, out, ir.Call(func=fn, args=(c,), results=(out,)))
    kernel.functions.append(fn)
    verify(kernel)  # a return inside an if is fine in a function (not in a kernel)
    fn.body.stmts.insert(0, ir.Binary(op="add", lhs=c, rhs=c, type=T.i32))  # a kernel value inside the function
    with pytest.raises(IRVerifyError, match="not defined before use"):
        verify(kernel)


def test_calls_match_their_function() -> None:
    fn = _function(params=[ir.FuncParam("x", T.f32)], rets=(T.i32,))
    c = ir.Const(value=3, type=T.i32)
    out = ir.Alloca(var_type=T.i32, type=ir.PtrType(T.i32))
    kernel = _kernel(c, out, ir.Call(func=fn, args=(c,), results=(out,)))
    with pytest.raises(IRVerifyError, match="not one of the kernel's functions"):
        verify(kernel)
    kernel.functions.append(fn)
    with pytest.raises(IRVerifyError, match="argument types"):
        verify(kernel)


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
    outer = ir.RangeFor(begin=z, end=z, parallel=False, type=T.i32, body=ir.Block([ir.If(cond=c, then=ir.Block([inner]))]))
    with pytest.raises(IRVerifyError, match="top level"):
        verify(_kernel(z, c, outer))
    # under serial control flow only (a graph kernel's do-while or checkpoint gate) a parallel loop is fine
    verify(_kernel(z, c, ir.While(body=ir.Block([ir.If(cond=c, then=ir.Block([ir.RangeFor(
        begin=z, end=z, parallel=True, type=T.i32)])), ir.Break()]))))


def test_passes_keep_the_ir_valid() -> None:
    from tests import golden_support as gs
    from tests.golden_cases import CASES, PASS_CASES

    for case in [*CASES.values(), *PASS_CASES.values()]:
        run_pipeline(gs.frontend_ir(case), verify_each=True)


def _last_first(kernel: ir.Kernel) -> None:
    kernel.body.stmts.insert(0, kernel.body.stmts.pop())


def _first_last(kernel: ir.Kernel) -> None:
    kernel.body.stmts.append(kernel.body.stmts.pop(0))


def test_the_suite_verifies_after_every_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    """A pass that breaks the IR is caught right after it runs, by name, even when a later pass happens to
    repair it (the driver's own check after the whole pipeline would not see it): tests/conftest.py sets
    QD_VERIFY_PASSES for every kernel the suite compiles, in its own processes and those it starts."""
    import numpy as np

    import quadrants as qd

    assert os.environ.get("QD_VERIFY_PASSES") == "1"
    qd.init(arch=qd.cpu, offline_cache=False, log_level="warn")
    assert qd.lang.program.get().config.verify_passes

    @qd.kernel
    def k(x: qd.types.NDArray[qd.f32, 1]):
        x[0] = 1.0

    monkeypatch.setattr(passes, "PIPELINE", [("breaks", _last_first), ("repairs", _first_last), *passes.PIPELINE])
    with pytest.raises(IRVerifyError, match="pass 'breaks' left invalid IR.*not defined before use"):
        k(np.zeros(1, np.float32))
    qd.init(arch=qd.cpu, offline_cache=False, log_level="warn", verify_passes=False)
    x = np.zeros(1, np.float32)
    k(x)  # unseen without it
    assert x[0] == 1.0
