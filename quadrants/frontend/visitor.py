"""The frontend's entry point: `build_kernel` translates a kernel's Python AST into an `ir.Kernel`.

The visitor is a `FrontendBuilder` (the state, `builder.py`) handed the dispatcher's tables (`dispatch.py`),
which map each AST node class to its construct function (`statements.py`, `expressions.py`, `calls.py`,
`loops.py`, ...). This module binds the kernel's parameters and translates its body.

Consumes a kernel's `FunctionSource` and its specialized parameters; produces an `ir.Kernel` and what the
translation observed for the caches (`FrontendResult`). Anything the kernel language does not support raises a
Quadrants error carrying the node's `file:line:col`.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Any

from quadrants.errors import SourceLoc
from quadrants.frontend import graph, sparse_builders, views
from quadrants.frontend.builder import FrontendBuilder
from quadrants.frontend.dispatch import EXPRESSIONS, STATEMENTS
from quadrants.frontend.records import FrontendOptions, FrontendResult, ParamSpec, SpecKind
from quadrants.frontend.scope import Fixed, Frame, Scope, closure_of
from quadrants.frontend.source import FunctionSource
from quadrants.frontend.values import Matrix, Struct
from quadrants.ir import nodes as ir
from quadrants.types.compound import MatrixType
from quadrants.types.dtypes import PrimitiveType
from quadrants.types.struct import StructType

__all__ = ["FrontendOptions", "FrontendResult", "ParamSpec", "build_kernel", "runtime_params"]


def build_kernel(
    source: FunctionSource,
    name: str,
    params: list[ParamSpec],
    returns: tuple[Any, ...],
    options: FrontendOptions,
) -> FrontendResult:
    """`returns`: per declared result, a dtype, a MatrixType of a concrete dtype, or a StructType of concrete
    dtypes (its leaf members are results of their own: the caller regroups them)."""
    flat: list[PrimitiveType] = []
    shapes: list[tuple[int, ...]] = []
    leaves = [leaf for r in returns for leaf in ([x for _, x in r.leaves()] if isinstance(r, StructType) else [r])]
    for r in leaves:
        if isinstance(r, MatrixType):
            flat.extend([r.dtype] * r.size)
            shapes.append(r.shape)
        else:
            flat.append(r)
            shapes.append(())
    kernel = ir.Kernel(name=name, params=runtime_params(params), ret_types=tuple(flat), body=ir.Block(),
                       ret_shapes=tuple(shapes))  # fmt: skip
    fb = FrontendBuilder(kernel, options, returns, STATEMENTS, EXPRESSIONS)
    _translate_kernel(fb, source, params)
    return FrontendResult(
        kernel=kernel, captures=fb.captures, funcs=list(fb.funcs_seen.values()), static_calls=fb.static_calls,
        member_reads=fb.member_reads,
    )


def runtime_params(params: list[ParamSpec], prefix: str = "", member: bool = False) -> list[ir.Param]:
    """The runtime parameters of a specialization, depth first: the native function's arguments. `member`:
    they are members of a dataclass / data_oriented argument, which the kernel may leave out unread
    (passes/prune_args.py); a `qd.types.struct` value, a BufferView or a sparse builder passes all of its own."""
    out: list[ir.Param] = []
    for p in params:
        name = prefix + p.name
        if p.kind in (SpecKind.SCALAR, SpecKind.NDARRAY):
            out.append(ir.Param(name, p.type, member))
            if p.grad is not None:
                out.append(ir.Param(name + ".grad", p.grad.type, member))
        elif p.kind == SpecKind.MATRIX:
            shape, dtype = p.type
            out.extend(ir.Param(f"{name}[{k}]", dtype, member) for k in range(_size(shape)))
        elif p.kind == SpecKind.STRUCT:
            out.extend(runtime_params(list(p.members), name + ".", _prunable_struct(p)))
    return out


def _prunable_struct(p: ParamSpec) -> bool:
    """Whether a struct parameter's members are passed only when read: a Python dataclass's or a data_oriented
    object's, as in Quadrants (not a typed `qd.types.struct` value's, nor a BufferView's or sparse builder's)."""
    return isinstance(p.cls, type) and not any(getattr(p.cls, k, False) is True for k in _SPECIAL_STRUCTS)


def _size(shape: tuple[int, ...]) -> int:
    n = 1
    for s in shape:
        n *= s
    return n


def _translate_kernel(fb: FrontendBuilder, source: FunctionSource, params: list[ParamSpec]) -> None:
    fr = Frame(source=source, scope=Scope(), is_kernel=True, entry_depth=0, closure=closure_of(source.fn))
    fb.frames.append(fr)
    args = source.tree.args
    if args.vararg or args.kwarg or args.kwonlyargs:
        raise fb.error(source.tree, "kernels take positional parameters only (no *args, **kwargs)")
    if fb.returns and not source.has_return():
        raise fb.error(source.tree, "Kernel has a return type but does not have a return statement")
    counter = [0]
    fr.template_args = frozenset(p.name for p in params if p.kind == SpecKind.TEMPLATE)
    for i, p in enumerate(params):
        fr.scope.names[p.name] = _bind_param(fb, p, p.name, counter, source.loc(source.tree), [], (i,))
    body = _strip_docstring(source.tree.body)
    graph.begin_kernel(fb, source.fn, body, counter[0])
    fb.global_insert_pos = len(fb.kernel.body.stmts)
    fb.new_scope()
    fb.stmts(body)
    graph.end_kernel(fb)
    if fb.returns and not any(isinstance(s, ir.Return) for s in ir.walk(fb.kernel.body)):
        # every return was in a branch that qd.static() left out (Quadrants checks what was compiled too)
        raise fb.error(source.tree, "Kernel has a return type but does not have a return statement")
    fb.frames.pop()


def _bind_param(
    fb: FrontendBuilder, p: ParamSpec, path: str, counter: list[int], loc: SourceLoc, outer: list[Struct],
    where: tuple[Any, ...],
) -> Any:
    """What a kernel parameter's name means inside the kernel; emits its Arg statements in ABI order. `outer`
    holds the structs being bound around `p` (an ALIAS member names one of them); `where` is its path in the
    specialization (lang/args.py), which a struct reports its members' reads under."""

    def arg(t: Any, name: str) -> ir.Arg:
        a = fb.b.emit(ir.Arg(index=counter[0], name=name, type=t, loc=loc))
        counter[0] += 1
        return a

    if p.kind == SpecKind.TEMPLATE:
        return p.value
    if p.kind in (SpecKind.SCALAR, SpecKind.NDARRAY):
        a = arg(p.type, path)
        if p.kind == SpecKind.NDARRAY and p.value == "clamp":
            fb.clamped.add(id(a))
        if p.grad is not None:
            fb.kernel.grads[a] = arg(p.grad.type, path + ".grad")
        return Fixed(a, "kernel argument")
    if p.kind == SpecKind.MATRIX:
        shape, dtype = p.type
        return Fixed(Matrix(shape, [arg(dtype, f"{path}[{k}]") for k in range(_size(shape))]), "kernel argument")
    if p.kind == SpecKind.ALIAS:
        return outer[-p.value]
    special = _SPECIAL_STRUCTS.get(next((k for k in _SPECIAL_STRUCTS if getattr(p.cls, k, False) is True), ""))
    if special is not None:  # a BufferView, a SparseMatrixBuilder: their members' values, bound as one object
        values = [_bind_param(fb, m, f"{path}.{m.name}", counter, loc, outer, where + (m.name,)).value
                  for m in p.members]  # fmt: skip
        return Fixed(special(*values), "kernel argument")
    s = Struct(cls=p.cls, obj=p.obj, on_class_read=fb.record_class_read, _path=where, _on_read=fb.member_reads.add)
    outer.append(s)
    for m in p.members:
        s.members[m.name] = _bind_param(fb, m, f"{path}.{m.name}", counter, loc, outer, where + (m.name,))
    outer.pop()
    return s


# Struct parameters the kernel sees as one object of the frontend's, by the marker their class carries.
_SPECIAL_STRUCTS: dict[str, Callable[..., Any]] = {"__qd_buffer_view__": views.bind, "__qd_sparse_builder__": sparse_builders.bind}


def _strip_docstring(body: list[ast.stmt]) -> list[ast.stmt]:
    if body and isinstance(body[0], ast.Expr) and isinstance(getattr(body[0], "value", None), ast.Constant):
        if isinstance(body[0].value.value, str):  # type: ignore[attr-defined]
            return body[1:]
    return body
