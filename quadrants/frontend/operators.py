"""Operators on kernel values: scalars and vectors, runtime and compile-time.

An operation whose operands are all compile-time values runs in Python, as in Quadrants (`1 / 3` in a kernel is
the Python float, made an f32 constant only where it meets runtime code); one with a runtime operand becomes IR
through `TypedOps`; one with a vector operand applies element by element (and recurses to the scalar case).
"""

from __future__ import annotations

import ast
import enum
import math
import operator
from collections.abc import Callable
from typing import Any

from quadrants.errors import QuadrantsCompilationError, QuadrantsTypeError
from quadrants.frontend.builder import FrontendBuilder
from quadrants.frontend.values import Matrix, is_runtime
from quadrants.frontend.vectors import as_matrix, matrix_from_rows
from quadrants.ir import nodes as ir
from quadrants.types.dtypes import PrimitiveType

BIN_OPS: dict[type, str] = {
    ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "truediv", ast.FloorDiv: "floordiv",
    ast.Mod: "mod", ast.Pow: "pow", ast.BitAnd: "and", ast.BitOr: "or", ast.BitXor: "xor",
    ast.LShift: "shl", ast.RShift: "shr",
}  # fmt: skip


def _c_div(a: Any, b: Any) -> Any:
    """C division of compile-time numbers (`qd.raw_div`): integers truncate toward zero."""
    if isinstance(a, int) and isinstance(b, int):
        q = abs(a) // abs(b)
        return q if (a < 0) == (b < 0) else -q
    return a / b


def _c_mod(a: Any, b: Any) -> Any:
    """C remainder of compile-time numbers (`qd.raw_mod`): the sign of the dividend."""
    if isinstance(a, int) and isinstance(b, int):
        return a - b * _c_div(a, b)
    return math.fmod(a, b)


PY_OPS: dict[str, Callable[[Any, Any], Any]] = {
    "add": operator.add, "sub": operator.sub, "mul": operator.mul, "truediv": operator.truediv,
    "floordiv": operator.floordiv, "mod": operator.mod, "pow": operator.pow, "and": operator.and_,
    "or": operator.or_, "xor": operator.xor, "shl": operator.lshift, "shr": operator.rshift,
    "lshr": lambda a, b: (a & 0xFFFFFFFF) >> b if a < 0 else a >> b,  # compile-time ints: as i32
    "lt": operator.lt, "le": operator.le, "gt": operator.gt, "ge": operator.ge, "eq": operator.eq,
    "ne": operator.ne, "matmul": operator.matmul, "min": min, "max": max,
    "raw_div": _c_div, "raw_mod": _c_mod, "atan2": math.atan2,
}  # fmt: skip
PY_UNARY: dict[type, Callable[[Any], Any]] = {
    ast.USub: operator.neg, ast.UAdd: operator.pos, ast.Not: operator.not_, ast.Invert: operator.invert,
}  # fmt: skip
IR_UNARY: dict[type, str] = {ast.USub: "neg", ast.Not: "lnot", ast.Invert: "invert"}


def py_value(v: Any) -> Any:
    """Enum members stand for their values in arithmetic (IntEnum already is an int)."""
    if isinstance(v, enum.Enum) and not isinstance(v, int):
        return v.value
    return v


# debug=True: integer operations whose overflow the launcher reports (Quadrants' words), by IR operation
OVERFLOW_WORDS = {"add": "Addition", "sub": "Subtraction", "mul": "Multiplication", "shl": "Shift left"}


def binary(fb: FrontendBuilder, op: str, a: Any, b: Any, node: ast.AST) -> Any:
    """`a op b` for any two kernel values (`op` names a `PY_OPS` / `TypedOps.binary` operation)."""
    if isinstance(a, (list, tuple)) and as_matrix(fb, b, node) is not None:  # `v == [0, 1]`
        a = matrix_from_rows(fb, a, None, node)
    elif isinstance(b, (list, tuple)) and as_matrix(fb, a, node) is not None:
        b = matrix_from_rows(fb, b, None, node)
    if as_matrix(fb, a, node) is not None or as_matrix(fb, b, node) is not None:
        if not is_runtime(a) and not is_runtime(b) and op in PY_OPS:
            try:
                return PY_OPS[op](a, b)  # two Python-scope vectors: numpy does it
            except Exception:  # noqa: BLE001
                pass
        return matrix_binary(fb, op, a, b, node)
    if not isinstance(a, ir.Value) and not isinstance(b, ir.Value):
        try:
            return PY_OPS[op](py_value(a), py_value(b))
        except Exception as e:
            raise fb.error(node, f"{type(e).__name__}: {e}", QuadrantsCompilationError) from None
    out = fb.ops.binary(op, py_value(a), py_value(b), fb.loc(node))
    if fb.options.debug and isinstance(out, ir.Binary) and out.op in OVERFLOW_WORDS and out.site < 0:
        t = out.type
        if isinstance(t, PrimitiveType) and t.is_integral and t.bits > 1:
            out.site = len(fb.kernel.sites)
            fb.kernel.sites.append(fb.site("overflow", fb.loc(node), OVERFLOW_WORDS[out.op]))
    if op == "pow" and fb.options.debug and isinstance(b, ir.Value):
        tb = b.type
        if isinstance(out.type, PrimitiveType) and out.type.is_integral and isinstance(tb, PrimitiveType) and tb.is_signed:
            _check_exponent(fb, b, node)
    return out


def _check_exponent(fb: FrontendBuilder, exponent: ir.Value, node: ast.AST) -> None:
    """`debug=True`: an integer power's runtime exponent must not be negative (Quadrants' check and words)."""
    loc = fb.loc(node)
    site = len(fb.kernel.sites)
    fb.kernel.sites.append(fb.site("assert", loc, "Negative exponent in pow(int, int) is not allowed."))
    fb.b.emit(ir.Assert(cond=fb.ops.binary("ge", exponent, 0, loc), site=site))


def matrix_binary(fb: FrontendBuilder, op: str, a: Any, b: Any, node: ast.AST) -> Matrix:
    """Element-wise `a op b` where at least one side is a vector/matrix (a scalar side broadcasts)."""
    ma, mb = as_matrix(fb, a, node), as_matrix(fb, b, node)
    if ma is not None and mb is not None and ma.shape != mb.shape:
        raise QuadrantsTypeError(f"shapes {ma.shape} and {mb.shape} do not match for '{op}'", fb.loc(node))
    shape = (ma or mb).shape  # type: ignore[union-attr]
    n = len((ma or mb).elements)  # type: ignore[union-attr]
    out = [
        binary(fb, op, ma.elements[i] if ma is not None else a, mb.elements[i] if mb is not None else b, node)
        for i in range(n)
    ]
    return Matrix(shape, out)


def matrix_unary(fn: Callable[[Any], Any], m: Matrix) -> Matrix:
    return Matrix(m.shape, [fn(e) for e in m.elements])


def unary(fb: FrontendBuilder, op: ast.unaryop, v: Any, node: ast.AST) -> Any:
    """`-v`, `+v`, `not v`, `~v` of a scalar (runtime or compile-time)."""
    if not isinstance(v, ir.Value):
        try:
            return PY_UNARY[type(op)](v)
        except Exception as e:
            raise fb.error(node, f"{type(e).__name__}: {e}", QuadrantsCompilationError) from None
    if isinstance(op, ast.UAdd):
        return v
    return fb.ops.unary(IR_UNARY[type(op)], v, fb.loc(node))
