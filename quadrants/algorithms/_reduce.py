"""`qd.algorithms.reduce_{add,min,max}` and `exclusive_scan_{add,min,max}`: device-wide reductions and exclusive
prefix scans of a 1-D tensor, composed at the top level of the caller's kernel (`_staircase.py` has the method).

    qd.algorithms.reduce_add(arr, out, scratch, n, dtype, log256_max_n)          # out[0] = sum(arr[0:n])
    qd.algorithms.exclusive_scan_add(arr, out, scratch, n, dtype, log256_max_n)  # out[i] = sum(arr[0:i])

`n` is read on the device (a kernel expression, e.g. `count[0]`); `dtype` and `log256_max_n` are compile-time;
`scratch` is sized by `reduce_scratch_slots(N, log256_max_n)` / `exclusive_scan_scratch_slots(...)`, u32 for
4-byte dtypes and u64 for 8-byte ones. Quadrants runs these on its GPU backends only; here they run wherever
kernels do, the CPU included. Float sums combine block by block, so they are not bitwise numpy's.
"""

# mypy: disable-error-code="valid-type, operator"

from __future__ import annotations

from quadrants.algorithms import _staircase as st
from quadrants.algorithms._scratch import check_depth
from quadrants.frontend.func import func
from quadrants.frontend.intrinsics import cast, min, static
from quadrants.types.annotations import template


@func(requires_top_level=True)
def _reduce(arr, out, scratch, n, dtype: template(), op: template(), depth: template()):
    static(st.check_scalar(dtype, f"reduce_{op}"))
    static(check_depth(depth))
    count = cast(n, st.dtypes.i32)
    st.upsweep(arr, scratch, count, 0, dtype, op, "value", depth)
    out[0] = st.total(scratch, count, 0, dtype, op, depth)


@func(requires_top_level=True)
def _exclusive_scan(arr, out, scratch, n, dtype: template(), op: template(), depth: template()):
    static(st.check_scalar(dtype, f"exclusive_scan_{op}"))
    static(check_depth(depth))
    count = cast(n, st.dtypes.i32)
    st.upsweep(arr, scratch, count, 0, dtype, op, "value", depth)
    st.downsweep(scratch, count, 0, dtype, op, depth)
    for b in range(st.level_count(count, 1)):
        run = st.block_prefix(scratch, count, 0, b, dtype, op, depth)
        for j in range(b * st.BLOCK, min(b * st.BLOCK + st.BLOCK, count)):
            v = cast(arr[j], dtype)
            out[j] = run
            run = st.combine(run, v, op)


@func(requires_top_level=True)
def reduce_add(arr, out, scratch, n, dtype: template(), log256_max_n: template()):
    _reduce(arr, out, scratch, n, dtype, "add", log256_max_n)


@func(requires_top_level=True)
def reduce_min(arr, out, scratch, n, dtype: template(), log256_max_n: template()):
    _reduce(arr, out, scratch, n, dtype, "min", log256_max_n)


@func(requires_top_level=True)
def reduce_max(arr, out, scratch, n, dtype: template(), log256_max_n: template()):
    _reduce(arr, out, scratch, n, dtype, "max", log256_max_n)


@func(requires_top_level=True)
def exclusive_scan_add(arr, out, scratch, n, dtype: template(), log256_max_n: template()):
    _exclusive_scan(arr, out, scratch, n, dtype, "add", log256_max_n)


@func(requires_top_level=True)
def exclusive_scan_min(arr, out, scratch, n, dtype: template(), log256_max_n: template()):
    _exclusive_scan(arr, out, scratch, n, dtype, "min", log256_max_n)


@func(requires_top_level=True)
def exclusive_scan_max(arr, out, scratch, n, dtype: template(), log256_max_n: template()):
    _exclusive_scan(arr, out, scratch, n, dtype, "max", log256_max_n)


__all__ = ["exclusive_scan_add", "exclusive_scan_max", "exclusive_scan_min", "reduce_add", "reduce_max",
           "reduce_min"]  # fmt: skip
