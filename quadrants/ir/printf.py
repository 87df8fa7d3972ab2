"""printf conversion specs of in-kernel `print` (`f"{x:.2f}"`, `"{:e}".format(v)`), as Quadrants reads them.

Consumes a user's spec (the text after `:` in a replacement field; printf's grammar without the `%`, where the
conversion letter may be left out) and a value's dtype; produces the error to raise for a spec that cannot print
that dtype (the frontend raises it at the call's location) and the printf directive codegen emits
(`merge`: the user's flags, width and precision over the dtype's own directive).
"""

from __future__ import annotations

import re

from quadrants.types.dtypes import PrimitiveType

# %[flags][width][.precision][length][conversion]
_SPEC = re.compile(r"%?([-+ #0]+)?(\d+|\*)?(\.(?:\d+|\*))?(hh|ll|[hljztL])?([csdioxXufFeEaAgGnp])?")
_SIGNED, _UNSIGNED, _REAL = "di", "oxXu", "fFeEaAgG"


def _parts(spec: str) -> tuple[str, str, str, str, str] | None:
    m = _SPEC.fullmatch(spec)
    if m is None:
        return None
    flags, width, precision, length, conversion = (g or "" for g in m.groups())
    return flags, width, precision, length, conversion


def _group(conversion: str) -> str:
    for group in (_SIGNED, _UNSIGNED, _REAL):
        if conversion and conversion in group:
            return group
    return ""


def _dtype_group(dtype: PrimitiveType) -> str:
    if dtype.is_float:
        return _REAL
    return _SIGNED if dtype.kind == "int" else _UNSIGNED  # u1 prints as an unsigned integer


def check(spec: str, dtype: PrimitiveType) -> str | None:
    """The message of the error a spec gives for a value of `dtype`, or None where it can print it."""
    parts = _parts(spec)
    if parts is None:
        return f"{spec!r} is not a valid printf specifier."
    _, width, precision, _, conversion = parts
    if conversion in ("c", "s", "n", "p"):
        return f"conversion '{conversion}' is not supported."
    if width == "*" or precision == ".*":
        return f"the printf specifier {spec!r} is not supported (no '*' width or precision)."
    if conversion and _group(conversion) != _dtype_group(dtype):
        return f"'{spec}' doesn't match '{dtype}'."
    return None


def merge(spec: str, default: str) -> str:
    """The directive printing a value whose own directive is `default` (`%f`, `%.12f`, `%lld`, `%llu`) as the
    user's checked `spec` asks: the user's flags and width, the user's precision (else the default's), the
    default's length (it matches how codegen widens the value), and the user's conversion where given."""
    user, own = _parts(spec), _parts(default)
    assert user is not None and own is not None, (spec, default)
    flags, width, precision, _, conversion = user
    return "%" + flags + width + (precision or own[2]) + own[3] + (conversion or own[4])
