"""`qd.simt.block`'s reductions, scans and radix ranking (re-exported there, imported on first use): kernel-language
code over the subgroup library (each warp folds its 32 lanes with shuffles) and block shared memory (the warps'
results meet there). `block_dim` is the task's `qd.loop_config(block_dim=...)`, a compile-time multiple of the
subgroup size; `dtype` is the value's type (the shared memory's).

- `reduce*(value, block_dim[, op], dtype)`: the block's result in thread 0 (the others hold partial results);
  `reduce_all*` give it to every thread.
- `inclusive*` / `exclusive*`: thread i gets op over the values of threads 0..i (0..i-1; thread 0 the identity: the
  typed forms derive it from the dtype, `exclusive_scan(value, block_dim, op, identity, dtype)` takes it).
- `radix_rank_match_atomic_or(key, block_dim, radix_bits, bit_start, num_bits, bins, excl_prefix)`: the key's
  stable rank in the block by its digit `(key >> bit_start) & (2**num_bits - 1)`, with the digits' counts in
  `bins` and their exclusive prefix sums in `excl_prefix` (block shared arrays of 2**radix_bits i32).

Each ends with a block barrier, so a call in a loop never overwrites shared memory another thread still reads.
"""

# mypy: disable-error-code="valid-type, operator, no-any-return, index"

from __future__ import annotations

from quadrants.frontend.func import func
from quadrants.frontend.intrinsics import cast, popcnt, select, static, static_assert
from quadrants.lang.simt._lanes import _combine, _identity, invocation_id, log2_group_size, shuffle_up
from quadrants.lang.simt.block import SharedArray, sync, thread_idx
from quadrants.lang.simt.reductions import _inclusive_scan_tiled, _reduce_all_tiled, _reduce_tiled
from quadrants.lang.simt.subgroup import lanemask_lt
from quadrants.lang.simt.warp import match_any
from quadrants.types.annotations import template
from quadrants.types.dtypes import i32, u32

WARP = 32


@func
def _check_block(block_dim: template()):
    static_assert(isinstance(block_dim, int) and block_dim > 0 and block_dim % WARP == 0 and block_dim <= 1024,
                  "block_dim must be a compile-time multiple of the subgroup size (32), at most 1024")  # fmt: skip
    static_assert(log2_group_size() == 5, "the block operations need a subgroup of 32 lanes (the CUDA backend)")


@func
def reduce(value, block_dim: template(), op: template(), dtype: template()):
    """`op` over the block's values, in thread 0 (`op`: "add", "min", "max", ... or a `qd.func` of two values)."""
    _check_block(block_dim)
    v = _reduce_tiled(value, op, 5)  # each warp's lane 0 holds its warp's result
    if static(block_dim > WARP):
        warps = SharedArray((block_dim // WARP,), dtype)
        tid = thread_idx()
        if tid % WARP == 0:
            warps[tid // WARP] = v
        sync()
        if tid == 0:
            for w in range(1, block_dim // WARP):
                v = _combine(v, warps[w], op)
        sync()
    return v


@func
def reduce_all(value, block_dim: template(), op: template(), dtype: template()):
    """`op` over the block's values, in every thread."""
    _check_block(block_dim)
    v = _reduce_all_tiled(value, op, 5)  # every lane holds its warp's result
    if static(block_dim > WARP):
        warps = SharedArray((block_dim // WARP,), dtype)
        tid = thread_idx()
        if tid % WARP == 0:
            warps[tid // WARP] = v
        sync()
        v = warps[0]
        for w in range(1, block_dim // WARP):
            v = _combine(v, warps[w], op)
        sync()
    return v


@func
def inclusive_scan(value, block_dim: template(), op: template(), dtype: template()):
    """Thread i gets `op` over the values of threads 0..i (earlier threads' first)."""
    _check_block(block_dim)
    v = _inclusive_scan_tiled(value, op, 5)
    if static(block_dim > WARP):
        v = _after_earlier_warps(v, v, block_dim, op, dtype)
    return v


@func
def exclusive_scan(value, block_dim: template(), op: template(), identity, dtype: template()):
    """Thread i gets `op` over the values of threads 0..i-1; thread 0 gets `identity`."""
    _check_block(block_dim)
    inclusive = _inclusive_scan_tiled(value, op, 5)
    v = select(invocation_id() == 0, cast(identity, dtype), shuffle_up(inclusive, 1))
    if static(block_dim > WARP):
        v = _after_earlier_warps(v, inclusive, block_dim, op, dtype)
    return v


@func
def _after_earlier_warps(v, inclusive, block_dim: template(), op: template(), dtype: template()):
    """`v` (a warp's scan) combined after the results of the block's earlier warps (the inclusive scans of their
    last lanes)."""
    warps = SharedArray((block_dim // WARP,), dtype)
    tid = thread_idx()
    if tid % WARP == WARP - 1:
        warps[tid // WARP] = inclusive
    sync()
    w = tid // WARP
    if w > 0:
        before = warps[0]
        for k in range(1, w):
            before = _combine(before, warps[k], op)
        v = _combine(before, v, op)
    sync()
    return v


@func
def reduce_add(value, block_dim: template(), dtype: template()):
    return reduce(value, block_dim, "add", dtype)


@func
def reduce_min(value, block_dim: template(), dtype: template()):
    return reduce(value, block_dim, "min", dtype)


@func
def reduce_max(value, block_dim: template(), dtype: template()):
    return reduce(value, block_dim, "max", dtype)


@func
def reduce_all_add(value, block_dim: template(), dtype: template()):
    return reduce_all(value, block_dim, "add", dtype)


@func
def reduce_all_min(value, block_dim: template(), dtype: template()):
    return reduce_all(value, block_dim, "min", dtype)


@func
def reduce_all_max(value, block_dim: template(), dtype: template()):
    return reduce_all(value, block_dim, "max", dtype)


@func
def inclusive_add(value, block_dim: template(), dtype: template()):
    return inclusive_scan(value, block_dim, "add", dtype)


@func
def inclusive_min(value, block_dim: template(), dtype: template()):
    return inclusive_scan(value, block_dim, "min", dtype)


@func
def inclusive_max(value, block_dim: template(), dtype: template()):
    return inclusive_scan(value, block_dim, "max", dtype)


@func
def exclusive_add(value, block_dim: template(), dtype: template()):
    return exclusive_scan(value, block_dim, "add", _identity("add", cast(value, dtype)), dtype)


@func
def exclusive_min(value, block_dim: template(), dtype: template()):
    return exclusive_scan(value, block_dim, "min", _identity("min", cast(value, dtype)), dtype)


@func
def exclusive_max(value, block_dim: template(), dtype: template()):
    return exclusive_scan(value, block_dim, "max", _identity("max", cast(value, dtype)), dtype)


@func
def radix_rank_match_atomic_or(key, block_dim: template(), radix_bits: template(), bit_start: template(),
                               num_bits: template(), bins, excl_prefix):  # fmt: skip
    """The key's stable rank in the block by its digit: the keys of smaller digits, then those of the same digit
    in earlier threads. Per warp, `match_any` finds the lanes sharing the digit (the rank among them is a
    popcount); each warp's count per digit goes to shared memory, where each digit's thread sums its column."""
    _check_block(block_dim)
    static_assert(block_dim == 1 << radix_bits, "radix_rank_match_atomic_or needs block_dim == 1 << radix_bits")
    static_assert(1 <= num_bits <= radix_bits, "radix_rank_match_atomic_or needs 1 <= num_bits <= radix_bits")
    tid = thread_idx()
    warp, lane = tid // WARP, invocation_id()
    counts = SharedArray((block_dim // WARP, block_dim), i32)  # [warp, digit]: then the earlier warps' counts
    for w in range(block_dim // WARP):
        counts[w, tid] = 0
    sync()
    digit = cast((cast(key, u32) >> static(bit_start)) & static((1 << num_bits) - 1), i32)
    peers = cast(match_any(0xFFFFFFFF, digit), u32)
    before_me = popcnt(peers & lanemask_lt(lane))
    if before_me == 0:  # the lowest lane of its digit writes the warp's count
        counts[warp, digit] = popcnt(peers)
    sync()
    total = 0
    for w in range(block_dim // WARP):  # thread `tid` owns digit `tid`'s column
        c = counts[w, tid]
        counts[w, tid] = total
        total += c
    bins[tid] = total
    excl_prefix[tid] = exclusive_scan(total, block_dim, "add", 0, i32)
    sync()
    rank = excl_prefix[digit] + counts[warp, digit] + before_me
    sync()
    return rank


__all__ = ["reduce", "reduce_all", "reduce_add", "reduce_min", "reduce_max", "reduce_all_add", "reduce_all_min",
           "reduce_all_max", "inclusive_scan", "exclusive_scan", "inclusive_add", "inclusive_min", "inclusive_max",
           "exclusive_add", "exclusive_min", "exclusive_max", "radix_rank_match_atomic_or"]  # fmt: skip
