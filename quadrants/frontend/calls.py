"""Calls inside kernels (a mixin of the frontend `Visitor`): intrinsics, Python builtins, dtype casts and
`qd.func` inlining.

The intrinsic table maps the `__qd_intrinsic__` name of a called object to its handler, so `qd.sin`,
`qd.math.sin` and a user's `from quadrants import sin` all reach the same code.
"""

from __future__ import annotations

import ast
import builtins
import inspect
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from quadrants.errors import (
    QuadrantsArgumentError,
    QuadrantsCompilationError,
    QuadrantsSyntaxError,
    QuadrantsTypeError,
    binding_message,
)
from quadrants.frontend.expressions import is_runtime
from quadrants.frontend.func import BoundFunc, Func
from quadrants.frontend.intrinsics import _NdRange
from quadrants.frontend.lvalues import ScalarRef
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

Handler = Callable[["Visitor", ast.Call], Any]
RAW: dict[str, Handler] = {}  # handlers that read their argument nodes themselves
EVAL: dict[str, Callable[..., Any]] = {}  # handlers of evaluated arguments: (visitor, node, *args, **kwargs)


def _raw(name: str) -> Callable[[Handler], Handler]:
    def reg(fn: Handler) -> Handler:
        RAW[name] = fn
        return fn

    return reg


def _eval(*names: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    def reg(fn: Callable[..., Any]) -> Callable[..., Any]:
        for n in names:
            EVAL[n] = fn
        return fn

    return reg


class Grouped:
    """`qd.grouped(x)` inside a kernel: the loop binds its whole index as one vector."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner


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

    def call_args(self: Visitor, node: ast.Call) -> tuple[list[Any], dict[str, Any]]:
        args: list[Any] = []
        for a in node.args:
            if isinstance(a, ast.Starred):
                v = self.expr(a.value)
                args.extend(v.unpack_values() if isinstance(v, Matrix) else v)
            else:
                args.append(self.expr(a))
        kwargs: dict[str, Any] = {}
        for kw in node.keywords:
            if kw.arg is None:
                kwargs.update(self.expr(kw.value))
            else:
                kwargs[kw.arg] = self.expr(kw.value)
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
        args, kwargs = self.func_call_args(node, by_ref)
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

    def func_call_args(self: Visitor, node: ast.Call, by_ref: set[Any]) -> tuple[list[Any], dict[str, Any]]:
        """`call_args` for a qd.func: an argument bound to a template parameter that names a local variable or
        an element (`x`, `v`, `a[i]`, `v[1]`) is passed as that location (a `Var`, `MatVar` or `Alias`)."""
        if not by_ref:
            return self.call_args(node)
        args: list[Any] = []
        for k, a in enumerate(node.args):
            if isinstance(a, ast.Starred):
                v = self.expr(a.value)
                args.extend(v.unpack_values() if isinstance(v, Matrix) else v)
            else:
                args.append(self._reference_arg(a) if k in by_ref and len(args) == k else self.expr(a))
        kwargs: dict[str, Any] = {}
        for kw in node.keywords:
            if kw.arg is None:
                kwargs.update(self.expr(kw.value))
            else:
                kwargs[kw.arg] = self._reference_arg(kw.value) if kw.arg in by_ref else self.expr(kw.value)
        return args, kwargs

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


# ---- intrinsics ---------------------------------------------------------------------------------------


@_raw("static")
def _static(v: Visitor, node: ast.Call) -> Any:
    if node.keywords or not node.args:
        raise v.error(node, "qd.static takes one or more positional arguments")
    values = [v.static_eval(a) for a in node.args]
    return values[0] if len(values) == 1 else tuple(values)


@_raw("static_assert")
def _static_assert(v: Visitor, node: ast.Call) -> Any:
    cond = v.static_eval(node.args[0])
    if not cond:
        msg = v.static_eval(node.args[1]) if len(node.args) > 1 else "static assertion failed"
        raise v.error(node, str(msg), QuadrantsCompilationError)
    return None


@_eval("static_print")
def _static_print(v: Visitor, node: ast.Call, name: str, *args: Any, **kwargs: Any) -> None:
    print(*args, **kwargs)


@_eval("ndrange")
def _ndrange(v: Visitor, node: ast.Call, name: str, *dims: Any) -> Any:
    return _NdRange(*dims)


@_eval("grouped")
def _grouped(v: Visitor, node: ast.Call, name: str, x: Any) -> Any:
    return Grouped(x)


UNARY_MATH = ("sin", "cos", "tan", "asin", "acos", "atan", "tanh", "sqrt", "rsqrt", "exp", "log", "abs",
              "popcnt", "clz")  # fmt: skip


@_eval(*UNARY_MATH)
def _unary_math(v: Visitor, node: ast.Call, name: str, x: Any) -> Any:
    if isinstance(x, Matrix):
        return v.matrix_unary(lambda e: v.ops.unary(name, e, v.loc(node)), x)
    return v.ops.unary(name, x, v.loc(node))


@_eval("floor", "ceil", "round")
def _rounding(v: Visitor, node: ast.Call, name: str, x: Any, dtype: Any = None) -> Any:
    loc = v.loc(node)

    def one(e: Any) -> Any:
        r = v.ops.unary(name, e, loc)
        return v.ops.cast(r, dtype, loc) if dtype is not None else r

    return v.matrix_unary(one, x) if isinstance(x, Matrix) else one(x)


@_eval("min", "max")
def _minmax(v: Visitor, node: ast.Call, name: str, *args: Any) -> Any:
    return _fold(v, name, args, node)


def _fold(v: Visitor, op: str, args: Any, node: ast.Call) -> Any:
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        args = args[0]
    if len(args) < 2:
        raise v.error(node, f"{op}() needs at least two arguments")
    out = args[0]
    for a in args[1:]:
        if not is_runtime(out) and not is_runtime(a):
            out = builtins.min(out, a) if op == "min" else builtins.max(out, a)
        else:
            out = v.binary(op, out, a, node)
    return out


@_eval("pow", "atan2", "raw_div", "raw_mod")
def _binary_math(v: Visitor, node: ast.Call, name: str, a: Any, b: Any) -> Any:
    if not is_runtime(a) and not is_runtime(b) and name == "pow":
        return a**b
    return v.binary(name, a, b, node)


@_eval("select")
def _select(v: Visitor, node: ast.Call, name: str, cond: Any, a: Any, b: Any) -> Any:
    if not is_runtime(cond):
        return a if cond else b
    mc, ma, mb = v.as_matrix(cond, node), v.as_matrix(a, node), v.as_matrix(b, node)
    if mc is None and ma is None and mb is None:
        return v.ops.select(cond, a, b, v.loc(node))
    shape = (mc or ma or mb).shape  # type: ignore[union-attr]
    n = len((mc or ma or mb).elements)  # type: ignore[union-attr]

    def pick(m: Matrix | None, x: Any, i: int) -> Any:
        return m.elements[i] if m is not None else x

    return Matrix(
        shape, [v.ops.select(pick(mc, cond, i), pick(ma, a, i), pick(mb, b, i), v.loc(node)) for i in range(n)]
    )


@_eval("Vector")
def _vector(v: Visitor, node: ast.Call, name: str, items: Any, dt: Any = None, **_kw: Any) -> Any:
    return v.vector_from_list(items, dt, node)


@_eval("Matrix")
def _matrix(v: Visitor, node: ast.Call, name: str, rows: Any, dt: Any = None, **_kw: Any) -> Any:
    return v.matrix_from_rows(rows, dt, node)


@_eval("Vector.zero", "Vector.one", "Matrix.zero", "Matrix.one", "Matrix.identity")
def _filled(v: Visitor, node: ast.Call, name: str, dt: Any, n: int, m: int | None = None) -> Any:
    t = v.resolve_dt(dt)
    shape = (n,) if name.startswith("Vector") else (n, m if m is not None else n)
    size = n * (m if m is not None else (n if len(shape) == 2 else 1))
    if name == "Matrix.identity":
        vals = [1 if i == j else 0 for i in range(n) for j in range(n)]
    else:
        vals = [1 if name.endswith("one") else 0] * size
    return v.make_matrix(shape, vals, t, node)


@_eval("Matrix.rows", "Matrix.cols")
def _rows_cols(v: Visitor, node: ast.Call, name: str, items: Any) -> Any:
    m = v.matrix_from_rows(items, None, node)
    return m if name == "Matrix.rows" else v.transpose(m)


@_eval("cast")
def _cast(v: Visitor, node: ast.Call, name: str, x: Any, dtype: Any) -> Any:
    from quadrants.types.dtypes import to_dtype

    t = to_dtype(dtype, v.options.default_ip, v.options.default_fp)
    if isinstance(x, Matrix):
        return Matrix(x.shape, [v.ops.cast(e, t, v.loc(node)) for e in x.elements])
    return v.ops.cast(x, t, v.loc(node))


@_eval("bit_cast")
def _bit_cast(v: Visitor, node: ast.Call, name: str, x: Any, dtype: Any) -> Any:
    from quadrants.types.dtypes import to_dtype

    t = to_dtype(dtype)
    val = v.ops.value(x, v.loc(node))
    assert isinstance(val.type, PrimitiveType)
    if val.type.bits != t.bits:
        raise v.error(node, f"bit_cast needs types of equal width ({val.type} -> {t})", QuadrantsTypeError)
    return v.b.emit(ir.Cast(value=val, type=t, bitcast=True))


ATOMICS = {"atomic_add": "add", "atomic_sub": "sub", "atomic_min": "min", "atomic_max": "max",
           "atomic_and": "and", "atomic_or": "or", "atomic_xor": "xor", "atomic_mul": "mul",
           "atomic_exchange": "xchg"}  # fmt: skip


def _atomic_handler(intrinsic: str) -> Handler:
    def handler(v: Visitor, node: ast.Call) -> Any:
        if len(node.args) != 2:
            raise v.error(node, f"qd.{intrinsic} takes (target, value)")
        target, value_node = node.args
        ref = v.lvalue(target, intrinsic)
        return v.atomic_ref(ref, ATOMICS[intrinsic], v.expr(value_node), node)

    return handler


for _name in ATOMICS:
    RAW[_name] = _atomic_handler(_name)


@_raw("atomic_cas")
def _atomic_cas(v: Visitor, node: ast.Call) -> Any:
    """`qd.atomic_cas(target, expected, desired)`: stores `desired` where the target equals `expected`; the old
    value either way."""
    if len(node.args) != 3:
        raise v.error(node, "qd.atomic_cas takes (target, expected, desired)")
    ref = v.lvalue(node.args[0], "atomic_cas")
    if not isinstance(ref, ScalarRef):
        raise v.error(node, "qd.atomic_cas needs a scalar target (an element, not a vector)")
    loc = v.loc(node)
    expected = v.ops.cast(v.expr(node.args[1]), ref.dtype, loc)
    desired = v.ops.cast(v.expr(node.args[2]), ref.dtype, loc)
    return v.b.emit(ir.AtomicRMW(op="cas", ptr=ref.ptr, value=desired, expected=expected, type=ref.dtype))


LOOP_CONFIG = {"block_dim", "serialize", "parallelize", "block_dim_adaptive", "bit_vectorize", "name"}


@_raw("loop_config")
def _loop_config(v: Visitor, node: ast.Call) -> Any:
    """`qd.loop_config(serialize=True, block_dim=..., ...)`: settings of the next `for` (compile-time values).
    `serialize` (or `parallelize=1`) runs it serially; `block_dim` sets the GPU block size; the others are accepted
    (`parallelize=N` does not limit CPU threads here, `name` names nothing)."""
    if node.args:
        raise v.error(node, "qd.loop_config takes keyword arguments only")
    config: dict[str, Any] = {}
    for kw in node.keywords:
        if kw.arg not in LOOP_CONFIG:
            raise v.error(kw.value, f"qd.loop_config has no setting {kw.arg!r}; expected one of {sorted(LOOP_CONFIG)}")
        config[kw.arg] = v.static_eval(kw.value)
    block = config.get("block_dim")
    if block is not None and (not isinstance(block, int) or not 1 <= block <= 1024):
        raise v.error(node, f"qd.loop_config(block_dim={block!r}): expected 1 to 1024 threads per block")
    v.loop_config = config
    return None


@_raw("bit_shr")
def _bit_shr(v: Visitor, node: ast.Call) -> Any:
    """`qd.bit_shr(x, n)`: a logical right shift (zeros come in, also for signed integers)."""
    if len(node.args) != 2:
        raise v.error(node, "qd.bit_shr takes (x, n)")
    x, n = v.expr(node.args[0]), v.expr(node.args[1])
    return v.binary("lshr", x, n, node)


# ---- Python builtins ----------------------------------------------------------------------------------


def _b_int(v: Visitor, node: ast.Call, x: Any) -> Any:
    return v.ops.cast(x, v.options.default_ip, v.loc(node))


def _b_float(v: Visitor, node: ast.Call, x: Any) -> Any:
    return v.ops.cast(x, v.options.default_fp, v.loc(node))


def _b_bool(v: Visitor, node: ast.Call, x: Any) -> Any:
    return v.ops.cond(x, v.loc(node))


def _b_abs(v: Visitor, node: ast.Call, x: Any) -> Any:
    if isinstance(x, Matrix):
        return v.matrix_unary(lambda e: v.ops.unary("abs", e, v.loc(node)), x)
    return v.ops.unary("abs", x, v.loc(node))


def _b_min(v: Visitor, node: ast.Call, *args: Any) -> Any:
    return _fold(v, "min", args, node)


def _b_max(v: Visitor, node: ast.Call, *args: Any) -> Any:
    return _fold(v, "max", args, node)


def _b_pow(v: Visitor, node: ast.Call, a: Any, b: Any) -> Any:
    return v.binary("pow", a, b, node)


def _b_len(v: Visitor, node: ast.Call, x: Any) -> Any:
    if isinstance(x, Matrix):
        return x.n
    raise v.error(node, "len() of a runtime value")


def _b_all_any(op: str) -> Callable[..., Any]:
    """`all(v)` / `any(v)` of a runtime vector: its elements as conditions, folded with and / or (a u1)."""

    def fold(v: Visitor, node: ast.Call, x: Any) -> Any:
        if not isinstance(x, Matrix):
            raise v.error(node, f"{'all' if op == 'and' else 'any'}() needs a vector or a compile-time iterable")
        loc = v.loc(node)
        out = v.ops.cond(x.elements[0], loc)
        for e in x.elements[1:]:
            out = v.ops.binary(op, out, v.ops.cond(e, loc), loc)
        return out

    return fold


def _b_range(v: Visitor, node: ast.Call, *args: Any) -> Any:
    raise v.error(node, "range() with runtime bounds can only be used as the iterable of a for loop")


BUILTINS: dict[int, Callable[..., Any]] = {
    id(builtins.int): _b_int, id(builtins.float): _b_float, id(builtins.bool): _b_bool,
    id(builtins.abs): _b_abs, id(builtins.min): _b_min, id(builtins.max): _b_max, id(builtins.pow): _b_pow,
    id(builtins.len): _b_len, id(builtins.range): _b_range, id(builtins.all): _b_all_any("and"),
    id(builtins.any): _b_all_any("or"),
}  # fmt: skip


__all__ = ["CallMixin", "Grouped", "RAW", "EVAL", "QuadrantsSyntaxError"]
