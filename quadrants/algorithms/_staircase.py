"""The staircase the device-wide ops share, in the kernel language: a level-by-level tree over 256-element blocks.

Level 0 is the input; level k + 1 holds one partial per 256-entry block of level k, stored in scratch from `base`
on, level after level (`_scratch.py` sizes it). `upsweep` fills levels 1 .. depth with each block's combined value
(add, min or max), one parallel loop per level; `downsweep` then turns levels depth - 1 .. 1, top down, into
exclusive prefixes in place, so that `block_prefix(b)` is what precedes block b of level 0 and each op's own last
pass walks its block from there. Every loop is a top-level loop of the calling kernel, one thread per block, so
each level is one parallel launch and the next waits for it: the funcs are `requires_top_level`.

Partials are stored bit-cast to the scratch's element type, u32 for 4-byte dtypes and u64 for 8-byte ones. Level
counts are computed in i64 (256**4 = 2**32) from the live count n, so one compiled kernel serves any n up to
256**depth.
"""

# mypy: disable-error-code="valid-type, operator"
# (the funcs' bodies are kernel-language code, not Python mypy can type)

from __future__ import annotations

from typing import Any

from quadrants.frontend.func import func
from quadrants.frontend.intrinsics import bit_cast, cast, max, min, select, static
from quadrants.types import dtypes
from quadrants.types.annotations import template

BLOCK = 256
SCALARS = (dtypes.i32, dtypes.u32, dtypes.f32, dtypes.i64, dtypes.u64, dtypes.f64)


def check_scalar(dtype: Any, op_name: str) -> Any:
    """The dtype, if the ops support it (the 32- and 64-bit scalars); NotImplementedError otherwise."""
    if dtype not in SCALARS:
        raise NotImplementedError(f"qd.algorithms.{op_name}: dtype {dtype} is not supported (one of i32, u32, f32, "
                                  "i64, u64, f64)")  # fmt: skip
    return dtype


def scratch_type(dtype: Any) -> Any:
    """The scratch element type a dtype's partials are bit-cast to."""
    return dtypes.u64 if dtype.bits == 64 else dtypes.u32


def identity(dtype: Any, op: str) -> Any:
    """The value that leaves `op` unchanged for dtype: 0 for add, the largest value for min, the smallest for max."""
    if dtypes.is_real(dtype):
        return {"add": 0.0, "min": float("inf"), "max": float("-inf")}[op]
    if op == "add":
        return 0
    low, high = dtype.min_max()
    return high if op == "min" else low


@func
def combine(a, b, op: template()):
    r = a
    if static(op == "add"):
        r = a + b
    elif static(op == "min"):
        r = min(a, b)
    else:
        r = max(a, b)
    return r


@func
def level_count(n, k: template()):
    """ceil(n / 256**k) entries in level k for a live count n (i32; the shift in i64)."""
    c = cast(n, dtypes.i32)
    if static(k > 0):
        c = cast(select(n > 0, ((cast(n, dtypes.i64) - 1) >> static(8 * k)) + 1, 0), dtypes.i32)
    return c


@func
def level_offset(n, base, k: template()):
    """Where level k >= 1 starts in scratch: base plus the counts of levels 1 .. k - 1."""
    off = cast(base, dtypes.i32)
    for j in static(range(1, k)):
        off += level_count(n, j)
    return off


@func
def load_input(arr, j, dtype: template(), kind: template()):
    """Entry j of level 0: the element as dtype ("value"), or 1 where a run of equal keys starts ("head")."""
    v = cast(0, dtype)
    if static(kind == "head"):
        v = cast(select(j == 0, True, arr[max(j - 1, 0)] != arr[j]), dtype)
    else:
        v = cast(arr[j], dtype)
    return v


@func(requires_top_level=True)
def upsweep(arr, scratch, n, base, dtype: template(), op: template(), kind: template(), depth: template()):
    """Levels 1 .. depth of scratch: each block's `op` of the level below (level 0: `arr`, read as `kind` says)."""
    for k in static(range(depth)):
        count_in = level_count(n, k)
        in_off = level_offset(n, base, k)
        out_off = level_offset(n, base, k + 1)
        for b in range(level_count(n, k + 1)):
            acc = dtype(static(identity(dtype, op)))
            for j in range(b * BLOCK, min(b * BLOCK + BLOCK, count_in)):
                if static(k == 0):
                    acc = combine(acc, load_input(arr, j, dtype, kind), op)
                else:
                    acc = combine(acc, bit_cast(scratch[in_off + j], dtype), op)
            scratch[out_off + b] = bit_cast(acc, static(scratch_type(dtype)))


@func
def block_prefix(scratch, n, base, b, dtype: template(), op: template(), depth: template()):
    """What precedes block b of level 0 (after `downsweep`): the exclusive prefix stored at level 1."""
    p = dtype(static(identity(dtype, op)))
    if static(depth > 1):
        p = bit_cast(scratch[level_offset(n, base, 1) + b], dtype)
    return p


@func(requires_top_level=True)
def downsweep(scratch, n, base, dtype: template(), op: template(), depth: template()):
    """Levels depth - 1 .. 1 of scratch, top down, become exclusive prefixes of themselves, in place."""
    for t in static(range(depth - 1)):
        k = static(depth - 1 - t)
        off = level_offset(n, base, k)
        above = level_offset(n, base, k + 1)
        count = level_count(n, k)
        for b in range(level_count(n, k + 1)):
            run = dtype(static(identity(dtype, op)))
            if static(k + 1 < depth):
                run = bit_cast(scratch[above + b], dtype)
            for j in range(b * BLOCK, min(b * BLOCK + BLOCK, count)):
                v = bit_cast(scratch[off + j], dtype)
                scratch[off + j] = bit_cast(run, static(scratch_type(dtype)))
                run = combine(run, v, op)


@func(requires_top_level=True)
def scan_counts(arr, scratch, n, kind: template(), depth: template()):
    """The staircase of u32 counts of level 0 (`arr` read as `kind`), summed up and turned into block prefixes."""
    upsweep(arr, scratch, n, 0, dtypes.u32, "add", kind, depth)
    downsweep(scratch, n, 0, dtypes.u32, "add", depth)


@func
def total(scratch, n, base, dtype: template(), op: template(), depth: template()):
    """The `op` of all n inputs after `upsweep` (the identity for n = 0)."""
    r = dtype(static(identity(dtype, op)))
    if n > 0:
        r = bit_cast(scratch[level_offset(n, base, depth)], dtype)
    return r
