"""`qd.real_func` calls: the callee is translated once per signature into an `ir.Function`, and called.

Consumes a call of a real function inside a kernel or func; produces an `ir.Call` (and the loads of its
results). As in Quadrants, a real function is compiled as a function of its own, so it may call itself (the
recursion happens at run time) and `return` anywhere in its body, loops included; its loops are serial.

Parameters pass by value, as Quadrants' real functions take them:

- a scalar annotation (`qd.i32`, `float`): the argument cast to it;
- a vector/matrix annotation (`qd.math.vec3`): a vector/matrix of that shape, its elements cast to its dtype;
- an ndarray annotation: one of the kernel's ndarray arguments (its handle);
- `qd.ref(dtype)`: a scalar local variable or element of the caller's, passed as its address (assigning the
  parameter writes it);
- `qd.template()` (and an unannotated `self`): a compile-time value (a field, a data_oriented object, a Python
  number...), baked into the function's code: each distinct value is its own signature.

The signature (the parameters' types, template values by value) picks the `ir.Function`: a kernel's real
functions live in `ir.Kernel.functions`, translated lazily on their first call; the function is registered
before its body is translated, so a call of itself finds it. Results: scalars, vectors/matrices, struct types
and tuples of them, written by the callee into result locals of the caller. A struct-typed parameter or result
passes as its leaf members (one native value per scalar); the callee works on a struct variable (a copy).
"""

from __future__ import annotations

import ast
import inspect
import typing
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from quadrants.errors import QuadrantsSyntaxError, QuadrantsTypeError
from quadrants.frontend.arguments import ByValue
from quadrants.frontend.builder import FrontendBuilder
from quadrants.frontend.func import Func
from quadrants.frontend.inlining import bind_call, reference_params
from quadrants.frontend.refs import ScalarRef
from quadrants.frontend.scope import Alias, Fixed, Frame, MatVar, Scope, Var, closure_of
from quadrants.frontend.structs import coerce, new_variable, resolved, result_scalars
from quadrants.frontend.values import Matrix, Struct, is_runtime
from quadrants.frontend.vectors import as_matrix
from quadrants.ir import nodes as ir
from quadrants.types import annotations as ann
from quadrants.types.compound import MatrixType
from quadrants.types.dtypes import PrimitiveType, to_dtype
from quadrants.types.struct import StructType

ResultItem = PrimitiveType | MatrixType | StructType  # one declared result (types resolved)


@dataclass(frozen=True)
class _Param:
    """One parameter of a real function at a call: how it is passed and what it contributes to the key."""

    name: str
    kind: str  # "template", "scalar", "matrix", "ndarray", "ref", "struct"
    key: Any
    value: Any  # the compile-time value (template), or the runtime values to pass (a list of IR values)
    shape: tuple[int, ...] = ()  # a matrix parameter's shape


@dataclass(frozen=True)
class _Compiled:
    function: ir.Function
    results: tuple[ResultItem, ...]
    returns_tuple: bool


def call_real(fb: FrontendBuilder, func: Func, bound_self: Any, node: ast.Call) -> Any:
    """A call of real function `func` (`bound_self`: the object of a method call): its `ir.Call`, and the value
    it returns (a scalar, a Matrix, a tuple of them, or None)."""
    src = func.source
    fb.funcs_seen.setdefault(id(src), src)
    hints = getattr(src.fn, "__annotations__", {})
    names = {**func.def_locals, **closure_of(src.fn)}

    def resolve(a: Any) -> Any:
        return ann.normalize(ann.resolve(a, src.fn.__globals__, names))

    sig = inspect.signature(src.fn)
    refs = reference_params(sig, hints, resolve, bound_self is not None, lambda a: isinstance(a, ann.RefType))
    bound = bind_call(fb, sig, refs, bound_self, node, f"qd.real_func {src.name!r}")
    loc = fb.loc(node)
    params = []
    for k, (name, value) in enumerate(bound.arguments.items()):
        hint = hints.get(name)
        annotation = ann.template() if hint is None and k == 0 and bound_self is not None else resolve(hint)
        params.append(_param(fb, name, value, annotation, node))
    key = (id(src), tuple((p.name, p.key) for p in params))
    compiled = fb.real_funcs.get(key)
    if compiled is None:
        ret_ann = ann.return_annotation(hints)
        if ret_ann is not None and not src.has_return():
            raise QuadrantsSyntaxError("Function has a return type but does not have a return statement",
                                       src.loc(src.tree))  # fmt: skip
        if ret_ann is None and src.has_return(with_value=True):
            raise QuadrantsSyntaxError(f"The return value must be annotated for the real function {src.name!r}",
                                       src.loc(src.tree))  # fmt: skip
        compiled = _translate(fb, func, params, resolve(ret_ann), key, node)
    fn = compiled.function
    with fb.b.at(loc):
        results = []
        for t in fn.ret_types:
            r = fb.b.alloca(t, f"{src.name}.result")
            fb.b.store(r, fb.b.const(0, t))  # a path that ends without `return` gives zeros
            results.append(r)
        fb.b.emit(ir.Call(func=fn, args=tuple(v for p in params if p.kind != "template" for v in p.value),
                          results=tuple(results)))  # fmt: skip
        loads = iter([fb.b.load(r) for r in results])
    out = [_rebuild(item, loads) for item in compiled.results]
    if compiled.returns_tuple:
        return tuple(out)
    return out[0] if out else None


def _rebuild(item: ResultItem, loads: Iterator[ir.Value]) -> Any:
    if isinstance(item, StructType):
        return Struct(cls=item, members={k: _rebuild(mt, loads) for k, mt in item.members.items()})
    if isinstance(item, MatrixType):
        return Matrix(item.shape, [next(loads) for _ in range(item.size)])
    return next(loads)


def _param(fb: FrontendBuilder, name: str, value: Any, annotation: Any, node: ast.Call) -> _Param:
    loc = fb.loc(node)
    if ann.is_template(annotation):
        if _holds_runtime(value):
            raise fb.error(node, f"argument {name!r} of a real function is a qd.template() parameter: it takes a "
                                 "compile-time value (a field, a Python value, a data_oriented object), not a runtime "
                                 "one; annotate it with a type to pass a runtime value", QuadrantsTypeError)  # fmt: skip
        return _Param(name, "template", _template_key(value), value)
    if isinstance(annotation, ann.RefType):
        ptr: ir.Value | None = value.ptr if isinstance(value, Var) else None
        if isinstance(value, Alias) and isinstance(value.ref, ScalarRef):
            ptr = value.ref.ptr
        if ptr is None or not isinstance(ptr.type, ir.PtrType) or ptr.type.pointee is not annotation.dtype:
            what = (
                f"a {ptr.type.pointee} location"
                if ptr is not None and isinstance(ptr.type, ir.PtrType)
                else ("a value that is not a variable or an element")
            )
            raise fb.error(node, f"argument {name!r} of a real function is {annotation!r}: it takes a scalar local "
                                 f"variable or element of type {annotation.dtype}, not {what}",
                           QuadrantsTypeError)  # fmt: skip
        return _Param(name, "ref", annotation.dtype, [ptr])
    if isinstance(value, ByValue):
        value = value.value
    if isinstance(annotation, ann.NdarrayType):
        if not (isinstance(value, ir.Value) and isinstance(value.type, ir.NdType)):
            raise QuadrantsTypeError(
                f"Expected ndarray in the kernel argument for argument {name} (a real "
                "function's ndarray parameter takes one of the kernel's ndarray arguments)",
                loc,
            )
        if annotation.ndim is not None and annotation.ndim != value.type.ndim:
            raise QuadrantsTypeError(f"argument {name} of a real function is annotated with {annotation.ndim} "
                                     f"dimension(s) but is given an ndarray of {value.type.ndim}", loc)  # fmt: skip
        return _Param(name, "ndarray", value.type, [value])
    if isinstance(annotation, MatrixType):
        mtype = MatrixType(annotation.shape, annotation.resolve(fb.options.default_ip, fb.options.default_fp))
        m = as_matrix(fb, value, node)
        if m is None or m.shape != mtype.shape:
            got = "a scalar" if m is None else f"shape {m.shape}"
            raise fb.error(node, f"argument {name!r} of a real function is a {mtype!r} (shape {mtype.shape}) but is "
                                 f"given {got}", QuadrantsTypeError)  # fmt: skip
        return _Param(name, "matrix", mtype, [fb.ops.cast(e, mtype.dtype, loc) for e in m.elements], mtype.shape)
    if ann.is_scalar_annotation(annotation):
        dtype = to_dtype(annotation, fb.options.default_ip, fb.options.default_fp)
        if as_matrix(fb, value, node) is not None:
            raise fb.error(node, f"argument {name!r} of a real function is a {dtype} but is given a vector/matrix",
                           QuadrantsTypeError)  # fmt: skip
        return _Param(name, "scalar", dtype, [fb.ops.cast(value, dtype, loc)])
    if isinstance(annotation, StructType):
        t = resolved(fb, annotation)
        s = coerce(fb, value, t, node, f"argument {name!r} of a real function")
        return _Param(name, "struct", t, result_scalars(fb, [s], [t], node, f"argument {name!r}"))
    raise fb.error(node, f"argument {name!r} of a real function has an annotation real functions do not take here: "
                         f"{annotation!r} (scalars, vectors/matrices, ndarrays and qd.template() are)",
                   QuadrantsTypeError)  # fmt: skip


def _holds_runtime(value: Any) -> bool:
    if is_runtime(value) or isinstance(value, (Var, MatVar, Alias, ByValue, Fixed)):
        return True
    if isinstance(value, Struct):
        return any(_holds_runtime(v) for v in value.members.values())
    if isinstance(value, (tuple, list)):
        return any(_holds_runtime(v) for v in value)
    return False


def _template_key(value: Any) -> Any:
    """Template values by value: numbers, strings and tuples of them by equality, other objects by identity
    (they stay alive while the kernel compiles)."""
    if value is None or isinstance(value, (bool, int, float, str, PrimitiveType, MatrixType)):
        return (type(value).__name__, value)
    if isinstance(value, tuple):
        return ("tuple", tuple(_template_key(v) for v in value))
    return ("object", id(value))


def _result_items(fb: FrontendBuilder, annotation: Any, node: ast.AST) -> tuple[tuple[ResultItem, ...], bool]:
    """The declared results (flat list of items) and whether the function returns a tuple."""
    if annotation is None or annotation is type(None):
        return (), False
    if isinstance(annotation, (tuple, list)) or typing.get_origin(annotation) is tuple:
        items = annotation if isinstance(annotation, (tuple, list)) else typing.get_args(annotation)
        return tuple(_result_item(fb, a, node) for a in items), True
    return (_result_item(fb, annotation, node),), False


def _result_item(fb: FrontendBuilder, a: Any, node: ast.AST) -> ResultItem:
    if isinstance(a, MatrixType):
        return MatrixType(a.shape, a.resolve(fb.options.default_ip, fb.options.default_fp))
    if ann.is_scalar_annotation(a):
        return to_dtype(a, fb.options.default_ip, fb.options.default_fp)
    if isinstance(a, StructType):
        return resolved(fb, a)
    raise fb.error(node, f"a real function's result annotation {a!r} is not supported here (scalars, "
                         "vectors/matrices, structs and tuples of them are)", QuadrantsTypeError)  # fmt: skip


def _flat(items: tuple[ResultItem, ...] | list[Any]) -> tuple[PrimitiveType, ...]:
    out: list[PrimitiveType] = []
    for it in items:
        if isinstance(it, StructType):
            out.extend(_flat([leaf for _, leaf in it.leaves()]))
        else:
            out.extend([it.dtype] * it.size if isinstance(it, MatrixType) else [it])
    return tuple(out)


def _translate(fb: FrontendBuilder, func: Func, params: list[_Param], ret_ann: Any, key: Any,
               node: ast.Call) -> _Compiled:  # fmt: skip
    src = func.source
    items, returns_tuple = _result_items(fb, ret_ann, src.tree)
    ir_params: list[ir.FuncParam] = []
    for p in params:
        if p.kind == "template":
            continue
        if p.kind in ("matrix", "struct"):
            ir_params.extend(ir.FuncParam(f"{p.name}[{k}]", v.type) for k, v in enumerate(p.value))
        else:
            ir_params.append(ir.FuncParam(p.name, p.value[0].type))
    fn = ir.Function(name=f"{src.fn.__qualname__}.{len(fb.kernel.functions)}", params=ir_params,
                     ret_types=_flat(items), body=ir.Block())  # fmt: skip
    compiled = _Compiled(fn, items, returns_tuple)
    fb.kernel.functions.append(fn)
    fb.real_funcs[key] = compiled  # before the body: a call of itself finds it
    frame = Frame(source=src, scope=Scope(), is_kernel=False, entry_depth=1, return_annotation=items,
                  closure=closure_of(src.fn), real=fn)  # fmt: skip
    with _inside(fb, fn, frame):
        fb.b.loc = src.loc(src.tree)
        index = 0
        for p in params:
            if p.kind == "template":
                frame.scope.names[p.name] = p.value
                continue
            args = []
            for v in p.value:
                args.append(fb.b.emit(ir.Arg(index=index, name=ir_params[index].name, type=v.type)))
                index += 1
            if p.kind == "ndarray":
                frame.scope.names[p.name] = Fixed(args[0], "ndarray argument")
            elif p.kind == "ref":  # the caller's location: reads load it, assignments store to it
                frame.scope.names[p.name] = Alias(ScalarRef(args[0], p.key, shared=False), src.tree)
            elif p.kind == "struct":  # a struct variable holding the argument (passed by value)
                frame.scope.names[p.name] = new_variable(fb, _rebuild(p.key, iter(args)), p.name, node)
            elif p.kind == "matrix":
                frame.scope.names[p.name] = MatVar(p.shape, [fb.new_var(f"{p.name}[{k}]", a, p.key.dtype)
                                                             for k, a in enumerate(args)])  # fmt: skip
            else:
                frame.scope.names[p.name] = fb.new_var(p.name, args[0], p.key)
        fb.global_insert_pos = len(fn.body.stmts)
        fb.new_scope()
        body = src.tree.body
        if body and isinstance(body[0], ast.Expr) and isinstance(getattr(body[0], "value", None), ast.Constant):
            body = body[1:]
        fb.stmts(body)
    return compiled


@contextmanager
def _inside(fb: FrontendBuilder, fn: ir.Function, frame: Frame) -> Iterator[None]:
    """Translate into `fn`'s body with a fresh context: its own frame stack, no enclosing loops, its own field
    handles; `runtime_depth` 1, so its loops are serial (the caller's threads run it)."""
    saved = (fb.b.blocks, fb.b.loc, fb.frames, fb.loops, fb.runtime_depth, fb.static_loop_depths, fb.loop_config,
             fb.parallel_id, fb.fields_used, fb.global_insert_pos, fb.globals_block)  # fmt: skip
    fb.b.blocks = [fn.body]
    fb.frames = [frame]
    fb.loops, fb.runtime_depth, fb.static_loop_depths, fb.loop_config, fb.parallel_id = [], 1, [], None, 0
    fb.fields_used, fb.global_insert_pos, fb.globals_block = {}, 0, fn.body
    try:
        yield
    finally:
        (fb.b.blocks, fb.b.loc, fb.frames, fb.loops, fb.runtime_depth, fb.static_loop_depths, fb.loop_config,
         fb.parallel_id, fb.fields_used, fb.global_insert_pos, fb.globals_block) = saved  # fmt: skip


def real_return(fb: FrontendBuilder, value: Any, node: ast.Return) -> None:
    """`return` in a real function (anywhere in it): the values cast to the declared results, then leave."""
    items: tuple[ResultItem, ...] = fb.frame.return_annotation
    if value is None:
        values: list[Any] = []
    elif len(items) == 1:
        values = list(value) if isinstance(value, tuple) and len(value) == 1 else [value]
    elif isinstance(value, (tuple, list)):
        values = list(value)
    else:
        values = [value]
    if len(values) != len(items):
        raise fb.error(node, f"the real function returns {len(values)} value(s) but its annotation declares "
                             f"{len(items)}", QuadrantsTypeError)  # fmt: skip
    out = result_scalars(fb, values, items, node, "the real function")
    fb.b.emit(ir.Return(values=tuple(out)))
