"""The handlers of intrinsics (`qd.sin`, `qd.atomic_add`, `qd.loop_config`, ...) and Python builtins called in
kernels, by the `__qd_intrinsic__` name of the called object (so `qd.sin`, `qd.math.sin` and a user's
`from quadrants import sin` reach the same code). `calls.transform_call` dispatches to them; the tables are
literals at the end of this module.

RAW handlers read their argument nodes themselves; EVAL handlers get evaluated arguments.
"""

from __future__ import annotations

import ast
import builtins
import math
import operator
from collections.abc import Callable
from typing import Any

from quadrants.errors import QuadrantsCompilationError, QuadrantsSyntaxError, QuadrantsTypeError
from quadrants.frontend import mesh, sparse, tiles, views
from quadrants.frontend.builder import FrontendBuilder
from quadrants.frontend.intrinsics import _NdRange
from quadrants.frontend.lvalues import atomic_ref, lvalue
from quadrants.frontend.matrix_ops import matmul, transpose
from quadrants.frontend.ndarrays import stop_grad
from quadrants.frontend.operators import binary, matrix_unary, unary
from quadrants.frontend.refs import ScalarRef
from quadrants.frontend.simt_calls import SIMT_EVAL
from quadrants.frontend.static_eval import static_eval
from quadrants.frontend.values import Matrix, is_runtime
from quadrants.frontend.vectors import as_matrix, make_matrix, matrix_from_rows, resolve_dt, vector_from_list
from quadrants.ir import nodes as ir
from quadrants.types.dtypes import PrimitiveType, f32, f64, i32, to_dtype, u64

Handler = Callable[[FrontendBuilder, ast.Call], Any]


class Grouped:
    """`qd.grouped(x)` inside a kernel: the loop binds its whole index as one vector."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner


# ---- intrinsics ---------------------------------------------------------------------------------------


def _static(fb: FrontendBuilder, node: ast.Call) -> Any:
    if node.keywords or not node.args:
        raise fb.error(node, "qd.static takes one or more positional arguments")
    values = [static_eval(fb, a) for a in node.args]
    return values[0] if len(values) == 1 else tuple(values)


def _static_assert(fb: FrontendBuilder, node: ast.Call) -> Any:
    if not node.args:
        raise fb.error(node, "qd.static_assert takes a condition and an optional message")
    try:
        cond = static_eval(fb, node.args[0])
    except QuadrantsTypeError as e:  # a run-time value in the condition: Quadrants' words first
        raise fb.error(node.args[0], f"Static assert with non-static condition ({e.message.strip()})",
                       QuadrantsTypeError) from None  # fmt: skip
    if not cond:
        msg = static_eval(fb, node.args[1]) if len(node.args) > 1 else "static assertion failed"
        raise fb.error(node, str(msg), QuadrantsCompilationError)
    return None


def _static_print(fb: FrontendBuilder, node: ast.Call, name: str, *args: Any, **kwargs: Any) -> None:
    print(*args, **kwargs)


def _ndrange(fb: FrontendBuilder, node: ast.Call, name: str, *dims: Any, axes: Any = None) -> Any:
    try:
        return _NdRange(*dims, axes=axes)
    except (QuadrantsSyntaxError, QuadrantsTypeError) as e:
        raise fb.error(node, str(e), type(e)) from None


def _grouped(fb: FrontendBuilder, node: ast.Call, name: str, x: Any) -> Any:
    return Grouped(x)


UNARY_MATH = ("sin", "cos", "tan", "asin", "acos", "atan", "tanh", "sqrt", "rsqrt", "exp", "log", "abs",
              "popcnt", "clz", "ffs")  # fmt: skip


def _unary_math(fb: FrontendBuilder, node: ast.Call, name: str, x: Any) -> Any:
    if isinstance(x, Matrix):
        return matrix_unary(lambda e: fb.ops.unary(name, e, fb.loc(node)), x)
    return fb.ops.unary(name, x, fb.loc(node))


def _rounding(fb: FrontendBuilder, node: ast.Call, name: str, x: Any, dtype: Any = None) -> Any:
    loc = fb.loc(node)
    if dtype is not None:  # `qd.floor(x, int)`: Python's int and float are the defaults
        dtype = to_dtype(dtype, fb.options.default_ip, fb.options.default_fp)

    def one(e: Any) -> Any:
        r = fb.ops.unary(name, e, loc)
        return fb.ops.cast(r, dtype, loc) if dtype is not None else r

    return matrix_unary(one, x) if isinstance(x, Matrix) else one(x)


def _minmax(fb: FrontendBuilder, node: ast.Call, name: str, *args: Any) -> Any:
    return _fold(fb, name, args, node)


def _fold(fb: FrontendBuilder, op: str, args: Any, node: ast.Call) -> Any:
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        args = args[0]
    if len(args) < 2:
        raise fb.error(node, f"{op}() needs at least two arguments")
    out = args[0]
    for a in args[1:]:
        if not is_runtime(out) and not is_runtime(a):
            out = builtins.min(out, a) if op == "min" else builtins.max(out, a)
        else:
            out = binary(fb, op, out, a, node)
    return out


def _binary_math(fb: FrontendBuilder, node: ast.Call, name: str, a: Any, b: Any) -> Any:
    if not is_runtime(a) and not is_runtime(b) and name == "pow":
        return a**b
    return binary(fb, name, a, b, node)


def _select(fb: FrontendBuilder, node: ast.Call, name: str, cond: Any, a: Any, b: Any) -> Any:
    if not is_runtime(cond):
        return a if cond else b
    mc, ma, mb = as_matrix(fb, cond, node), as_matrix(fb, a, node), as_matrix(fb, b, node)
    if mc is None and ma is None and mb is None:
        return fb.ops.select(cond, a, b, fb.loc(node))
    shape = (mc or ma or mb).shape  # type: ignore[union-attr]
    n = len((mc or ma or mb).elements)  # type: ignore[union-attr]

    def pick(m: Matrix | None, x: Any, i: int) -> Any:
        return m.elements[i] if m is not None else x

    return Matrix(
        shape, [fb.ops.select(pick(mc, cond, i), pick(ma, a, i), pick(mb, b, i), fb.loc(node)) for i in range(n)]
    )


def _vector(fb: FrontendBuilder, node: ast.Call, name: str, items: Any, dt: Any = None, **_kw: Any) -> Any:
    return vector_from_list(fb, items, dt, node)


def _matrix(fb: FrontendBuilder, node: ast.Call, name: str, rows: Any, dt: Any = None, **_kw: Any) -> Any:
    return matrix_from_rows(fb, rows, dt, node)


def _filled(fb: FrontendBuilder, node: ast.Call, name: str, dt: Any, n: int, m: int | None = None) -> Any:
    t = resolve_dt(fb, dt)
    shape = (n,) if name.startswith("Vector") else (n, m if m is not None else n)
    size = n * (m if m is not None else (n if len(shape) == 2 else 1))
    if name == "Matrix.identity":
        vals = [1 if i == j else 0 for i in range(n) for j in range(n)]
    else:
        vals = [1 if name.endswith("one") else 0] * size
    return make_matrix(fb, shape, vals, t, node)


def _diag(fb: FrontendBuilder, node: ast.Call, name: str, dim: int, val: Any) -> Any:
    """`qd.Matrix.diag(dim, val)`: val on the diagonal of a dim x dim matrix, zeros of its type elsewhere."""
    zero = binary(fb, "mul", val, 0, node)
    return matrix_from_rows(fb, [[val if i == j else zero for j in range(dim)] for i in range(dim)], None, node)


def _unit(fb: FrontendBuilder, node: ast.Call, name: str, n: int, i: int, dt: Any = None) -> Any:
    """`qd.Vector.unit(n, i, dt)`: the i-th unit vector (integers by default, as in Quadrants)."""
    if not 0 <= i < n:
        raise fb.error(node, f"unit vector index {i} is out of range for a {n}-vector")
    t = resolve_dt(fb, dt if dt is not None else int)
    return make_matrix(fb, (n,), [1 if k == i else 0 for k in range(n)], t, node)


def _zero_one(fb: FrontendBuilder, node: ast.Call, name: str, x: Any) -> Any:
    """`qd.zero(x)` / `qd.one(x)`: zeros (ones) of x's type and shape."""
    z = binary(fb, "mul", x, 0, node)
    return z if name == "zero" else binary(fb, "add", z, 1, node)


def _rows_cols(fb: FrontendBuilder, node: ast.Call, name: str, items: Any) -> Any:
    m = matrix_from_rows(fb, items, None, node)
    return m if name == "Matrix.rows" else transpose(m)


def _cast(fb: FrontendBuilder, node: ast.Call, name: str, x: Any, dtype: Any) -> Any:
    t = to_dtype(dtype, fb.options.default_ip, fb.options.default_fp)
    if isinstance(x, Matrix):
        return Matrix(x.shape, [fb.ops.cast(e, t, fb.loc(node)) for e in x.elements])
    return fb.ops.cast(x, t, fb.loc(node))


def _bit_cast(fb: FrontendBuilder, node: ast.Call, name: str, x: Any, dtype: Any) -> Any:
    t = to_dtype(dtype)
    val = fb.ops.value(x, fb.loc(node))
    assert isinstance(val.type, PrimitiveType)
    if val.type.bits != t.bits:
        raise fb.error(node, f"bit_cast needs types of equal width ({val.type} -> {t})", QuadrantsTypeError)
    return fb.b.emit(ir.Cast(value=val, type=t, bitcast=True))


def _scalar_dtype(fb: FrontendBuilder, dtype: Any) -> PrimitiveType | None:
    try:
        return to_dtype(dtype, fb.options.default_ip, fb.options.default_fp)
    except (TypeError, ValueError, KeyError):
        return None


def _random(fb: FrontendBuilder, node: ast.Call, name: str, dtype: Any = float) -> Any:
    """`qd.random(dtype=float)`: floats uniform in [0, 1), integers uniform over the type's range (`float` and
    `int` are the default types). passes/random_streams.py gives each draw its place in the counter-based
    stream."""
    if any(fr.real is not None for fr in fb.frames):
        raise fb.error(node, "qd.random() inside a qd.real_func is not supported yet: draw in the calling kernel "
                             "or qd.func and pass the value")  # fmt: skip
    t = _scalar_dtype(fb, dtype)
    if t is None or t not in ir.RANDOM_TYPES:
        names = ", ".join(sorted(x.name for x in ir.RANDOM_TYPES))
        raise fb.error(node, f"qd.random() cannot draw a {getattr(t, 'name', dtype)!r}: expected one of {names}",
                       QuadrantsTypeError)  # fmt: skip
    return fb.b.emit(ir.Random(type=t))


def _randn(fb: FrontendBuilder, node: ast.Call, name: str, dt: Any = None) -> Any:
    """`qd.randn(dt=None)`: a standard normal value (Box-Muller on two draws, as Quadrants' `_randn`)."""
    t = fb.options.default_fp if dt is None else _scalar_dtype(fb, dt)
    if t not in (f32, f64):
        raise fb.error(node, f"qd.randn() draws f32 or f64, not {t or dt!r}", QuadrantsTypeError)
    loc, ops = fb.loc(node), fb.ops
    u1 = ops.binary("sub", ops.cast(1.0, t, loc), _random(fb, node, "random", t), loc)
    u2 = _random(fb, node, "random", t)
    r = ops.unary("sqrt", ops.binary("mul", -2, ops.unary("log", u1, loc), loc), loc)
    return ops.binary("mul", r, ops.unary("cos", ops.binary("mul", math.tau, u2, loc), loc), loc)


ATOMICS = {"atomic_add": "add", "atomic_sub": "sub", "atomic_min": "min", "atomic_max": "max",
           "atomic_and": "and", "atomic_or": "or", "atomic_xor": "xor", "atomic_mul": "mul",
           "atomic_exchange": "xchg"}  # fmt: skip


def _atomic_handler(intrinsic: str) -> Handler:
    def handler(fb: FrontendBuilder, node: ast.Call) -> Any:
        if len(node.args) != 2:
            raise fb.error(node, f"qd.{intrinsic} takes (target, value)")
        target, value_node = node.args
        ref = lvalue(fb, target, intrinsic)
        return atomic_ref(fb, ref, ATOMICS[intrinsic], fb.expr(value_node), node)

    return handler


def _atomic_cas(fb: FrontendBuilder, node: ast.Call) -> Any:
    """`qd.atomic_cas(target, expected, desired)`: stores `desired` where the target equals `expected`; the old
    value either way."""
    if len(node.args) != 3:
        raise fb.error(node, "qd.atomic_cas takes (target, expected, desired)")
    ref = lvalue(fb, node.args[0], "atomic_cas")
    if not isinstance(ref, ScalarRef):
        raise fb.error(node, "qd.atomic_cas needs a scalar target (an element, not a vector)")
    loc = fb.loc(node)
    expected = fb.ops.cast(fb.expr(node.args[1]), ref.dtype, loc)
    desired = fb.ops.cast(fb.expr(node.args[2]), ref.dtype, loc)
    return fb.b.emit(ir.AtomicRMW(op="cas", ptr=ref.ptr, value=desired, expected=expected, type=ref.dtype))


def _volatile_load(fb: FrontendBuilder, node: ast.Call) -> Any:
    """`qd.volatile_load(x[i])`: the element of a field or ndarray loaded volatile (each call reads memory again:
    spin-waits on flags other threads set); a vector or matrix element loads each component so."""
    from quadrants.frontend.lvalues import resolve_ref
    from quadrants.frontend.ndarrays import is_field

    if len(node.args) != 1 or node.keywords:
        raise fb.error(node, "qd.volatile_load() takes one argument, an element such as x[i]")
    arg = node.args[0]
    if not isinstance(arg, (ast.Name, ast.Subscript, ast.Attribute)):
        raise fb.error(arg, "qd.volatile_load() takes an lvalue: an element of a field or ndarray, such as x[i]")
    if isinstance(arg, (ast.Name, ast.Attribute)) and is_field(fb.expr(arg)):
        raise fb.error(arg, "qd.volatile_load() cannot take a Field directly: load one of its elements, x[i]")
    ref = resolve_ref(fb, arg)
    refs = [ref] if isinstance(ref, ScalarRef) else getattr(ref, "refs", None)
    if not refs or not all(isinstance(r, ScalarRef) for r in refs):
        raise fb.error(arg, "qd.volatile_load() takes an element of a field or ndarray")
    if any(r.var is not None for r in refs):  # a local variable or local vector: no other thread sees it
        raise fb.error(arg, "qd.volatile_load() of a local array or variable: only field and ndarray elements "
                            "(memory other threads write) can be loaded volatile", QuadrantsTypeError)  # fmt: skip
    loc = fb.loc(node)
    values = [fb.b.emit(ir.Load(ptr=r.ptr, type=r.dtype, volatile=True, loc=loc)) for r in refs]
    return values[0] if isinstance(ref, ScalarRef) else Matrix(ref.shape, values)  # type: ignore[union-attr]


LOOP_CONFIG = {"block_dim", "serialize", "parallelize", "block_dim_adaptive", "bit_vectorize", "name"}


def _loop_config(fb: FrontendBuilder, node: ast.Call) -> Any:
    """`qd.loop_config(serialize=True, block_dim=..., ...)`: settings of the next `for` (compile-time values).
    `serialize` (or `parallelize=1`) runs it serially; `block_dim` sets the GPU block size; the others are accepted
    (`parallelize=N` does not limit CPU threads here, `name` names nothing)."""
    if node.args:
        raise fb.error(node, "qd.loop_config takes keyword arguments only")
    config: dict[str, Any] = {}
    for kw in node.keywords:
        if kw.arg not in LOOP_CONFIG:
            raise fb.error(kw.value, f"qd.loop_config has no setting {kw.arg!r}; expected one of {sorted(LOOP_CONFIG)}")
        config[kw.arg] = static_eval(fb, kw.value)
    block = config.get("block_dim")
    if block is not None and (not isinstance(block, int) or not 1 <= block <= 1024):
        raise fb.error(node, f"qd.loop_config(block_dim={block!r}): expected 1 to 1024 threads per block")
    fb.loop_config = config
    return None


def _bit_shr(fb: FrontendBuilder, node: ast.Call) -> Any:
    """`qd.bit_shr(x, n)`: a logical right shift (zeros come in, also for signed integers)."""
    if len(node.args) != 2:
        raise fb.error(node, "qd.bit_shr takes (x, n)")
    x, n = fb.expr(node.args[0]), fb.expr(node.args[1])
    return binary(fb, "lshr", x, n, node)


# ---- Python builtins ----------------------------------------------------------------------------------


def _b_int(fb: FrontendBuilder, node: ast.Call, x: Any) -> Any:
    if isinstance(x, Matrix):  # element by element, as Quadrants casts a vector
        return Matrix(x.shape, [fb.ops.cast(e, fb.options.default_ip, fb.loc(node)) for e in x.elements])
    return fb.ops.cast(x, fb.options.default_ip, fb.loc(node))


def _b_float(fb: FrontendBuilder, node: ast.Call, x: Any) -> Any:
    if isinstance(x, Matrix):
        return Matrix(x.shape, [fb.ops.cast(e, fb.options.default_fp, fb.loc(node)) for e in x.elements])
    return fb.ops.cast(x, fb.options.default_fp, fb.loc(node))


def _b_bool(fb: FrontendBuilder, node: ast.Call, x: Any) -> Any:
    return fb.ops.cond(x, fb.loc(node))


def _b_abs(fb: FrontendBuilder, node: ast.Call, x: Any) -> Any:
    if isinstance(x, Matrix):
        return matrix_unary(lambda e: fb.ops.unary("abs", e, fb.loc(node)), x)
    return fb.ops.unary("abs", x, fb.loc(node))


def _b_min(fb: FrontendBuilder, node: ast.Call, *args: Any) -> Any:
    return _fold(fb, "min", args, node)


def _b_max(fb: FrontendBuilder, node: ast.Call, *args: Any) -> Any:
    return _fold(fb, "max", args, node)


def _b_pow(fb: FrontendBuilder, node: ast.Call, a: Any, b: Any) -> Any:
    return binary(fb, "pow", a, b, node)


def _b_len(fb: FrontendBuilder, node: ast.Call, x: Any) -> Any:
    if isinstance(x, Matrix):
        return x.n
    if isinstance(x, (list, tuple, dict)):  # a Python container of runtime values: its length is known
        return len(x)
    raise fb.error(node, "len() of a runtime value")


def _b_all_any(op: str) -> Callable[..., Any]:
    """`all(v)` / `any(v)` of a runtime vector: its elements as conditions, folded with and / or (a u1)."""

    def fold(fb: FrontendBuilder, node: ast.Call, x: Any) -> Any:
        if not isinstance(x, Matrix):
            raise fb.error(node, f"{'all' if op == 'and' else 'any'}() needs a vector or a compile-time iterable")
        loc = fb.loc(node)
        out = fb.ops.cond(x.elements[0], loc)
        for e in x.elements[1:]:
            out = fb.ops.binary(op, out, fb.ops.cond(e, loc), loc)
        return out

    return fold


def _b_sum(fb: FrontendBuilder, node: ast.Call, items: Any, start: Any = 0) -> Any:
    """`sum(xs, start=0)` of a compile-time iterable of runtime values (a list, `d.values()`) or of a runtime
    vector's elements: added in order, from `start`."""
    m = items if isinstance(items, Matrix) else None
    values = m.elements if m is not None else list(items)
    loc = fb.loc(node)
    out = start
    for v in values:
        out = fb.ops.binary("add", out, v, loc)
    return out


def _b_range(fb: FrontendBuilder, node: ast.Call, *args: Any) -> Any:
    """`range(3)` with constant bounds is a Python range (list comprehensions unroll over it)."""
    if all(isinstance(a, int) and not isinstance(a, bool) for a in args):
        return range(*args)
    raise fb.error(node, "range() with runtime bounds can only be used as the iterable of a for loop")


def _op_binary(op: str) -> Callable[..., Any]:
    def handle(fb: FrontendBuilder, node: ast.Call, a: Any, b: Any) -> Any:
        return binary(fb, op, a, b, node)

    return handle


def _op_unary(op: ast.unaryop) -> Callable[..., Any]:
    def handle(fb: FrontendBuilder, node: ast.Call, v: Any) -> Any:
        if isinstance(v, Matrix):
            return matrix_unary(lambda e: unary(fb, op, e, node), v)
        return unary(fb, op, v, node)

    return handle


def _op_matmul(fb: FrontendBuilder, node: ast.Call, a: Any, b: Any) -> Any:
    return matmul(fb, a, b, node)


# `operator.add(a, b)` and the other functions of the operator module, called on runtime values (a Python
# function passed as a template argument, as Quadrants' tests do): the operator they name. (The in-place forms
# are left out: in Quadrants they are atomics on their first operand.)
_OPERATOR_BINARY = {
    "add": "add", "sub": "sub", "mul": "mul", "truediv": "truediv", "floordiv": "floordiv", "mod": "mod",
    "pow": "pow", "and_": "and", "or_": "or", "xor": "xor", "lshift": "shl", "rshift": "shr",
    "lt": "lt", "le": "le", "gt": "gt", "ge": "ge", "eq": "eq", "ne": "ne",
}  # fmt: skip
OPERATORS: dict[int, Callable[..., Any]] = {
    **{id(getattr(operator, f)): _op_binary(op) for f, op in _OPERATOR_BINARY.items()},
    id(operator.matmul): _op_matmul,
    id(operator.neg): _op_unary(ast.USub()), id(operator.pos): _op_unary(ast.UAdd()),
    id(operator.invert): _op_unary(ast.Invert()), id(operator.not_): _op_unary(ast.Not()),
    id(operator.abs): _b_abs,
}  # fmt: skip

BUILTINS: dict[int, Callable[..., Any]] = {
    id(builtins.int): _b_int, id(builtins.float): _b_float, id(builtins.bool): _b_bool,
    id(builtins.abs): _b_abs, id(builtins.min): _b_min, id(builtins.max): _b_max, id(builtins.pow): _b_pow,
    id(builtins.len): _b_len, id(builtins.range): _b_range, id(builtins.all): _b_all_any("and"),
    id(builtins.any): _b_all_any("or"), id(builtins.sum): _b_sum, **OPERATORS,
}  # fmt: skip


def _block_local(fb: FrontendBuilder, node: ast.Call, name: str, *fields: Any) -> None:
    """`qd.block_local(x, ...)`: a hint that a GPU block caches these fields in shared memory; the code is the
    same without it (as on Quadrants' CPU backend), so it changes nothing here."""
    from quadrants.frontend.ndarrays import is_field

    if not all(is_field(f) for f in fields):
        raise fb.error(node, "qd.block_local() takes fields")


def _hint_snodes(fb: FrontendBuilder, node: ast.Call, name: str, *nodes: Any) -> None:
    """`qd.no_activate(snode, ...)`: Quadrants' promise that the kernel's accesses under these nodes find their
    cells active, so it skips activating; writes activate here regardless (the same results when kept)."""
    from quadrants.frontend.ndarrays import is_field

    if not all(is_field(n) or hasattr(n, "children") for n in nodes):
        raise fb.error(node, f"qd.{name}() takes SNodes or fields")


def _get_addr(fb: FrontendBuilder, node: ast.Call, name: str, f: Any, indices: Any) -> Any:
    """`qd.get_addr(field, [i, j])`: the address of element `f[i, j]` (its first component) as a u64."""
    from quadrants.frontend.ndarrays import element_ptrs_at, is_field, ndarray_handle  # (it imports this module)

    if not is_field(f):
        raise fb.error(node, "qd.get_addr() takes a field and a list of indices")
    parts = indices.elements if isinstance(indices, Matrix) else list(indices) if isinstance(indices, (list, tuple)) \
        else [indices]  # fmt: skip
    loc = fb.loc(node)
    values = [fb.b.cast(fb.ops.value(p, loc), i32) for p in parts]
    where = ast.copy_location(ast.Subscript(value=node.args[0], slice=node.args[1], ctx=ast.Load()), node)
    ptr = element_ptrs_at(fb, ndarray_handle(fb, f), values, where)[0]
    return fb.b.emit(ir.Addr(ptr=ptr, type=u64))


def _hinted_value(fb: FrontendBuilder, node: ast.Call, name: str, val: Any, *hints: Any, **kw: Any) -> Any:
    """`qd.loop_unique(v, covers=None)`, `qd.assume_in_range(v, base, low, high)`: `v` (the hints change no
    result; Quadrants uses them to drop atomics and size caches)."""
    if name == "assume_in_range" and (len(hints) != 3 or kw):
        raise fb.error(node, "qd.assume_in_range(val, base, low, high) takes 4 arguments")
    if name == "loop_unique" and (len(hints) + len(kw) > 1 or set(kw) - {"covers"}):
        raise fb.error(node, "qd.loop_unique(val, covers=None) takes a value and an optional covers")
    return val


# ---- the tables ---------------------------------------------------------------------------------------

RAW: dict[str, Handler] = {  # handlers that read their argument nodes themselves
    "static": _static, "static_assert": _static_assert, "atomic_cas": _atomic_cas, "loop_config": _loop_config,
    "bit_shr": _bit_shr, "volatile_load": _volatile_load, **{name: _atomic_handler(name) for name in ATOMICS},
}  # fmt: skip
EVAL: dict[str, Callable[..., Any]] = {  # handlers of evaluated arguments: (builder, node, name, *args, **kwargs)
    "static_print": _static_print, "ndrange": _ndrange, "grouped": _grouped,
    **{name: _unary_math for name in UNARY_MATH},
    "logical_not": lambda fb, node, _name, x: _unary_math(fb, node, "lnot", x),
    "floor": _rounding, "ceil": _rounding, "round": _rounding, "min": _minmax, "max": _minmax,
    "pow": _binary_math, "atan2": _binary_math, "raw_div": _binary_math, "raw_mod": _binary_math,
    "select": _select, "Vector": _vector, "Matrix": _matrix, "BufferView": views.construct,
    "Vector.zero": _filled, "Vector.one": _filled, "Matrix.zero": _filled, "Matrix.one": _filled,
    "Matrix.identity": _filled, "Matrix.rows": _rows_cols, "Matrix.cols": _rows_cols,
    "Matrix.diag": _diag, "Matrix.unit": _unit, "Vector.unit": _unit, "zero": _zero_one, "one": _zero_one,
    "cast": _cast, "bit_cast": _bit_cast, "random": _random, "randn": _randn, "stop_grad": stop_grad,
    "block_local": _block_local, "cache_read_only": _block_local, "no_activate": _hint_snodes,
    "get_addr": _get_addr, "loop_unique": _hinted_value, "assume_in_range": _hinted_value, **SIMT_EVAL,
    "outer": tiles.outer, "mesh_local": mesh.mesh_local, "mesh_patch_idx": lambda fb, node, _name: mesh.patch_index(fb, node),
    **{name: sparse.snode_call for name in ("activate", "deactivate", "is_active", "append", "length")},
    "rescale_index": sparse.rescale_index,
}  # fmt: skip
