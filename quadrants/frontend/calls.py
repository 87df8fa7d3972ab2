"""Calls inside kernels: dispatch to intrinsics and Python builtins (their handlers are tables in
`intrinsic_calls.py`), vector/matrix constructors and methods, dtype casts (`qd.f32(x)`), `print`, `qd.func`
inlining (`inlining.py`) and `qd.real_func` calls (`real_funcs.py`), a field's `fill` (a loop: `loops.fill_field`).
Any other Python function runs at compile time on compile-time arguments; one of the user's called with
runtime values is inlined like a qd.func (lambdas too), as Quadrants runs it on its symbolic values.
"""

from __future__ import annotations

import ast
import builtins
import types
import weakref
from collections.abc import ValuesView
from typing import Any

from quadrants.errors import QuadrantsCompilationError, QuadrantsTypeError
from quadrants.frontend import sparse, structs, views
from quadrants.frontend.arguments import call_args
from quadrants.frontend.builder import FrontendBuilder
from quadrants.frontend.expressions import struct_attribute
from quadrants.frontend.func import BoundFunc, Func
from quadrants.frontend.inlining import inline
from quadrants.frontend.intrinsic_calls import BUILTINS, EVAL, RAW
from quadrants.frontend.loops import fill_field
from quadrants.frontend.lvalues import lvalue, store_ref
from quadrants.frontend.matrix_ops import matrix_index, matrix_method
from quadrants.frontend.ndarrays import is_field
from quadrants.frontend.ops import is_static_number
from quadrants.frontend.printing import format_call, print_call
from quadrants.frontend.real_funcs import call_real
from quadrants.frontend.records import StaticCall
from quadrants.frontend.source import read_function, read_lambda
from quadrants.frontend.values import Matrix, Struct, is_runtime
from quadrants.frontend.vectors import as_matrix, construct
from quadrants.types.compound import MatrixType
from quadrants.types.dtypes import PrimitiveType
from quadrants.types.struct import StructType


def _holds_runtime(x: Any) -> bool:
    """A compile-time container (list, tuple, a dict's values) holding a runtime value: `sum([a, b])`."""
    return isinstance(x, (list, tuple, ValuesView)) and any(is_runtime(v) for v in x)


def transform_call(fb: FrontendBuilder, node: ast.Call) -> Any:
    if isinstance(node.func, ast.Attribute):
        if node.func.attr in sparse.LIST_METHODS and isinstance(node.func.value, (ast.Subscript, ast.Name)):
            handled = sparse.list_method(fb, node)  # `x[i].append(v)` of a field placed in a dynamic node
            if handled is not sparse.NOT_A_LIST:
                return handled
        base = fb.expr(node.func.value)
        if isinstance(base, Matrix):
            return method_call(fb, base, node.func.attr, node)
        if isinstance(base, views.View):
            return views.method(fb, base, node.func.attr, *call_args(fb, node), node)
        if is_runtime(base):
            raise fb.error(node, f"runtime values have no method {node.func.attr!r}")
        if hasattr(base, "__qd_matrix__") and not hasattr(base, node.func.attr):
            # a Python-scope vector (a `qd.static(qd.grouped(...))` index) with a kernel-only method: `.cast()`
            converted = as_matrix(fb, base, node.func.value)
            assert converted is not None
            return method_call(fb, converted, node.func.attr, node)
        if isinstance(base, str) and node.func.attr == "format":
            return format_call(fb, base, node)
        if node.func.attr == "fill" and is_field(base):
            return fill_field(fb, base, node)
        if node.func.attr == "fill" and structs.is_struct_field(base):
            raise fb.error(node, "a struct field's fill() is Python-scope only (as in Quadrants); fill its members")
        if isinstance(base, Struct):
            fn = struct_attribute(fb, base, node.func.attr, node.func)
        else:
            try:
                fn = getattr(base, node.func.attr)
            except AttributeError as e:
                raise fb.error(node.func, f"AttributeError: {e}", QuadrantsCompilationError) from None
    else:
        fn = fb.expr(node.func)
    if isinstance(fn, MatrixType):
        args, _ = call_args(fb, node)
        return construct(fb, fn, args, node)
    if isinstance(fn, Matrix):  # `v(0)`, `m(i, j)`: the old spelling of `v[0]`, which Quadrants still accepts
        args, _ = call_args(fb, node)
        return matrix_index(fb, fn, args[0] if len(args) == 1 else tuple(args), node)
    if isinstance(fn, StructType):
        return structs.construct(fb, fn, *call_args(fb, node), node)
    name = getattr(fn, "__qd_intrinsic__", None)
    if name == "Struct":  # qd.Struct(a=..., b=...)
        return structs.anonymous(fb, *call_args(fb, node), node)
    if name is not None:
        if name in RAW:
            return RAW[name](fb, node)
        args, kwargs = call_args(fb, node)
        return EVAL[name](fb, node, name, *args, **kwargs)
    if isinstance(fn, Func):
        return call_real(fb, fn, None, node) if fn.is_real else inline(fb, fn, None, node)
    if isinstance(fn, BoundFunc):
        return call_real(fb, fn.func, fn.obj, node) if fn.func.is_real else inline(fb, fn.func, fn.obj, node)
    if isinstance(fn, PrimitiveType):
        return dtype_call(fb, fn, node)
    if getattr(fn, "__qd_kernel__", False):
        raise fb.error(node, "a kernel cannot be called from a kernel or qd.func; make it a qd.func")
    if fn is builtins.print:
        return print_call(fb, node)
    handler = BUILTINS.get(id(fn))
    args, kwargs = call_args(fb, node)
    if handler is not None and any(is_runtime(a) or _holds_runtime(a) for a in args):
        return handler(fb, node, *args, **kwargs)
    if any(is_runtime(a) for a in args) or any(is_runtime(v) for v in kwargs.values()):
        # `self.helper(x)` of a data_oriented object: inlined with `self` bound to it
        if isinstance(fn, types.MethodType) and getattr(type(fn.__self__), "_qd_data_oriented", False):
            as_method = python_func(fn.__func__)
            if as_method is not None:
                return inline(fb, as_method, fn.__self__, node)
        as_func = python_func(fn)
        if as_func is not None:  # Quadrants runs it on its symbolic values: inlined like a qd.func here
            return inline(fb, as_func, None, node)
        fname = getattr(fn, "__name__", repr(fn))
        raise fb.error(node, f"cannot call the Python function {fname!r} with runtime values; make it a @qd.func")
    fb.static_calls.append(StaticCall(fn, fb.loc(node)))
    try:
        return fn(*args, **kwargs)
    except QuadrantsCompilationError:
        raise
    except Exception as e:
        raise fb.error(node, f"{type(e).__name__}: {e}", QuadrantsCompilationError) from None


_PYTHON_FUNCS: weakref.WeakKeyDictionary[Any, Func] = weakref.WeakKeyDictionary()


def python_func(fn: Any) -> Func | None:
    """A plain Python function or lambda of the user's (not of a library) as a `Func` to inline, or None when
    it is something else or its source cannot be read. Quadrants calls such a function on its symbolic
    values, so its arithmetic and qd.* calls become the kernel's code: inlining its source does the same."""
    if not isinstance(fn, types.FunctionType) or fn.__module__.split(".")[0] in _LIBRARIES:
        return None
    made = _PYTHON_FUNCS.get(fn)
    if made is None:
        made = Func(fn)
        try:
            made._source = read_lambda(fn) if fn.__name__ == "<lambda>" else read_function(fn, "func")
        except QuadrantsCompilationError:
            return None
        _PYTHON_FUNCS[fn] = made
    return made


_LIBRARIES = frozenset({"quadrants", "numpy", "math", "cmath", "builtins", "torch"})


def method_call(fb: FrontendBuilder, base: Matrix, attr: str, node: ast.Call) -> Any:
    if attr == "fill":
        assert isinstance(node.func, ast.Attribute)
        ref = lvalue(fb, node.func.value, "fill")
        value = fb.expr(node.args[0])
        store_ref(fb, ref, Matrix(base.shape, [value] * len(base.elements)), node)
        return None
    args, kwargs = call_args(fb, node)
    return matrix_method(fb, base, attr, args, kwargs, node)


def dtype_call(fb: FrontendBuilder, dtype: PrimitiveType, node: ast.Call) -> Any:
    """`qd.f32(x)`: a typed literal, or a cast of a runtime value."""
    args, kwargs = call_args(fb, node)
    if len(args) != 1 or kwargs:
        raise fb.error(node, f"A primitive type can only decorate a single expression. ({dtype}() takes one argument)")
    (x,) = args
    if isinstance(x, Matrix):  # as in Quadrants; `qd.cast(v, dtype)` casts a vector element-wise
        raise fb.error(node, "A primitive type cannot decorate an expression with a compound type. "
                             f"Use qd.cast(value, qd.{dtype}) to cast a vector or matrix.")  # fmt: skip
    if is_static_number(x):
        if isinstance(x, float) and not dtype.is_float:
            raise fb.error(
                node,
                "Floating-point literals must be annotated with a floating-point type. For type casting, "
                "use `qd.cast`.",
                QuadrantsTypeError,
            )
        if isinstance(x, int) and not isinstance(x, bool) and dtype.is_float:
            raise fb.error(
                node,
                "Integer literals must be annotated with a integer type. For type casting, use `qd.cast`.",
                QuadrantsTypeError,
            )
        if dtype.is_integral and dtype.kind != "bool":
            lo, hi = dtype.min_max()
            if not lo <= int(x) <= hi:
                raise fb.error(node, f"{x} exceeded the range of specified dtype {dtype}", QuadrantsTypeError)
        return fb.b.const(int(x) if dtype.is_integral else float(x), dtype)
    return fb.ops.cast(x, dtype, fb.loc(node))
