"""`qd.algorithms.sort`: a stable LSB radix sort of 32- or 64-bit scalar keys (optionally moving values with them),
composed at the top level of the caller's kernel.

    qd.algorithms.sort(keys, tmp_keys, values, tmp_values, scratch, n, key_dtype, has_values, end_bit, log256_max_n)

`n` is a 0-d i32 tensor read on the device (`n[()]`); the sort takes the low `end_bit` bits of the keys (a
multiple of 8), 8 bits per pass. Each pass: every 256-key block counts its digits into u32 scratch, digit-major
(counter d * blocks + b), the counters are exclusive-scanned with the staircase (`_staircase.py`, one level deeper
than the keys'), and each block then moves its keys, in order, to their digit's next slot: stable, as each block's
counters are its own. Passes alternate keys -> tmp_keys -> keys; an odd pass count ends with a copy back (Quadrants
refuses odd counts), so the result is always in `keys`. Signed and float keys sort by their bits made unsigned-
ordered (the sign bit flipped; negative floats all bits flipped, so NaNs with the sign clear go last, as numpy).
Pass `keys` / `tmp_keys` as `values` / `tmp_values` with has_values=False for keys alone. Scratch:
`sort_scratch_slots(N, log256_max_n)` u32 slots.
"""

# mypy: disable-error-code="valid-type, operator"

from __future__ import annotations

from typing import Any

from quadrants.algorithms import _staircase as st
from quadrants.algorithms._scratch import check_depth
from quadrants.frontend.func import func
from quadrants.frontend.intrinsics import bit_cast, cast, min, select, static
from quadrants.types import dtypes
from quadrants.types.annotations import template


def _passes(key_dtype: Any, end_bit: Any) -> int:
    st.check_scalar(key_dtype, "sort")
    if not isinstance(end_bit, int) or end_bit <= 0 or end_bit % 8 or end_bit > key_dtype.bits:
        raise ValueError(f"qd.algorithms.sort: end_bit must be a positive multiple of 8 up to the key width "
                         f"({key_dtype.bits}), got {end_bit!r}")  # fmt: skip
    return end_bit // 8


@func
def _ordered(key, key_dtype: template()):
    """The key's bits as an unsigned integer that orders as the key does."""
    u = bit_cast(key, static(st.scratch_type(key_dtype)))
    sign = static(st.scratch_type(key_dtype))(static(1 << (key_dtype.bits - 1)))
    if static(key_dtype.kind == "int"):
        u = u ^ sign
    elif static(key_dtype.kind == "float"):
        u = u ^ select((u & sign) != 0, static(st.scratch_type(key_dtype))(static(2**key_dtype.bits - 1)), sign)
    return u


@func
def _digit(key, key_dtype: template(), shift: template()):
    return cast((_ordered(key, key_dtype) >> static(shift)) & 255, dtypes.i32)


@func(requires_top_level=True)
def _pass(src, dst, vsrc, vdst, scratch, count, key_dtype: template(), has_values: template(), shift: template(),
          depth: template()):  # fmt: skip
    blocks = st.level_count(count, 1)
    hist = blocks * st.BLOCK
    for b in range(blocks):
        for d in range(st.BLOCK):
            scratch[d * blocks + b] = dtypes.u32(0)
        for j in range(b * st.BLOCK, min(b * st.BLOCK + st.BLOCK, count)):
            scratch[_digit(src[j], key_dtype, shift) * blocks + b] += dtypes.u32(1)
    st.upsweep(scratch, scratch, hist, hist, dtypes.u32, "add", "value", depth + 1)
    st.downsweep(scratch, hist, hist, dtypes.u32, "add", depth + 1)
    for c in range(st.level_count(hist, 1)):  # the counters' own last pass: exclusive, in place
        run = st.block_prefix(scratch, hist, hist, c, dtypes.u32, "add", depth + 1)
        for i in range(c * st.BLOCK, min(c * st.BLOCK + st.BLOCK, hist)):
            v = scratch[i]
            scratch[i] = run
            run += v
    for b in range(blocks):
        for j in range(b * st.BLOCK, min(b * st.BLOCK + st.BLOCK, count)):
            slot = _digit(src[j], key_dtype, shift) * blocks + b
            pos = cast(scratch[slot], dtypes.i32)
            scratch[slot] = scratch[slot] + dtypes.u32(1)
            dst[pos] = src[j]
            if static(has_values):
                vdst[pos] = vsrc[j]


@func(requires_top_level=True)
def sort(keys, tmp_keys, values, tmp_values, scratch, n, key_dtype: template(), has_values: template(),
         end_bit: template(), log256_max_n: template()):  # fmt: skip
    static(check_depth(log256_max_n))
    count = n[()]
    for p in static(range(_passes(key_dtype, end_bit))):
        if static(p % 2 == 0):
            _pass(keys, tmp_keys, values, tmp_values, scratch, count, key_dtype, has_values, 8 * p, log256_max_n)
        else:
            _pass(tmp_keys, keys, tmp_values, values, scratch, count, key_dtype, has_values, 8 * p, log256_max_n)
    if static(_passes(key_dtype, end_bit) % 2 == 1):
        for j in range(count):
            keys[j] = tmp_keys[j]
            if static(has_values):
                values[j] = tmp_values[j]
