"""Statement constructs: one function per AST statement class (`transform_<class>`), taking the builder first.
Loops are in `loops.py`; where assignments write is in `lvalues.py`.
"""

from __future__ import annotations

import ast
from typing import Any

import numpy as np

from quadrants.errors import QuadrantsCompilationError
from quadrants.frontend import tiles
from quadrants.frontend.assert_message import runtime_message
from quadrants.frontend.builder import FrontendBuilder, StaticJump
from quadrants.frontend.lvalues import assign, assign_name, augassign_ref, resolve_ref
from quadrants.frontend.matrix_ops import matmul
from quadrants.frontend.operators import binary
from quadrants.frontend.real_funcs import real_return
from quadrants.frontend.refs import read
from quadrants.frontend.scope import Fixed, Var
from quadrants.frontend.static_eval import is_static_call, static_eval
from quadrants.frontend.structs import coerce, is_struct_value, result_scalars, snapshot
from quadrants.frontend.values import is_runtime
from quadrants.ir import nodes as ir
from quadrants.types.dtypes import to_dtype, u1
from quadrants.types.struct import StructType

AUG_OPS = {
    ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "truediv", ast.FloorDiv: "floordiv",
    ast.Mod: "mod", ast.Pow: "pow", ast.BitAnd: "and", ast.BitOr: "or", ast.BitXor: "xor",
    ast.LShift: "shl", ast.RShift: "shr", ast.MatMult: "matmul",
}  # fmt: skip

# ---- simple statements --------------------------------------------------------------------------------


def transform_pass(fb: FrontendBuilder, node: ast.Pass) -> None:
    pass


def transform_expr(fb: FrontendBuilder, node: ast.Expr) -> None:
    if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
        return  # a docstring or a string used as a comment
    fb.expr(node.value)


def transform_function_def(fb: FrontendBuilder, node: ast.FunctionDef) -> None:
    where = "qd.func" if len(fb.frames) > 1 else "qd.kernel"  # (Quadrants' words, then what to do instead)
    raise fb.error(node, f"Function definition is not allowed in '{where}': nested function definitions are not "
                         "supported in kernels; use a qd.func")  # fmt: skip


def transform_return(fb: FrontendBuilder, node: ast.Return) -> None:
    fr = fb.frame
    if fr.real is not None:  # a real function: leave it from anywhere
        real_return(fb, fb.expr(node.value) if node.value is not None else None, node)
        if fb.runtime_depth == fr.entry_depth:
            fr.terminated = True
        return
    if fb.runtime_depth != fr.entry_depth:
        what = "kernel" if fr.is_kernel else "qd.func"
        raise fb.error(node, f"Return inside non-static if/for is not supported (a return inside a runtime "
                             f"if/for/while of a {what})")  # fmt: skip
    value = fb.expr(node.value) if node.value is not None else None
    if fr.is_kernel:
        _kernel_return(fb, value, node)
    else:
        fr.returned = _func_return_value(fb, value, node)
    fr.terminated = True


def _kernel_return(fb: FrontendBuilder, value: Any, node: ast.Return) -> None:
    rets = fb.returns
    values = list(value) if isinstance(value, (tuple, list)) and len(rets) != 1 else [value]
    if value is None:
        values = []
    if len(values) != len(rets):
        raise fb.error(node, f"kernel returns {len(values)} value(s) but its annotation declares {len(rets)}")
    out = result_scalars(fb, values, rets, node, "the kernel")
    fb.b.emit(ir.Return(values=tuple(out)))


def _func_return_value(fb: FrontendBuilder, value: Any, node: ast.Return) -> Any:
    ann = fb.frame.return_annotation
    if value is None:
        return value
    if isinstance(ann, tuple):
        if not isinstance(value, (tuple, list)) or len(value) != len(ann):
            raise fb.error(node, f"qd.func returns {value!r} but is annotated -> {ann}")
        return tuple(_returned(fb, v, t, node) for v, t in zip(value, ann))
    return _returned(fb, value, ann, node)


def _returned(fb: FrontendBuilder, value: Any, t: Any, node: ast.Return) -> Any:
    """A qd.func's result as its annotation says: a scalar cast to its dtype, a struct of its type (copied)."""
    if t is None:
        return snapshot(fb, value) if is_struct_value(value) else value
    if isinstance(t, StructType):
        return coerce(fb, value, t, node, "the return value")
    return fb.ops.cast(value, t, fb.loc(node))


def transform_assert(fb: FrontendBuilder, node: ast.Assert) -> None:
    """A check of debug mode, as in Quadrants: without `debug=True` only the condition's side effects remain (a
    compile-time false one included); with it, a failure at run time raises with the message, its run-time values
    formatted in (frontend/assert_message.py)."""
    cond = fb.expr(node.test)
    if not fb.options.debug or (not isinstance(cond, ir.Value) and cond):
        return
    loc = fb.loc(node)
    if not isinstance(cond, ir.Value):
        cond = fb.b.const(0, u1)
    formatted = runtime_message(fb, node.msg) if node.msg is not None else None
    kind, values = "assert", ()  # type: tuple[str, tuple[ir.Value, ...]]
    if isinstance(formatted, tuple):  # the message carries run-time values
        (detail, values), kind = formatted, "message"
    elif isinstance(formatted, str):  # run-time values it cannot carry: the message's source text
        detail = formatted
    else:
        m = fb.expr(node.msg) if node.msg is not None else ""
        detail = (m if isinstance(m, str) else ast.unparse(node.msg)) or ast.unparse(node.test)  # type: ignore[arg-type]
    site = len(fb.kernel.sites)
    fb.kernel.sites.append(fb.site(kind, loc, detail))
    fb.b.emit(ir.Assert(cond=fb.ops.cond(cond, loc), site=site, index=values[0] if values else None,
                        extra=values[1:]))  # fmt: skip


# ---- assignment ---------------------------------------------------------------------------------------


def transform_assign(fb: FrontendBuilder, node: ast.Assign) -> None:
    static = is_static_call(fb, node.value)
    value = fb.expr(node.value)
    for target in node.targets:
        assign(fb, target, value, node, static)


def transform_ann_assign(fb: FrontendBuilder, node: ast.AnnAssign) -> None:
    if not isinstance(node.target, ast.Name):
        raise fb.error(node, "annotated assignment needs a plain name")
    dtype = to_dtype(static_eval(fb, node.annotation), fb.options.default_ip, fb.options.default_fp)
    value = fb.expr(node.value) if node.value is not None else 0
    scope, binding = fb.frame.scope.find(node.target.id)
    name = node.target.id
    if (isinstance(binding, Fixed) and binding.what != "loop index") or (
            scope is not None and scope.parent is None and name in fb.frame.template_args):  # fmt: skip
        assign_name(fb, name, value, node.target)  # an argument: raises Quadrants' error
    if isinstance(binding, Var):
        if binding.dtype is not dtype:  # Quadrants: a local's type is fixed where it is declared
            raise fb.error(node, f"variable {name!r} is {binding.dtype}: it cannot be annotated again as {dtype}",
                           QuadrantsCompilationError)  # fmt: skip
        fb.assign_var(binding, value, node)
    else:
        fb.define_var(node.target.id, value, node, dtype)


def transform_aug_assign(fb: FrontendBuilder, node: ast.AugAssign) -> None:
    op = AUG_OPS.get(type(node.op))
    if op is None:
        raise fb.error(node, f"operator {type(node.op).__name__} is not supported")
    value = fb.expr(node.value)
    if isinstance(value, tiles.OuterProduct) or tiles.names_tile(fb, node.target):  # `t -= qd.outer(a, b)`
        tiles.augassign(fb, node.target, op, value, node)
        return
    if op == "matmul":
        current = fb.expr(node.target)
        assign(fb, node.target, matmul(fb, current, value, node), node)
        return
    ref = resolve_ref(fb, node.target)
    if ref is not None:
        augassign_ref(fb, ref, op, value, node)
        return
    # a name bound to a compile-time value: compute and rebind
    assert isinstance(node.target, ast.Name)
    current = read(fb, fb.lookup(node.target.id, node.target))
    assign_name(fb, node.target.id, binary(fb, op, current, value, node), node.target)


# ---- control flow -------------------------------------------------------------------------------------


def transform_if(fb: FrontendBuilder, node: ast.If) -> None:
    if is_static_call(fb, node.test):
        chosen = node.body if fb.expr(node.test) else node.orelse
        fb.stmts(chosen)
        return
    cond = fb.expr(node.test)
    if not is_runtime(cond) and isinstance(cond, (bool, int, np.bool_, np.integer)):
        # a compile-time condition (a template flag: Genesis' `if decompose:`) folds as Quadrants' simplifier
        # folds it before offloading: the branch taken is the enclosing level, so its loops stay parallel
        # (still a non-static `if` for every other rule, as in Quadrants: a `break` of a static loop under it
        # is refused, a `return` under it is not at the top level)
        scope = fb.new_scope()
        fb.folded_ifs += 1
        fb.runtime_depth += 1
        try:
            fb.stmts(node.body if cond else node.orelse)
        finally:
            fb.runtime_depth -= 1
            fb.folded_ifs -= 1
            fb.pop_scope(scope)
        return
    stmt = fb.b.emit(ir.If(cond=fb.ops.cond(cond, fb.loc(node.test))))
    fb.runtime_block(stmt.then, node.body)
    if node.orelse:
        fb.runtime_block(stmt.orelse, node.orelse)


def transform_break(fb: FrontendBuilder, node: ast.Break) -> None:
    _jump(fb, node, ir.Break, "break")


def transform_continue(fb: FrontendBuilder, node: ast.Continue) -> None:
    _jump(fb, node, ir.Continue, "continue")


def _jump(fb: FrontendBuilder, node: ast.AST, cls: type, word: str) -> None:
    if not fb.loops:
        raise fb.error(node, f"'{word}' outside a loop")
    kind = fb.loops[-1]
    if kind == "static":
        if fb.runtime_depth != fb.static_loop_depths[-1]:
            raise fb.error(node, f"You are trying to `{word}` a static `for` loop, but the `{word}` statement is "
                                 "inside a non-static `if`.")  # fmt: skip
        raise StaticJump(word)  # static_for stops unrolling (break) or this iteration (continue)
    if kind == "parallel-folded" and word == "break":
        fb.loops[-1] = "parallel-broken"  # loops.transform_for makes it serial
    elif kind == "parallel" and word == "break":
        raise fb.error(node, "Cannot break in the outermost loop: 'break' is not allowed in the outermost "
                             "(parallel) for loop of a kernel")  # fmt: skip
    fb.b.emit(cls())
