"""The handlers of intrinsics (`qd.sin`, `qd.atomic_add`, `qd.loop_config`, ...) and Python builtins called in
kernels, by the `__qd_intrinsic__` name of the called object (so `qd.sin`, `qd.math.sin` and a user's
`from quadrants import sin` reach the same code). `calls.CallMixin` dispatches to them.

RAW handlers read their argument nodes themselves; EVAL handlers get evaluated arguments.
"""

from __future__ import annotations

import ast
import builtins
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from quadrants.errors import QuadrantsCompilationError, QuadrantsTypeError
from quadrants.frontend.expressions import is_runtime
from quadrants.frontend.intrinsics import _NdRange
from quadrants.frontend.lvalues import ScalarRef
from quadrants.frontend.values import Matrix
from quadrants.ir import nodes as ir
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


__all__ = ["Grouped", "RAW", "EVAL", "BUILTINS"]
