"""`qd.func` calls: the callee's body is translated in place, in a new frame, with its parameters bound.

Template parameters given a variable or an element alias it (by reference, as in Quadrants); a scalar-annotated
parameter is a local copy cast to its type; anything else binds the value. A return value is cast to the
function's annotation. Recursion is a compile error. An error inside one of the package's own funcs (`qd.svd`,
`qd.math.*`) is reported at the caller's line, where the user can act on it.
"""

from __future__ import annotations

import ast
import inspect
import os
import typing
from collections.abc import Callable
from typing import Any

from quadrants.errors import (
    QuadrantsArgumentError,
    QuadrantsCompilationError,
    QuadrantsSyntaxError,
    QuadrantsTypeError,
    binding_message,
)
from quadrants.frontend import sparse_builders, views
from quadrants.frontend.arguments import ByValue, call_args
from quadrants.frontend.builder import FrontendBuilder
from quadrants.frontend.func import Func
from quadrants.frontend.scope import MISSING, Alias, Fixed, Frame, MatVar, Scope, Var, closure_of
from quadrants.frontend.structs import coerce, is_struct_value, new_variable, resolved
from quadrants.frontend.values import Matrix
from quadrants.frontend.vectors import as_matrix, make_matrix
from quadrants.ir import nodes as ir
from quadrants.types import annotations as ann
from quadrants.types.compound import MatrixType, element_dim_mismatch, element_mismatch
from quadrants.types.dtypes import PrimitiveType, to_dtype
from quadrants.types.struct import StructType

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def inline(fb: FrontendBuilder, func: Func, bound_self: Any, node: ast.Call) -> Any:
    src = func.source
    if any(fr.source is src for fr in fb.frames):
        raise fb.error(node, f"qd.func {src.name!r} calls itself: recursion is not supported")
    if func.requires_top_level and fb.runtime_depth != 0:
        raise fb.error(node, f"qd.func {src.name!r} is declared with requires_top_level=True: call it at the "
                             "kernel's top level, not inside a runtime for, if or while (directly or through "
                             "other funcs; a qd.static loop is fine), where its loops would no longer run in "
                             "parallel")  # fmt: skip
    fb.funcs_seen.setdefault(id(src), src)
    hints = getattr(src.fn, "__annotations__", {})
    closure = closure_of(src.fn)
    g = src.fn.__globals__
    names = {**func.def_locals, **closure}

    def resolve(a: Any) -> Any:
        return ann.normalize(ann.resolve(a, g, names))

    for k, a in enumerate(node.args):
        if isinstance(a, ast.Starred) and (k != len(node.args) - 1 or node.keywords):
            raise fb.error(node, "* args can only be present as the last argument of a function (error code: "
                                 "STARNOTLAST).")  # fmt: skip
    sig = inspect.signature(src.fn)
    by_ref = reference_params(sig, hints, resolve, bound_self is not None)
    bound = bind_call(fb, sig, by_ref, bound_self, node, f"qd.func {src.name!r}")

    ret_ann = ann.return_annotation(hints)
    if ret_ann is not None and not src.has_return():
        raise QuadrantsSyntaxError("Function has a return type but does not have a return statement", src.loc(src.tree))
    frame = Frame(
        source=src,
        scope=Scope(),
        is_kernel=False,
        entry_depth=fb.runtime_depth,
        return_annotation=_return_annotation(fb, resolve(ret_ann)) if ret_ann is not None else None,
        closure=closure,
    )
    call_loc = fb.loc(node)
    params = {name: resolve(hints.get(name)) for name in bound.arguments}
    for name, a in params.items():  # checked and converted here, where locations are the caller's
        if isinstance(a, MatrixType):
            bound.arguments[name] = _matrix_argument(fb, name, bound.arguments[name], a, node)
    saved_loops, fb.loops = fb.loops, []
    fb.frames.append(frame)
    try:
        self_name = next(iter(sig.parameters), None) if bound_self is not None else None
        for name, value in bound.arguments.items():
            if name == self_name and is_struct_value(value):  # a struct's method: `self` is the struct itself
                frame.scope.names[name] = value
                continue
            _bind_param(fb, name, value, params[name], call_loc, node)
        fb.new_scope()
        body = src.tree.body
        if body and isinstance(body[0], ast.Expr) and isinstance(getattr(body[0], "value", None), ast.Constant):
            body = body[1:]
        fb.stmts(body)
    except QuadrantsCompilationError as e:
        if _in_package(src.fn) and e.loc is not None and e.loc.filename.startswith(_PACKAGE_DIR):
            raise type(e)(e.message, call_loc) from None  # a library func's inside: the user's call is the place
        if e.loc is not None and not _in_package(src.fn):
            raise type(e)(e.message, e.loc.called_from(call_loc)) from None  # the traceback: this call site too
        raise
    finally:
        fb.frames.pop()
        fb.loops = saved_loops
    return None if frame.returned is MISSING else frame.returned


def _in_package(fn: Any) -> bool:
    return (getattr(fn, "__module__", None) or "").split(".")[0] == "quadrants"


def bind_call(fb: FrontendBuilder, sig: inspect.Signature, by_ref: set[Any], bound_self: Any, node: ast.Call,
              callee: str) -> inspect.BoundArguments:  # fmt: skip
    """The call's arguments (those in `by_ref` as references) bound to the callee's parameters after any bound
    `self`, defaults applied; a mismatch is Quadrants' QuadrantsArgumentError."""
    args, kwargs = call_args(fb, node, by_ref)
    if bound_self is not None:
        args = [bound_self, *args]
    try:
        bound = sig.bind(*args, **kwargs)
    except TypeError as e:
        raise fb.error(node, f"{binding_message(e)} (calling {callee}: {e})", QuadrantsArgumentError) from None
    bound.apply_defaults()
    return bound


def reference_params(sig: inspect.Signature, hints: dict[str, Any], resolve: Any, bound_self: bool,
                     which: Callable[[Any], bool] = ann.is_template) -> set[Any]:  # fmt: skip
    """Which call arguments bind parameters whose annotation is `which` (`qd.template()` ones), by position
    (after any bound `self`) and by name: those are passed by reference, as in Quadrants."""
    out: set[Any] = set()
    positional = True
    for k, (name, p) in enumerate(sig.parameters.items()):
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            positional = False
            continue
        if name in hints and which(resolve(hints[name])):
            if positional and p.kind != p.KEYWORD_ONLY:
                out.add(k - 1 if bound_self else k)
            out.add(name)
    return out


def _bind_param(fb: FrontendBuilder, name: str, value: Any, annotation: Any, loc: Any, call_node: ast.AST) -> None:
    scope = fb.frame.scope
    if isinstance(value, (Var, MatVar, Alias)):  # a template parameter given a location: by reference
        scope.names[name] = value
        return
    if isinstance(value, ByValue):
        scope.names[name] = Fixed(value.value, "template parameter given a value (not a variable or an element):")
        return
    if is_struct_value(value) and not ann.is_template(annotation):  # by value: the func works on a copy
        if isinstance(annotation, StructType):
            value = coerce(fb, value, resolved(fb, annotation), call_node, f"argument {name!r}")
        scope.names[name] = new_variable(fb, value, name, call_node)
        return
    if isinstance(annotation, StructType):
        raise QuadrantsTypeError(f"argument {name!r} is annotated {annotation!r} but given a {type(value).__name__}",
                                 loc)  # fmt: skip
    if annotation is None or ann.is_template(annotation):
        if isinstance(value, ir.Value) and isinstance(value.type, PrimitiveType) and annotation is None:
            value = fb.new_var(name, value, value.type)  # a local copy
        elif isinstance(value, Matrix) and annotation is None:  # a vector too: `vel[i] *= -r` changes the copy
            fb.define_matrix_var(name, make_matrix(fb, value.shape, value.elements, None, call_node))
            return
        scope.names[name] = value
        return
    if ann.is_buffer_view_annotation(annotation) or ann.is_sparse_builder_annotation(annotation):
        want = views.View if ann.is_buffer_view_annotation(annotation) else sparse_builders.Builder
        if not isinstance(value, want):
            raise QuadrantsTypeError(f"argument {name!r} is annotated {annotation!r} but given a {type(value).__name__}",
                                     loc)  # fmt: skip
        scope.names[name] = value  # by reference: the func's `v[i] = x` writes the caller's ndarray
        return
    if isinstance(annotation, ann.NdarrayType):
        if getattr(value, "_desc", None) is not None:
            # a Python-scope ndarray that is no kernel argument (Genesis' module-level `array_class.PLACEHOLDER`):
            # accepted as in Quadrants, as long as the func never indexes it (which is then a compile error)
            scope.names[name] = value
            return
        if not (isinstance(value, ir.Value) and isinstance(value.type, ir.NdType)):
            raise QuadrantsTypeError(f"Expected ndarray in the kernel argument for argument {name} (a qd.func's "
                                     "ndarray parameter takes one of the kernel's ndarray arguments)", loc)
        _check_element(fb, name, annotation, value.type, loc)
        scope.names[name] = value
        return
    if isinstance(annotation, MatrixType):
        fb.define_matrix_var(name, value)  # a copy: passed by value
        return
    if isinstance(annotation, ann.RefType):  # by value in a qd.func, as in Quadrants 1.3.3
        annotation = annotation.dtype
    if ann.is_scalar_annotation(annotation):
        dtype = annotation if isinstance(annotation, PrimitiveType) else None
        if dtype is None:
            dtype = to_dtype(annotation, fb.options.default_ip, fb.options.default_fp)
        v = fb.ops.cast(value, dtype, loc)
        assert isinstance(v.type, PrimitiveType)
        scope.names[name] = fb.new_var(name, v, v.type)
        return
    scope.names[name] = value


def _matrix_argument(fb: FrontendBuilder, name: str, value: Any, annotation: MatrixType, node: ast.Call) -> Matrix:
    """A vector/matrix-annotated parameter is passed by value, as in Quadrants: the callee gets a local copy of
    the argument (of its own element type: the annotation's is not imposed), whose shape must match."""
    m = as_matrix(fb, value, node)
    what = f"Argument {name} of type {annotation!r} is expected to be a Matrix"
    if m is None:
        raise fb.error(node, f"{what}, but got {type(value)}.")
    if len(m.shape) != len(annotation.shape):
        raise fb.error(node, f"{what} with ndim {len(annotation.shape)}, but got {len(m.shape)}.")
    for axis, letter in enumerate("nm"[: len(m.shape)]):
        if m.shape[axis] != annotation.shape[axis]:
            raise fb.error(node, f"{what} with {letter} {annotation.shape[axis]}, but got {m.shape[axis]}.")
    return make_matrix(fb, m.shape, m.elements, None, node)


def _check_element(fb: FrontendBuilder, name: str, annotation: ann.NdarrayType, got: ir.NdType, loc: Any) -> None:
    """An ndarray given to a func parameter annotated with an element type must have that element type (as in
    Quadrants, its number of dimensions is not checked here: indexing checks it)."""
    want = annotation.dtype
    if annotation.element_dim is not None:
        wrong_dim = element_dim_mismatch(name, annotation.element_dim, got.dtype, got.elem_shape)
        if wrong_dim is not None:
            raise QuadrantsCompilationError(f"ValueError: {wrong_dim}", loc)
    if want is None:
        return
    ip, fp = fb.options.default_ip, fb.options.default_fp
    shape = got.elem_shape if annotation.element_dim is not None else want.shape if isinstance(want, MatrixType) else ()
    prim = want.resolve(ip, fp) if isinstance(want, MatrixType) else to_dtype(want, ip, fp)
    wrong = element_mismatch(name, prim, shape, got.dtype, got.elem_shape)
    if wrong is not None:
        raise QuadrantsCompilationError(f"{wrong[0].__name__}: {wrong[1]}", loc)


def _return_annotation(fb: FrontendBuilder, a: Any) -> Any:
    if a is None or a is type(None):
        return None
    if typing.get_origin(a) is tuple or isinstance(a, tuple):
        items = typing.get_args(a) if not isinstance(a, tuple) else a
        return tuple(_return_annotation(fb, x) for x in items)
    if ann.is_scalar_annotation(a):
        return to_dtype(a, fb.options.default_ip, fb.options.default_fp)
    if isinstance(a, StructType):
        return resolved(fb, a)
    return None  # a vector/matrix or other annotation: returned as computed
