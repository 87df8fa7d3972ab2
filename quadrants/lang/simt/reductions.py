"""`qd.simt.subgroup`'s reductions and scans (re-exported there), in the kernel language over the subgroup's shuffles:
trees towards each tile's lane 0 (`reduce_*`), butterflies that leave every lane the result (`reduce_all_*`),
Hillis-Steele scans (`inclusive_*`, `exclusive_*`: the inclusive scan moved up a lane, the operation's identity in
each tile's first lane) and scans that restart at every lane whose head flag is non-zero (`segmented_reduce_*`).
Scans combine the earlier lanes' value first, so `_inclusive_scan_tiled(value, op, log2_size)` also takes a
`qd.func` of an associative operation that does not commute."""

# mypy: disable-error-code="valid-type, operator, no-any-return"

from __future__ import annotations

from quadrants.frontend.func import func
from quadrants.frontend.intrinsics import cast, clz, select, static
from quadrants.lang.simt._lanes import (
    _check_tile,
    _combine,
    _identity,
    _tile_lane,
    ballot,
    invocation_id,
    log2_group_size,
    shuffle_down,
    shuffle_up,
    shuffle_xor,
)
from quadrants.types.annotations import template
from quadrants.types.dtypes import i32, u64


@func
def _reduce_tiled(value, op: template(), log2_size: template()):
    """A tree towards each tile's lane 0 (the other lanes end with partial results)."""
    _check_tile(log2_size)
    for k in static(range(log2_size - 1, -1, -1)):
        value = _combine(value, shuffle_down(value, static(1 << k)), op)
    return value


@func
def _reduce_all_tiled(value, op: template(), log2_size: template()):
    """A butterfly: every lane ends with its tile's result."""
    _check_tile(log2_size)
    for k in static(range(log2_size)):
        value = _combine(value, shuffle_xor(value, static(1 << k)), op)
    return value


@func
def _inclusive_scan_tiled(value, op: template(), log2_size: template()):
    """Hillis-Steele: after step k each lane holds the combination of the 2**(k+1) lanes ending at it (within its
    tile)."""
    _check_tile(log2_size)
    lane = _tile_lane(log2_size)
    for k in static(range(log2_size)):
        below = shuffle_up(value, static(1 << k))
        value = select(lane >= static(1 << k), _combine(below, value, op), value)
    return value


@func
def _exclusive_scan_tiled(value, op: template(), log2_size: template()):
    """The inclusive scan moved up one lane; a tile's first lane gets the operation's identity."""
    before = shuffle_up(_inclusive_scan_tiled(value, op, log2_size), 1)
    return select(_tile_lane(log2_size) == 0, _identity(op, value), before)


@func
def _segment_distance(head_flag, log2_size: template()):
    """How far the lane is past the nearest lane at or below it, in its tile, whose head_flag is non-zero (a tile's
    first lane always starts a segment)."""
    starts = u64(static(sum(1 << b for b in range(0, 32, 1 << log2_size))))
    lane = invocation_id()
    heads = (ballot(head_flag != 0) | starts) & ((u64(2) << cast(lane, u64)) - u64(1))
    return lane - (63 - cast(clz(heads), i32))


@func
def _segmented_tiled(value, head_flag, op: template(), log2_size: template()):
    """An inclusive scan that does not reach across a segment's head."""
    _check_tile(log2_size)
    distance = _segment_distance(head_flag, log2_size)
    for k in static(range(log2_size)):
        below = shuffle_up(value, static(1 << k))
        value = select(distance >= static(1 << k), _combine(below, value, op), value)
    return value


@func
def reduce_add_tiled(value, log2_size: template()):
    return _reduce_tiled(value, "add", log2_size)


@func
def reduce_min_tiled(value, log2_size: template()):
    return _reduce_tiled(value, "min", log2_size)


@func
def reduce_max_tiled(value, log2_size: template()):
    return _reduce_tiled(value, "max", log2_size)


@func
def reduce_all_add_tiled(value, log2_size: template()):
    return _reduce_all_tiled(value, "add", log2_size)


@func
def reduce_all_min_tiled(value, log2_size: template()):
    return _reduce_all_tiled(value, "min", log2_size)


@func
def reduce_all_max_tiled(value, log2_size: template()):
    return _reduce_all_tiled(value, "max", log2_size)


@func
def segmented_reduce_add_tiled(value, head_flag, log2_size: template()):
    return _segmented_tiled(value, head_flag, "add", log2_size)


@func
def segmented_reduce_min_tiled(value, head_flag, log2_size: template()):
    return _segmented_tiled(value, head_flag, "min", log2_size)


@func
def segmented_reduce_max_tiled(value, head_flag, log2_size: template()):
    return _segmented_tiled(value, head_flag, "max", log2_size)


@func
def inclusive_add_tiled(value, log2_size: template()):
    return _inclusive_scan_tiled(value, "add", log2_size)


@func
def inclusive_mul_tiled(value, log2_size: template()):
    return _inclusive_scan_tiled(value, "mul", log2_size)


@func
def inclusive_min_tiled(value, log2_size: template()):
    return _inclusive_scan_tiled(value, "min", log2_size)


@func
def inclusive_max_tiled(value, log2_size: template()):
    return _inclusive_scan_tiled(value, "max", log2_size)


@func
def inclusive_and_tiled(value, log2_size: template()):
    return _inclusive_scan_tiled(value, "and", log2_size)


@func
def inclusive_or_tiled(value, log2_size: template()):
    return _inclusive_scan_tiled(value, "or", log2_size)


@func
def inclusive_xor_tiled(value, log2_size: template()):
    return _inclusive_scan_tiled(value, "xor", log2_size)


@func
def exclusive_add_tiled(value, log2_size: template()):
    return _exclusive_scan_tiled(value, "add", log2_size)


@func
def exclusive_mul_tiled(value, log2_size: template()):
    return _exclusive_scan_tiled(value, "mul", log2_size)


@func
def exclusive_min_tiled(value, log2_size: template()):
    return _exclusive_scan_tiled(value, "min", log2_size)


@func
def exclusive_max_tiled(value, log2_size: template()):
    return _exclusive_scan_tiled(value, "max", log2_size)


@func
def exclusive_and_tiled(value, log2_size: template()):
    return _exclusive_scan_tiled(value, "and", log2_size)


@func
def exclusive_or_tiled(value, log2_size: template()):
    return _exclusive_scan_tiled(value, "or", log2_size)


@func
def exclusive_xor_tiled(value, log2_size: template()):
    return _exclusive_scan_tiled(value, "xor", log2_size)


# the full-subgroup forms


@func
def reduce_add(value):
    return _reduce_tiled(value, "add", static(log2_group_size()))


@func
def reduce_min(value):
    return _reduce_tiled(value, "min", static(log2_group_size()))


@func
def reduce_max(value):
    return _reduce_tiled(value, "max", static(log2_group_size()))


@func
def reduce_all_add(value):
    return _reduce_all_tiled(value, "add", static(log2_group_size()))


@func
def reduce_all_min(value):
    return _reduce_all_tiled(value, "min", static(log2_group_size()))


@func
def reduce_all_max(value):
    return _reduce_all_tiled(value, "max", static(log2_group_size()))


@func
def segmented_reduce_add(value, head_flag):
    return _segmented_tiled(value, head_flag, "add", static(log2_group_size()))


@func
def segmented_reduce_min(value, head_flag):
    return _segmented_tiled(value, head_flag, "min", static(log2_group_size()))


@func
def segmented_reduce_max(value, head_flag):
    return _segmented_tiled(value, head_flag, "max", static(log2_group_size()))


@func
def inclusive_add(value):
    return _inclusive_scan_tiled(value, "add", static(log2_group_size()))


@func
def inclusive_mul(value):
    return _inclusive_scan_tiled(value, "mul", static(log2_group_size()))


@func
def inclusive_min(value):
    return _inclusive_scan_tiled(value, "min", static(log2_group_size()))


@func
def inclusive_max(value):
    return _inclusive_scan_tiled(value, "max", static(log2_group_size()))


@func
def inclusive_and(value):
    return _inclusive_scan_tiled(value, "and", static(log2_group_size()))


@func
def inclusive_or(value):
    return _inclusive_scan_tiled(value, "or", static(log2_group_size()))


@func
def inclusive_xor(value):
    return _inclusive_scan_tiled(value, "xor", static(log2_group_size()))


@func
def exclusive_add(value):
    return _exclusive_scan_tiled(value, "add", static(log2_group_size()))


@func
def exclusive_mul(value):
    return _exclusive_scan_tiled(value, "mul", static(log2_group_size()))


@func
def exclusive_min(value):
    return _exclusive_scan_tiled(value, "min", static(log2_group_size()))


@func
def exclusive_max(value):
    return _exclusive_scan_tiled(value, "max", static(log2_group_size()))


@func
def exclusive_and(value):
    return _exclusive_scan_tiled(value, "and", static(log2_group_size()))


@func
def exclusive_or(value):
    return _exclusive_scan_tiled(value, "or", static(log2_group_size()))


@func
def exclusive_xor(value):
    return _exclusive_scan_tiled(value, "xor", static(log2_group_size()))


__all__ = [
    "reduce_add_tiled",
    "reduce_min_tiled",
    "reduce_max_tiled",
    "reduce_all_add_tiled",
    "reduce_all_min_tiled",
    "reduce_all_max_tiled",
    "segmented_reduce_add_tiled",
    "segmented_reduce_min_tiled",
    "segmented_reduce_max_tiled",
    "inclusive_add_tiled",
    "inclusive_mul_tiled",
    "inclusive_min_tiled",
    "inclusive_max_tiled",
    "inclusive_and_tiled",
    "inclusive_or_tiled",
    "inclusive_xor_tiled",
    "exclusive_add_tiled",
    "exclusive_mul_tiled",
    "exclusive_min_tiled",
    "exclusive_max_tiled",
    "exclusive_and_tiled",
    "exclusive_or_tiled",
    "exclusive_xor_tiled",
    "reduce_add",
    "reduce_min",
    "reduce_max",
    "reduce_all_add",
    "reduce_all_min",
    "reduce_all_max",
    "segmented_reduce_add",
    "segmented_reduce_min",
    "segmented_reduce_max",
    "inclusive_add",
    "inclusive_mul",
    "inclusive_min",
    "inclusive_max",
    "inclusive_and",
    "inclusive_or",
    "inclusive_xor",
    "exclusive_add",
    "exclusive_mul",
    "exclusive_min",
    "exclusive_max",
    "exclusive_and",
    "exclusive_or",
    "exclusive_xor",
]
