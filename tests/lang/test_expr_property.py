"""Property test: random typed expressions compile and evaluate like a numpy model of Quadrants' rules.

The model: Python numbers combine in Python; a Python int meeting a typed value is an i32, a float an f32;
otherwise both operands are converted to the promoted dtype and numpy computes in that dtype (integers wrap,
`//` and `%` floor, integer division by zero gives 0).
"""

from __future__ import annotations

import math
import operator
import re

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from quadrants.types import dtypes as T
from quadrants.types.promotion import promote, truediv_type
from tests.conftest import qd_init
from tests.helpers import define

VARS = {"a": T.i32, "b": T.f32, "c": T.i64, "d": T.u8, "e": T.f64, "g": T.i8}
OPS = ["+", "-", "*", "//", "%", "/", "min", "max"]

leaf = st.one_of(
    st.sampled_from(list(VARS)),
    st.sampled_from(list(VARS)),
    st.integers(-20, 20).map(str),
    st.sampled_from(["0.5", "2.0", "-1.25", "3.0"]),
)


def _node(children: st.SearchStrategy) -> st.SearchStrategy:
    return st.one_of(
        st.tuples(st.sampled_from(OPS), children, children),
        st.tuples(st.sampled_from(["neg", "abs"]), children),
    )


expr_tree = st.recursive(leaf, _node, max_leaves=6)


def to_source(t) -> str:
    if isinstance(t, str):
        return t
    if t[0] in ("min", "max"):
        return f"{t[0]}({to_source(t[1])}, {to_source(t[2])})"
    if t[0] == "neg":
        return f"(-{to_source(t[1])})"
    if t[0] == "abs":
        return f"abs({to_source(t[1])})"
    return f"({to_source(t[1])} {t[0]} {to_source(t[2])})"


PY = {"+": operator.add, "-": operator.sub, "*": operator.mul, "//": operator.floordiv, "%": operator.mod,
      "/": operator.truediv, "min": min, "max": max}  # fmt: skip


def model(t, env: dict[str, np.generic], seen: list[float] | None = None):
    """Evaluate `t`: returns a Python number (compile-time) or a numpy scalar of the kernel's dtype.
    Appends the magnitude of every operand to `seen` (rounding errors scale with it, e.g. in `x % y`)."""
    v = _model(t, env, seen if seen is not None else [])
    return v


def _model(t, env, seen):
    model = lambda u, en: _mag(_model(u, en, seen), seen)  # noqa: E731
    if isinstance(t, str):
        if t in env:
            return env[t]
        return float(t) if "." in t else int(t)
    if t[0] in ("neg", "abs"):
        v = model(t[1], env)
        if not isinstance(v, np.generic):
            return -v if t[0] == "neg" else abs(v)
        with np.errstate(all="ignore"):
            return (-v if t[0] == "neg" else np.abs(v)).astype(v.dtype)
    a, b = model(t[1], env), model(t[2], env)
    if not isinstance(a, np.generic) and not isinstance(b, np.generic):
        return PY[t[0]](a, b)  # may raise ZeroDivisionError: the kernel raises a compile error then
    ta, tb = _dtype(a), _dtype(b)
    if t[0] == "/":
        rt = truediv_type(ta, tb, T.f32)
    else:
        rt = promote(ta, tb)
    x, y = rt.np_dtype.type(a), rt.np_dtype.type(b)
    with np.errstate(all="ignore"):
        if t[0] == "//":
            r = np.floor(x / y) if rt.is_float else (np.floor_divide(x, y) if y != 0 else 0)
        elif t[0] == "%":
            r = x - np.floor(x / y) * y if rt.is_float else (np.mod(x, y) if y != 0 else 0)
        elif t[0] == "min":
            r = np.fmin(x, y)  # LLVM minnum, like C fmin: a NaN operand is ignored
        elif t[0] == "max":
            r = np.fmax(x, y)
        else:
            r = PY[t[0]](x, y)
    return rt.np_dtype.type(r)


def _mag(v, seen: list[float]):
    with np.errstate(all="ignore"):
        f = abs(float(v))
    if math.isfinite(f):
        seen.append(f)
    return v


def _dtype(v) -> T.PrimitiveType:
    if isinstance(v, np.generic):
        return T.from_numpy(v.dtype)
    return T.f32 if isinstance(v, float) else T.i32


def _ints(lo: int, hi: int) -> st.SearchStrategy:
    """Mostly values away from 0 and 1, where signs and remainders differ between rounding rules."""
    return st.one_of(st.integers(lo, hi), st.integers(lo, -3), st.integers(3, hi))


def _floats(hi: float, width: int = 64) -> st.SearchStrategy:
    """Normal magnitudes or zero (fast-math may turn x / y into x * (1 / y), which differs near overflow)."""
    lo = 0.0009765625  # 2**-10: exact at every width
    return st.one_of(st.just(0.0), st.floats(lo, hi, width=width), st.floats(-hi, -lo, width=width))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(expr_tree, _ints(-100, 100), _floats(50, 32), _ints(-(2**40), 2**40),
       st.integers(0, 255), _floats(1e6), _ints(-128, 127))  # fmt: skip
def test_random_expressions_match_the_model(tree, a, b, c, d, e, g) -> None:
    src = to_source(tree)
    env = {
        "a": np.int32(a),
        "b": np.float32(b),
        "c": np.int64(c),
        "d": np.uint8(d),
        "e": np.float64(e),
        "g": np.int8(g),
    }
    seen: list[float] = []
    try:
        want = model(tree, env, seen)
    except (ZeroDivisionError, OverflowError):
        return
    if not isinstance(want, np.generic):
        want_t = _dtype(want)
        if want_t is T.i32 and not -(2**31) <= want < 2**31:
            return  # the kernel reports an out-of-range literal
        want = want_t.np_dtype.type(want)
    qd_init(log_level="error")
    k = define(f"""
        @qd.kernel
        def k(a: qd.i32, b: qd.f32, c: qd.i64, d: qd.u8, e: qd.f64, g: qd.i8) -> qd.f64:
            return {src}
    """)["k"]
    got = k(a, float(np.float32(b)), c, d, e, g)
    w = float(want)
    if want.dtype.kind == "f":
        if math.isnan(w) or math.isinf(w):
            return  # fast-math (reassociation, no signed zeros) may reach another non-finite value
        # An f64 result may carry an f32 intermediate (`b`, or `/` of integers: the default float), whose error
        # is f32's (fast-math f32 division is within an ulp or two on the GPU backends)
        width = 4 if want.dtype.itemsize == 8 and re.search(r"\bb\b|/", src) else want.dtype.itemsize
        tol = {2: 1e-2, 4: 1e-5, 8: 1e-11}[width] * (abs(w) + max(seen, default=0) + 1e3)
        assert abs(got - w) <= tol, (src, got, w)
    else:
        assert got == w, (src, got, w)
