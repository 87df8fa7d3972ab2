"""`qd.simt.subgroup`: the threads of one subgroup (a CUDA warp, 32 lanes) working together without shared memory.

The primitives (`shuffle*`, `broadcast`, `invocation_id`, `ballot`, `sync`, `mem_fence`) become `ir.Simt`
statements (frontend/simt_calls.py); everything else here is code in the kernel language on top of them, inlined
into the calling kernel and unrolled at compile time: votes, lane masks, reductions, scans, segmented reductions
and a bitonic key/value sort. Each reduction, scan or vote has a `_tiled(..., log2_size)` form working on
independent aligned tiles of `2**log2_size` lanes (a compile-time template), and a full-subgroup form.

As in Quadrants: call these from uniform control flow with every lane of the subgroup active; `reduce_*` leave the
result in each tile's first lane (the others hold partial results), `reduce_all_*`, scans, votes and segmented
reductions give every lane its tile's (or its own prefix's) result. They need the CUDA backend (a GPU, or the
emulator); the CPU backend refuses a kernel that uses one, with its location (Quadrants 1.3.3 aborts there).
`group_size()` is 32 on the CUDA backend and 0 elsewhere, as Quadrants reports it.
"""

# mypy: disable-error-code="valid-type, operator, no-any-return"

from __future__ import annotations

import warnings
from typing import Any

from quadrants.frontend.func import func
from quadrants.frontend.intrinsics import DEPRECATED, cast, static, static_assert
from quadrants.lang.simt._lanes import (  # noqa: F401  - the primitives, qd.simt.subgroup's names
    _check_tile,
    _vote_all,
    _vote_any,
    ballot,
    broadcast,
    group_size,
    invocation_id,
    log2_group_size,
    mem_fence,
    shuffle,
    shuffle_down,
    shuffle_up,
    shuffle_xor,
    sync,
)
from quadrants.lang.simt.reductions import (  # noqa: F401  - reductions and scans, qd.simt.subgroup's names
    exclusive_add,
    exclusive_add_tiled,
    exclusive_and,
    exclusive_and_tiled,
    exclusive_max,
    exclusive_max_tiled,
    exclusive_min,
    exclusive_min_tiled,
    exclusive_mul,
    exclusive_mul_tiled,
    exclusive_or,
    exclusive_or_tiled,
    exclusive_xor,
    exclusive_xor_tiled,
    inclusive_add,
    inclusive_add_tiled,
    inclusive_and,
    inclusive_and_tiled,
    inclusive_max,
    inclusive_max_tiled,
    inclusive_min,
    inclusive_min_tiled,
    inclusive_mul,
    inclusive_mul_tiled,
    inclusive_or,
    inclusive_or_tiled,
    inclusive_xor,
    inclusive_xor_tiled,
    reduce_add,
    reduce_add_tiled,
    reduce_all_add,
    reduce_all_add_tiled,
    reduce_all_max,
    reduce_all_max_tiled,
    reduce_all_min,
    reduce_all_min_tiled,
    reduce_max,
    reduce_max_tiled,
    reduce_min,
    reduce_min_tiled,
    segmented_reduce_add,
    segmented_reduce_add_tiled,
    segmented_reduce_max,
    segmented_reduce_max_tiled,
    segmented_reduce_min,
    segmented_reduce_min_tiled,
)
from quadrants.lang.simt.sorting import bitonic_sort_kv, bitonic_sort_kv_tiled  # noqa: F401
from quadrants.types.annotations import template
from quadrants.types.dtypes import i32, u32

# ---- deprecated names (one DeprecationWarning each per process; kernels: frontend/simt_calls.py) ---------------

# (module flags, by Quadrants' names: a test may set one back to False to see the warning again)
_barrier_deprecation_warned = False
_memory_barrier_deprecation_warned = False
_ballot_full_subgroup_deprecation_warned = False


def _warn_once(old: str) -> None:
    flag = f"_{old}_deprecation_warned"
    if not globals()[flag]:
        globals()[flag] = True
        warnings.warn(DEPRECATED[f"simt.subgroup.{old}"][1], DeprecationWarning, stacklevel=3)


def barrier() -> Any:
    _warn_once("barrier")
    return sync()


def memory_barrier() -> Any:
    _warn_once("memory_barrier")
    return mem_fence()


def ballot_full_subgroup(predicate: Any) -> Any:
    _warn_once("ballot_full_subgroup")
    return ballot(predicate)


barrier.__qd_intrinsic__ = "simt.subgroup.barrier"  # type: ignore[attr-defined]
memory_barrier.__qd_intrinsic__ = "simt.subgroup.memory_barrier"  # type: ignore[attr-defined]
ballot_full_subgroup.__qd_intrinsic__ = "simt.subgroup.ballot_full_subgroup"  # type: ignore[attr-defined]


# ---- identification, votes, lane masks -----------------------------------------------------------------------


@func
def elect():
    """1 on the subgroup's lane 0, 0 elsewhere (an i32)."""
    return cast(invocation_id() == 0, i32)


@func
def broadcast_first(value):
    return broadcast(value, 0)


@func
def ballot_first_n(predicate, n: template()):
    """A u32 of lanes [0, n) whose predicate is non-zero (n a compile-time 1..32)."""
    static_assert(1 <= n <= 32, "ballot_first_n: n must be in [1, 32]")
    return cast(ballot(predicate), u32) & u32(static((1 << n) - 1))


@func
def lanemask_lt(lane_id):
    return (u32(1) << cast(lane_id, u32)) - u32(1)


@func
def lanemask_le(lane_id):
    return lanemask_lt(lane_id) | lanemask_eq(lane_id)


@func
def lanemask_eq(lane_id):
    return u32(1) << cast(lane_id, u32)


@func
def lanemask_gt(lane_id):
    return ~lanemask_le(lane_id)


@func
def lanemask_ge(lane_id):
    return ~lanemask_lt(lane_id)


@func
def all_true_tiled(predicate, log2_size: template()):
    """1 on every lane of a tile whose lanes' predicates are all non-zero, else 0 (an i32)."""
    _check_tile(log2_size)
    p = cast(predicate != 0, i32)
    if static(log2_size == 5):  # the whole warp: one vote
        p = _vote_all(p)
    else:
        for k in static(range(log2_size)):
            p = p & shuffle_xor(p, static(1 << k))
    return p


@func
def any_true_tiled(predicate, log2_size: template()):
    """1 on every lane of a tile where some lane's predicate is non-zero, else 0 (an i32)."""
    _check_tile(log2_size)
    p = cast(predicate != 0, i32)
    if static(log2_size == 5):
        p = _vote_any(p)
    else:
        for k in static(range(log2_size)):
            p = p | shuffle_xor(p, static(1 << k))
    return p


@func
def all_equal_tiled(value, log2_size: template()):
    """1 on every lane of a tile whose lanes all hold the same value (by `==`: NaN differs from itself)."""
    first = shuffle(value, invocation_id() & static(~((1 << log2_size) - 1)))
    return all_true_tiled(value == first, log2_size)


@func
def all_true(predicate):
    return all_true_tiled(predicate, static(log2_group_size()))


@func
def any_true(predicate):
    return any_true_tiled(predicate, static(log2_group_size()))


@func
def all_equal(value):
    return all_equal_tiled(value, static(log2_group_size()))


__all__ = [
    "sync", "mem_fence", "barrier", "memory_barrier", "elect", "ballot_first_n", "ballot", "ballot_full_subgroup",
    "all_true_tiled", "any_true_tiled", "all_equal_tiled", "broadcast_first", "lanemask_lt", "lanemask_le",
    "lanemask_eq", "lanemask_gt", "lanemask_ge", "group_size", "log2_group_size", "invocation_id",
    "reduce_add_tiled", "reduce_all_add_tiled", "reduce_min_tiled", "reduce_max_tiled", "reduce_all_min_tiled",
    "reduce_all_max_tiled", "segmented_reduce_add_tiled", "segmented_reduce_min_tiled", "segmented_reduce_max_tiled",
    "inclusive_add_tiled", "inclusive_mul_tiled", "inclusive_min_tiled", "inclusive_max_tiled", "inclusive_and_tiled",
    "inclusive_or_tiled", "inclusive_xor_tiled", "exclusive_add_tiled", "exclusive_mul_tiled", "exclusive_min_tiled",
    "exclusive_max_tiled", "exclusive_and_tiled", "exclusive_or_tiled", "exclusive_xor_tiled", "shuffle",
    "shuffle_xor", "shuffle_up", "shuffle_down", "broadcast", "all_true", "any_true", "all_equal", "reduce_add",
    "reduce_all_add", "reduce_min", "reduce_max", "reduce_all_min", "reduce_all_max", "segmented_reduce_add",
    "segmented_reduce_min", "segmented_reduce_max", "inclusive_add", "inclusive_mul", "inclusive_min",
    "inclusive_max", "inclusive_and", "inclusive_or", "inclusive_xor", "exclusive_add", "exclusive_mul",
    "exclusive_min", "exclusive_max", "exclusive_and", "exclusive_or", "exclusive_xor", "bitonic_sort_kv_tiled",
    "bitonic_sort_kv",
]  # fmt: skip
