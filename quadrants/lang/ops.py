"""`qd.lang.ops`: Quadrants' module of operator functions, as programs call them (`qd.lang.ops.abs(v)`,
`qd.lang.ops.logical_not(v)`, `qd.lang.ops.atomic_add(x[i], 1)`), in kernels and, where they have a Python
value, in Python scope (element by element on a `qd.Vector`). They are the intrinsics of `frontend/intrinsics.py`
and the `operator` module's functions (which kernels also accept), under Quadrants' names."""

from __future__ import annotations

import operator as _operator

from quadrants.frontend.intrinsics import (  # noqa: F401
    abs,
    acos,
    asin,
    atan,
    atan2,
    atomic_add,
    atomic_and,
    atomic_max,
    atomic_min,
    atomic_mul,
    atomic_or,
    atomic_sub,
    atomic_xor,
    bit_cast,
    cast,
    ceil,
    clz,
    cos,
    exp,
    floor,
    log,
    logical_not,
    max,
    min,
    popcnt,
    pow,
    random,
    raw_div,
    raw_mod,
    round,
    rsqrt,
    select,
    sin,
    sqrt,
    tan,
    tanh,
)  # fmt: skip

add, sub, mul, truediv, floordiv, mod = (_operator.add, _operator.sub, _operator.mul, _operator.truediv,
                                         _operator.floordiv, _operator.mod)  # fmt: skip
neg, bit_not, bit_and, bit_or, bit_xor = _operator.neg, _operator.invert, _operator.and_, _operator.or_, _operator.xor
bit_shl, bit_sar = _operator.lshift, _operator.rshift
cmp_eq, cmp_ne, cmp_lt, cmp_le, cmp_gt, cmp_ge = (_operator.eq, _operator.ne, _operator.lt, _operator.le,
                                                  _operator.gt, _operator.ge)  # fmt: skip
