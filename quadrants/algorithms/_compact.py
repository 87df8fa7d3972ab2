"""`qd.algorithms.select` (stream compaction) and `reduce_by_key_add` (one sum per run of equal keys), composed at
the top level of the caller's kernel. Both scan a 0/1 count per element with the staircase (`_staircase.py`) in u32
scratch and then walk each 256-element block from its prefix, so the output keeps the input's order.

    qd.algorithms.select(arr, flags, out, num_out, scratch, n, log256_max_n)
    qd.algorithms.reduce_by_key_add(keys_in, values_in, keys_out, values_out, num_runs, scratch, n, value_dtype,
                                    log256_max_n)

`select` copies arr[i] for each flags[i] == 1 (flags must be 0 or 1) to the front of `out` and writes the count to
num_out[0]; elements may be structs. `reduce_by_key_add` writes each run's key and the sum of its values and the
number of runs to num_runs[0]: a run spanning blocks is summed with atomic adds, so float sums are not in input
order. Scratch: `select_scratch_slots(N)` / `reduce_by_key_scratch_slots(N)` u32 slots.
"""

# mypy: disable-error-code="valid-type, operator"

from __future__ import annotations

from quadrants.algorithms import _staircase as st
from quadrants.algorithms._scratch import check_depth
from quadrants.frontend.func import func
from quadrants.frontend.intrinsics import atomic_add, cast, min, static
from quadrants.types import dtypes
from quadrants.types.annotations import template

_KEY_TYPES = (dtypes.i32, dtypes.u32, dtypes.f32)


def _check_key_value(dtype: object) -> object:
    if dtype not in _KEY_TYPES:
        raise NotImplementedError(f"qd.algorithms.reduce_by_key_add: value dtype {dtype} is not supported (i32, u32 "
                                  "or f32)")  # fmt: skip
    return dtype


@func(requires_top_level=True)
def select(arr, flags, out, num_out, scratch, n, log256_max_n: template()):
    static(check_depth(log256_max_n))
    count = cast(n, dtypes.i32)
    st.scan_counts(flags, scratch, count, "value", log256_max_n)
    for b in range(st.level_count(count, 1)):
        dst = cast(st.block_prefix(scratch, count, 0, b, dtypes.u32, "add", log256_max_n), dtypes.i32)
        for j in range(b * st.BLOCK, min(b * st.BLOCK + st.BLOCK, count)):
            if flags[j] != 0:
                out[dst] = arr[j]
                dst += 1
    num_out[0] = cast(st.total(scratch, count, 0, dtypes.u32, "add", log256_max_n), dtypes.i32)


@func(requires_top_level=True)
def reduce_by_key_add(keys_in, values_in, keys_out, values_out, num_runs, scratch, n, value_dtype: template(),
                      log256_max_n: template()):  # fmt: skip
    static(check_depth(log256_max_n))
    static(_check_key_value(value_dtype))
    count = cast(n, dtypes.i32)
    st.scan_counts(keys_in, scratch, count, "head", log256_max_n)
    # each run's key and a zero, written by the block holding its first element ...
    for b in range(st.level_count(count, 1)):
        run = cast(st.block_prefix(scratch, count, 0, b, dtypes.u32, "add", log256_max_n), dtypes.i32)
        for j in range(b * st.BLOCK, min(b * st.BLOCK + st.BLOCK, count)):
            if st.load_input(keys_in, j, dtypes.u32, "head") != 0:
                keys_out[run] = keys_in[j]
                values_out[run] = value_dtype(static(st.identity(value_dtype, "add")))
                run += 1
    # ... then the sums: each block adds its part of a run once, at the run's end or the block's
    for b in range(st.level_count(count, 1)):
        run = cast(st.block_prefix(scratch, count, 0, b, dtypes.u32, "add", log256_max_n), dtypes.i32) - 1
        start = b * st.BLOCK
        acc = value_dtype(static(st.identity(value_dtype, "add")))
        for j in range(start, min(start + st.BLOCK, count)):
            if st.load_input(keys_in, j, dtypes.u32, "head") != 0:
                if j > start:
                    atomic_add(values_out[run], acc)
                run += 1
                acc = value_dtype(static(st.identity(value_dtype, "add")))
            acc += values_in[j]
        if start < count:
            atomic_add(values_out[run], acc)
    num_runs[0] = cast(st.total(scratch, count, 0, dtypes.u32, "add", log256_max_n), dtypes.i32)
