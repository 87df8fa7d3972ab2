"""`qd.math`: math functions and constants for kernels.

The elementary functions are the same intrinsic objects as `qd.sin` etc.; the helpers below are written in the
kernel language itself (`@qd.func`) and are inlined like user funcs.
"""

# Exactly Quadrants' names in `dir(qd.math)`: no `from __future__ import annotations`; helpers imported under
# leading underscores.
import math as _m

from quadrants.frontend.func import func as _func
from quadrants.frontend.intrinsics import abs as _abs
from quadrants.frontend.intrinsics import (  # noqa: F401
    acos,
    asin,
    atan2,
    ceil,
    clz,
    cos,
    exp,
    ffs,
    floor,
    log,
    max,
    min,
    popcnt,
    pow,
    round,
    sin,
    sqrt,
    tan,
    tanh,
)  # fmt: skip
from quadrants.frontend.intrinsics import select as _select
from quadrants.frontend.intrinsics import static as _static
from quadrants.lang.matrix import Matrix as _Matrix
from quadrants.types.annotations import template as _template
from quadrants.types.compound import matrix as _matrix
from quadrants.types.compound import vector as _vector
from quadrants.types.dtypes import default_uint as _uint
from quadrants.types.dtypes import i32 as _i32
from quadrants.types.dtypes import u32 as _u32

vec2, vec3, vec4 = _vector(2, float), _vector(3, float), _vector(4, float)
ivec2, ivec3, ivec4 = _vector(2, int), _vector(3, int), _vector(4, int)
uvec2, uvec3, uvec4 = _vector(2, _uint), _vector(3, _uint), _vector(4, _uint)  # u32, or u64 when default_ip is 64-bit
mat2, mat3, mat4 = _matrix(2, 2, float), _matrix(3, 3, float), _matrix(4, 4, float)

pi = _m.pi
e = _m.e
inf = _m.inf
nan = _m.nan


@_func
def clamp(x, xmin, xmax):  # type: ignore[no-untyped-def]
    return min(max(x, xmin), xmax)


@_func
def sign(x):  # type: ignore[no-untyped-def]
    one = x * 0 + 1  # 1 in the type of x
    return _select(x > 0, one, _select(x < 0, -one, one - one))


@_func
def log2(x):  # type: ignore[no-untyped-def]
    return log(x) * 1.4426950408889634


@_func
def fract(x):  # type: ignore[no-untyped-def]
    return x - floor(x)


@_func
def mix(x, y, a):  # type: ignore[no-untyped-def]
    return x * (1.0 - a) + y * a


@_func
def step(edge, x):  # type: ignore[no-untyped-def]
    return 0.0 if x < edge else 1.0


@_func
def smoothstep(edge0, edge1, x):  # type: ignore[no-untyped-def]
    t = clamp((x - edge0) / (edge1 - edge0), 0.0, 1.0)
    return t * t * (3.0 - 2.0 * t)


@_func
def radians(x):  # type: ignore[no-untyped-def]
    return x * 0.017453292519943295


@_func
def degrees(x):  # type: ignore[no-untyped-def]
    return x * 57.29577951308232


@_func
def isnan(x):  # type: ignore[no-untyped-def]
    return x != x


@_func
def isinf(x):  # type: ignore[no-untyped-def]
    return _abs(x) == inf


@_func
def mod(x, y):  # type: ignore[no-untyped-def]
    return x - y * floor(x / y)


@_func
def dot(a, b):  # type: ignore[no-untyped-def]
    return a.dot(b)


@_func
def cross(a, b):  # type: ignore[no-untyped-def]
    return a.cross(b)


@_func
def normalize(v):  # type: ignore[no-untyped-def]
    return v.normalized()


@_func
def length(v):  # type: ignore[no-untyped-def]
    return v.norm()


@_func
def distance(a, b):  # type: ignore[no-untyped-def]
    return (a - b).norm()


@_func
def reflect(i, n):  # type: ignore[no-untyped-def]
    return i - 2.0 * n.dot(i) * n


@_func
def determinant(m):  # type: ignore[no-untyped-def]
    return m.determinant()


@_func
def inverse(m):  # type: ignore[no-untyped-def]
    return m.inverse()


# ---- transforms (4x4 homogeneous unless said otherwise) ---------------------------------------------------------


@_func
def vdir(ang):  # type: ignore[no-untyped-def]
    """The 2d unit vector at angle `ang` (radians)."""
    return vec2(cos(ang), sin(ang))


@_func
def rotation2d(ang):  # type: ignore[no-untyped-def]
    """The 2x2 counter-clockwise rotation by `ang`."""
    c, s = cos(ang), sin(ang)
    return mat2([[c, -s], [s, c]])


@_func
def translate(dx, dy, dz):  # type: ignore[no-untyped-def]
    return mat4([[1.0, 0.0, 0.0, dx], [0.0, 1.0, 0.0, dy], [0.0, 0.0, 1.0, dz], [0.0, 0.0, 0.0, 1.0]])


@_func
def scale(sx, sy, sz):  # type: ignore[no-untyped-def]
    return mat4([[sx, 0.0, 0.0, 0.0], [0.0, sy, 0.0, 0.0], [0.0, 0.0, sz, 0.0], [0.0, 0.0, 0.0, 1.0]])


@_func
def rot_by_axis(axis, ang):  # type: ignore[no-untyped-def]
    """Rotation by `ang` about `axis` (normalized here), as Quadrants lays it out: the transpose of the
    right-handed rotation matrix (it rotates row vectors)."""
    c, s = cos(ang), sin(ang)
    u = axis.normalized()
    k = (1.0 - c) * u
    return mat4(
        [
            [c + k[0] * u[0], k[0] * u[1] + s * u[2], k[0] * u[2] - s * u[1], 0.0],
            [k[1] * u[0] - s * u[2], c + k[1] * u[1], k[1] * u[2] + s * u[0], 0.0],
            [k[2] * u[0] + s * u[1], k[2] * u[1] - s * u[0], c + k[2] * u[2], 0.0],
            [0.0, 0.0, 0.0, 1.0],
        ]
    )


@_func
def rot_yaw_pitch_roll(yaw, pitch, roll):  # type: ignore[no-untyped-def]
    """Rotation by Euler angles: about Y by `yaw`, then X by `pitch`, then Z by `roll`."""
    cy, sy = cos(yaw), sin(yaw)
    cp, sp = cos(pitch), sin(pitch)
    cr, sr = cos(roll), sin(roll)
    return mat4(
        [
            [cy * cr + sy * sp * sr, sr * cp, -sy * cr + cy * sp * sr, 0.0],
            [-cy * sr + sy * sp * cr, cr * cp, sr * sy + cy * sp * cr, 0.0],
            [sy * cp, -sp, cy * cp, 0.0],
            [0.0, 0.0, 0.0, 1.0],
        ]
    )


@_func
def rotation3d(ang_x, ang_y, ang_z):  # type: ignore[no-untyped-def]
    """Rotation by angles about X, Y and Z (Y first, then X, then Z): `rot_yaw_pitch_roll(ang_z, ang_x, ang_y)`,
    argument order as in Quadrants."""
    return rot_yaw_pitch_roll(ang_z, ang_x, ang_y)


@_func
def refract(x, n, eta):  # type: ignore[no-untyped-def]
    """GLSL refract: the refraction of incident `x` at normal `n` with index ratio `eta` (zero on total internal
    reflection)."""
    d = x.dot(n)
    k = 1.0 - eta * eta * (1.0 - d * d)
    return _select(k >= 0.0, eta * x - (eta * d + sqrt(max(k, 0.0))) * n, x * 0.0 + 0.0)  # +0, not -0


# ---- complex numbers as vec2 (re, im) ---------------------------------------------------------------------------


@_func
def cmul(z1, z2):  # type: ignore[no-untyped-def]
    return vec2(z1[0] * z2[0] - z1[1] * z2[1], z1[0] * z2[1] + z1[1] * z2[0])


@_func
def cconj(z):  # type: ignore[no-untyped-def]
    return vec2(z[0], -z[1])


@_func
def cdiv(z1, z2):  # type: ignore[no-untyped-def]
    return vec2(z1[0] * z2[0] + z1[1] * z2[1], z1[1] * z2[0] - z1[0] * z2[1]) / z2.dot(z2)


@_func
def cinv(z):  # type: ignore[no-untyped-def]
    return vec2(z[0], -z[1]) / z.dot(z)


@_func
def cexp(z):  # type: ignore[no-untyped-def]
    r = exp(z[0])
    return vec2(r * cos(z[1]), r * sin(z[1]))


@_func
def clog(z):  # type: ignore[no-untyped-def]
    """The principal logarithm: argument in (-pi, pi]."""
    return vec2(log(z.dot(z)) / 2.0, atan2(z[1], z[0]))


@_func
def cpow(z, n):  # type: ignore[no-untyped-def]
    """`z ** n` through polar form; 0 for z = 0."""
    r2 = z.dot(z)
    a = atan2(z[1], z[0]) * n
    return _select(r2 > 0.0, pow(max(r2, 1e-38), n / 2.0) * vec2(cos(a), sin(a)), z * 0.0 + 0.0)


@_func
def csqrt(z):  # type: ignore[no-untyped-def]
    """The square root with a positive real part (non-negative imaginary part when that is 0); 0 for z = 0."""
    r = sqrt(z.norm())
    a = atan2(z[1], z[0]) / 2.0
    return _select(z.dot(z) > 0.0, r * vec2(cos(a), sin(a)), z * 0.0 + 0.0)


@_func
def eye(n: _template()):  # type: ignore[no-untyped-def,valid-type]
    """The n x n identity matrix (of the default float type)."""
    return _Matrix.identity(float, n)


_NOT_FOUND = 0xFFFFFFFF


@_func
def fns(mask, base, offset):  # type: ignore[no-untyped-def]
    """The position of the |offset|-th set bit of the 32-bit `mask`, counting from bit `base` (included) upward
    for offset > 0 and downward for offset < 0; for offset == 0, `base` itself when that bit is set. 0xFFFFFFFF
    where there is no such bit (CUDA's `__nv_fns`). Unrolled over the 32 positions with selects: no branch."""
    m = _u32(mask)
    b = _u32(base)
    o = _i32(offset)
    up = o > 0
    n = _abs(o)
    found = _u32(_NOT_FOUND)
    for i in _static(range(32)):
        pos = _select(up, _u32(i), _u32(31 - i))
        wanted = _select(up, pos >= b, pos <= b) & (((m >> pos) & _u32(1)) != _u32(0))
        n -= _select(wanted, 1, 0)
        found = _select(wanted & (n == 0) & (found == _u32(_NOT_FOUND)), pos, found)
    at_base = (b < _u32(32)) & (((m >> b) & _u32(1)) != _u32(0))
    return _select(o == 0, _select(at_base, b, _u32(_NOT_FOUND)), found)
