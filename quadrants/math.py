"""`qd.math`: math functions and constants for kernels.

The elementary functions are the same intrinsic objects as `qd.sin` etc.; the helpers below are written in the
kernel language itself (`@qd.func`) and are inlined like user funcs.
"""

from __future__ import annotations

import math as _m

from quadrants.frontend.func import func
from quadrants.frontend.intrinsics import abs as _abs
from quadrants.frontend.intrinsics import (  # noqa: F401
    acos,
    asin,
    atan,
    atan2,
    ceil,
    cos,
    exp,
    floor,
    log,
    max,
    min,
    pow,
    round,
    select,
    sin,
    sqrt,
    tan,
    tanh,
)  # fmt: skip
from quadrants.types.compound import matrix as _matrix
from quadrants.types.compound import vector as _vector
from quadrants.types.dtypes import u32 as _u32

vec2, vec3, vec4 = _vector(2, float), _vector(3, float), _vector(4, float)
ivec2, ivec3, ivec4 = _vector(2, int), _vector(3, int), _vector(4, int)
uvec2, uvec3, uvec4 = _vector(2, _u32), _vector(3, _u32), _vector(4, _u32)
mat2, mat3, mat4 = _matrix(2, 2, float), _matrix(3, 3, float), _matrix(4, 4, float)

pi = _m.pi
e = _m.e
inf = _m.inf
nan = _m.nan


@func
def clamp(x, xmin, xmax):  # type: ignore[no-untyped-def]
    return min(max(x, xmin), xmax)


@func
def sign(x):  # type: ignore[no-untyped-def]
    one = x * 0 + 1  # 1 in the type of x
    return select(x > 0, one, select(x < 0, -one, one - one))


@func
def log2(x):  # type: ignore[no-untyped-def]
    return log(x) * 1.4426950408889634


@func
def fract(x):  # type: ignore[no-untyped-def]
    return x - floor(x)


@func
def mix(x, y, a):  # type: ignore[no-untyped-def]
    return x * (1.0 - a) + y * a


@func
def step(edge, x):  # type: ignore[no-untyped-def]
    return 0.0 if x < edge else 1.0


@func
def smoothstep(edge0, edge1, x):  # type: ignore[no-untyped-def]
    t = clamp((x - edge0) / (edge1 - edge0), 0.0, 1.0)
    return t * t * (3.0 - 2.0 * t)


@func
def radians(x):  # type: ignore[no-untyped-def]
    return x * 0.017453292519943295


@func
def degrees(x):  # type: ignore[no-untyped-def]
    return x * 57.29577951308232


@func
def isnan(x):  # type: ignore[no-untyped-def]
    return x != x


@func
def isinf(x):  # type: ignore[no-untyped-def]
    return _abs(x) == inf


@func
def mod(x, y):  # type: ignore[no-untyped-def]
    return x - y * floor(x / y)


@func
def dot(a, b):  # type: ignore[no-untyped-def]
    return a.dot(b)


@func
def cross(a, b):  # type: ignore[no-untyped-def]
    return a.cross(b)


@func
def normalize(v):  # type: ignore[no-untyped-def]
    return v.normalized()


@func
def length(v):  # type: ignore[no-untyped-def]
    return v.norm()


@func
def distance(a, b):  # type: ignore[no-untyped-def]
    return (a - b).norm()


@func
def reflect(i, n):  # type: ignore[no-untyped-def]
    return i - 2.0 * n.dot(i) * n


@func
def determinant(m):  # type: ignore[no-untyped-def]
    return m.determinant()


@func
def inverse(m):  # type: ignore[no-untyped-def]
    return m.inverse()
