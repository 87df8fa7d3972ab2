"""Calls inside kernels (a mixin of the frontend `Visitor`): dispatch to intrinsics and Python builtins (their
handlers live in `intrinsic_calls.py`), dtype casts, print, and `qd.func` inlining (template parameters by
reference).
"""

from __future__ import annotations

import ast
import builtins
import inspect
from typing import TYPE_CHECKING, Any

from quadrants.errors import (
    QuadrantsArgumentError,
    QuadrantsCompilationError,
    QuadrantsTypeError,
    binding_message,
)
from quadrants.frontend.expressions import is_runtime
from quadrants.frontend.func import BoundFunc, Func
from quadrants.frontend.intrinsic_calls import BUILTINS, EVAL, RAW
from quadrants.frontend.ops import is_static_number
from quadrants.frontend.records import StaticCall
from quadrants.frontend.scope import Alias, Fixed, Frame, MatVar, Scope, Var, closure_of
from quadrants.frontend.values import Matrix, Struct
from quadrants.ir import nodes as ir
from quadrants.types import annotations as ann
from quadrants.types.compound import MatrixType
from quadrants.types.dtypes import PrimitiveType

if TYPE_CHECKING:
    from quadrants.frontend.visitor import Visitor

class CallMixin:
    def visit_Call(self: Visitor, node: ast.Call) -> Any:
        if isinstance(node.func, ast.Attribute):
            base = self.expr(node.func.value)
            if isinstance(base, Matrix):
                return self.method_call(base, node.func.attr, node)
            if is_runtime(base):
                raise self.error(node, f"runtime values have no method {node.func.attr!r}")
            if isinstance(base, Struct):
                fn = self.struct_attribute(base, node.func.attr, node.func)
            else:
                try:
                    fn = getattr(base, node.func.attr)
                except AttributeError as e:
                    raise self.error(node.func, f"AttributeError: {e}", QuadrantsCompilationError) from None
        else:
            fn = self.expr(node.func)
        if isinstance(fn, MatrixType):
            args, _ = self.call_args(node)
            return self.construct(fn, args, node)
        name = getattr(fn, "__qd_intrinsic__", None)
        if name is not None:
            if name in RAW:
                return RAW[name](self, node)
            args, kwargs = self.call_args(node)
            return EVAL[name](self, node, name, *args, **kwargs)
        if isinstance(fn, Func):
            return self.inline(fn, None, node)
        if isinstance(fn, BoundFunc):
            return self.inline(fn.func, fn.obj, node)
        if isinstance(fn, PrimitiveType):
            return self.dtype_call(fn, node)
        if getattr(fn, "__qd_kernel__", False):
            raise self.error(node, "a kernel cannot be called from a kernel or qd.func; make it a qd.func")
        if fn is builtins.print:
            return self.print_call(node)
        handler = BUILTINS.get(id(fn))
        args, kwargs = self.call_args(node)
        if handler is not None and any(is_runtime(a) for a in args):
            return handler(self, node, *args, **kwargs)
        if any(is_runtime(a) for a in args) or any(is_runtime(v) for v in kwargs.values()):
            fname = getattr(fn, "__name__", repr(fn))
            raise self.error(node, f"cannot call the Python function {fname!r} with runtime values; make it a @qd.func")
        self.static_calls.append(StaticCall(fn, self.loc(node)))
        try:
            return fn(*args, **kwargs)
        except QuadrantsCompilationError:
            raise
        except Exception as e:
            raise self.error(node, f"{type(e).__name__}: {e}", QuadrantsCompilationError) from None

    def call_args(self: Visitor, node: ast.Call, by_ref: set[Any] | None = None) -> tuple[list[Any], dict[str, Any]]:
        """A call's evaluated arguments. With `by_ref` (a qd.func's template parameters, by position and name), an
        argument that names a local variable or an element (`x`, `v`, `a[i]`, `v[1]`) is passed as that location
        (a `Var`, `MatVar` or `Alias`)."""
        refs = by_ref or set()
        args: list[Any] = []
        for k, a in enumerate(node.args):
            if isinstance(a, ast.Starred):
                v = self.expr(a.value)
                args.extend(v.unpack_values() if isinstance(v, Matrix) else v)
            else:
                args.append(self._reference_arg(a) if k in refs and len(args) == k else self.expr(a))
        kwargs: dict[str, Any] = {}
        for kw in node.keywords:
            if kw.arg is None:
                kwargs.update(self.expr(kw.value))
            else:
                kwargs[kw.arg] = self._reference_arg(kw.value) if kw.arg in refs else self.expr(kw.value)
        return args, kwargs

    def method_call(self: Visitor, base: Matrix, attr: str, node: ast.Call) -> Any:
        if attr == "fill":
            assert isinstance(node.func, ast.Attribute)
            ref = self.lvalue(node.func.value, "fill")
            value = self.expr(node.args[0])
            self.store_ref(ref, Matrix(base.shape, [value] * len(base.elements)), node)
            return None
        args, kwargs = self.call_args(node)
        return self.matrix_method(base, attr, args, kwargs, node)

    def dtype_call(self: Visitor, dtype: PrimitiveType, node: ast.Call) -> Any:
        """`qd.f32(x)`: a typed literal, or a cast of a runtime value."""
        args, _ = self.call_args(node)
        if len(args) != 1:
            raise self.error(node, f"{dtype}() takes one argument")
        (x,) = args
        if isinstance(x, Matrix):
            return Matrix(x.shape, [self.ops.cast(e, dtype, self.loc(node)) for e in x.elements])
        if is_static_number(x):
            if isinstance(x, float) and not dtype.is_float:
                raise self.error(
                    node,
                    "Floating-point literals must be annotated with a floating-point type. For type casting, "
                    "use `qd.cast`.",
                    QuadrantsTypeError,
                )
            if isinstance(x, int) and not isinstance(x, bool) and dtype.is_float:
                raise self.error(
                    node,
                    "Integer literals must be annotated with a integer type. For type casting, use `qd.cast`.",
                    QuadrantsTypeError,
                )
            if dtype.is_integral and dtype.kind != "bool":
                lo, hi = dtype.min_max()
                if not lo <= int(x) <= hi:
                    raise self.error(node, f"{x} exceeded the range of specified dtype {dtype}", QuadrantsTypeError)
            return self.b.const(int(x) if dtype.is_integral else float(x), dtype)
        return self.ops.cast(x, dtype, self.loc(node))

    def print_call(self: Visitor, node: ast.Call) -> None:
        """`print(...)` in a kernel prints at run time (C printf formats: `%f` for f32, `%.12f` for f64)."""
        sep, end = " ", "\n"
        for kw in node.keywords:
            if kw.arg not in ("sep", "end"):
                raise self.error(node, f"print() does not take {kw.arg!r} in kernels")
            val = self.static_eval(kw.value)
            sep, end = (val, end) if kw.arg == "sep" else (sep, val)
        parts: list[Any] = []
        for i, a_node in enumerate(node.args):
            if i:
                parts.append(sep)
            if isinstance(a_node, ast.JoinedStr):
                parts.extend(self.format_parts(a_node))
            else:
                parts.extend(self._print_value(self.expr(a_node), a_node))
        parts.append(end)
        self.b.emit(ir.Print(parts=tuple(parts)))

    def _print_value(self: Visitor, a: Any, node: ast.AST) -> list[Any]:
        if isinstance(a, Matrix):
            out: list[Any] = ["["]
            for j, e in enumerate(a.unpack_values()):
                if j:
                    out.append(", ")
                out.extend(self._print_value(e, node))
            return out + ["]"]
        if isinstance(a, ir.Value):
            return [self.ops.value(a, self.loc(node))]
        return [str(a)]

    def format_parts(self: Visitor, node: ast.JoinedStr) -> list[Any]:
        parts: list[Any] = []
        for piece in node.values:
            if isinstance(piece, ast.Constant):
                parts.append(str(piece.value))
                continue
            assert isinstance(piece, ast.FormattedValue)
            value = self.expr(piece.value)
            if is_runtime(value):
                parts.extend(self._print_value(value, piece))
            else:
                spec = self.static_eval(piece.format_spec) if piece.format_spec is not None else ""
                parts.append(format(value, spec))
        return parts

    # ---- qd.func inlining -------------------------------------------------------------------------------

    def inline(self: Visitor, func: Func, bound_self: Any, node: ast.Call) -> Any:
        src = func.source
        if any(fr.source is src for fr in self.frames):
            raise self.error(node, f"qd.func {src.name!r} calls itself: recursion is not supported")
        self.funcs_seen.setdefault(id(src), src)
        hints = getattr(src.fn, "__annotations__", {})
        closure = closure_of(src.fn)
        g = src.fn.__globals__
        names = {**func.def_locals, **closure}

        def resolve(a: Any) -> Any:
            return ann.normalize(ann.resolve(a, g, names))

        sig = inspect.signature(src.fn)
        by_ref = self._reference_params(sig, hints, resolve, bound_self is not None)
        args, kwargs = self.call_args(node, by_ref)
        if bound_self is not None:
            args = [bound_self, *args]
        try:
            bound = sig.bind(*args, **kwargs)
        except TypeError as e:
            raise self.error(node, f"{binding_message(e)} (calling qd.func {src.name!r}: {e})",
                             QuadrantsArgumentError) from None  # fmt: skip
        bound.apply_defaults()

        ret_ann = hints.get("return")
        frame = Frame(
            source=src,
            scope=Scope(),
            is_kernel=False,
            entry_depth=self.runtime_depth,
            return_annotation=self._func_return_annotation(resolve(ret_ann)) if ret_ann is not None else None,
            closure=closure,
        )
        call_loc = self.loc(node)
        saved_loops, self.loops = self.loops, []
        self.frames.append(frame)
        try:
            for name, value in bound.arguments.items():
                self._bind_func_param(name, value, resolve(hints.get(name)), call_loc)
            self.new_scope()
            body = src.tree.body
            if body and isinstance(body[0], ast.Expr) and isinstance(getattr(body[0], "value", None), ast.Constant):
                body = body[1:]
            self.stmts(body)
        finally:
            self.frames.pop()
            self.loops = saved_loops
        return None if frame.returned is _missing() else frame.returned

    @staticmethod
    def _reference_params(sig: inspect.Signature, hints: dict[str, Any], resolve: Any, bound_self: bool) -> set[Any]:
        """Which call arguments bind `qd.template()` parameters, by position (after any bound `self`) and by name:
        those are passed by reference, as in Quadrants."""
        out: set[Any] = set()
        positional = True
        for k, (name, p) in enumerate(sig.parameters.items()):
            if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
                positional = False
                continue
            if name in hints and ann.is_template(resolve(hints[name])):
                if positional and p.kind != p.KEYWORD_ONLY:
                    out.add(k - 1 if bound_self else k)
                out.add(name)
        return out

    def _reference_arg(self: Visitor, a: ast.expr) -> Any:
        if isinstance(a, ast.Name):
            _, binding = self.frame.scope.find(a.id)
            if isinstance(binding, (Var, MatVar, Alias)):
                return binding
            return self.expr(a)
        if isinstance(a, (ast.Subscript, ast.Attribute)) and _rooted_at_name(a):
            try:
                ref = self.resolve_ref(a)
            except QuadrantsCompilationError:  # not a location (a struct member, an item of a tuple...): a value
                ref = None
            if ref is not None:
                return Alias(ref, a)
        value = self.expr(a)
        return _ByValue(value) if is_runtime(value) else value

    def _bind_func_param(self: Visitor, name: str, value: Any, annotation: Any, loc: Any) -> None:
        scope = self.frame.scope
        if isinstance(value, (Var, MatVar, Alias)):  # a template parameter given a location: by reference
            scope.names[name] = value
            return
        if isinstance(value, _ByValue):
            scope.names[name] = Fixed(value.value, "template parameter given a value (not a variable or an element):")
            return
        if annotation is None or ann.is_template(annotation):
            if isinstance(value, ir.Value) and isinstance(value.type, PrimitiveType) and annotation is None:
                value = self._copy_to_var(name, value)
            scope.names[name] = value
            return
        if isinstance(annotation, ann.NdarrayType):
            if not (isinstance(value, ir.Value) and isinstance(value.type, ir.NdType)):
                raise QuadrantsTypeError(f"argument {name!r} must be an ndarray", loc)
            scope.names[name] = value
            return
        if ann.is_scalar_annotation(annotation):
            dtype = annotation if isinstance(annotation, PrimitiveType) else None
            if dtype is None:
                from quadrants.types.dtypes import to_dtype

                dtype = to_dtype(annotation, self.options.default_ip, self.options.default_fp)
            v = self.ops.cast(value, dtype, loc)
            scope.names[name] = self._copy_to_var(name, v)
            return
        scope.names[name] = value

    def _copy_to_var(self: Visitor, name: str, value: ir.Value) -> Var:
        assert isinstance(value.type, PrimitiveType)
        ptr = self.b.alloca(value.type, name)
        self.b.store(ptr, value)
        return Var(ptr=ptr, dtype=value.type, name=name, parallel_id=self.parallel_id)

    def _func_return_annotation(self: Visitor, a: Any) -> Any:
        import typing

        if a is None or a is type(None):
            return None
        if typing.get_origin(a) is tuple or isinstance(a, tuple):
            items = typing.get_args(a) if not isinstance(a, tuple) else a
            return tuple(self._func_return_annotation(x) for x in items)
        if ann.is_scalar_annotation(a):
            from quadrants.types.dtypes import to_dtype

            return to_dtype(a, self.options.default_ip, self.options.default_fp)
        return None  # a vector/matrix or other annotation: returned as computed


def _rooted_at_name(node: ast.expr) -> bool:
    """Attributes and subscripts of a name (`a[i]`, `v[i][0]`, `self.state.pos`)."""
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        node = node.value
    return isinstance(node, ast.Name)


class _ByValue:
    """A runtime value (not a variable or an element) given to a template parameter: readable, not assignable."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value


def _missing() -> Any:
    from quadrants.frontend.scope import MISSING

    return MISSING


__all__ = ["CallMixin"]
