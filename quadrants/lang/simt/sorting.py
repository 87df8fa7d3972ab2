"""`qd.simt.subgroup`'s in-register key/value sort (re-exported there): a bitonic network over shuffles, one pair per
lane, ascending by key then value, on each aligned tile of `2**log2_size` lanes."""

# mypy: disable-error-code="valid-type, operator, no-any-return"

from __future__ import annotations

from quadrants.frontend.func import func
from quadrants.frontend.intrinsics import select, static
from quadrants.lang.simt._lanes import _check_tile, _tile_lane, log2_group_size, shuffle_xor
from quadrants.types.annotations import template


@func
def bitonic_sort_kv_tiled(key, value, log2_size: template()):
    """Sort each tile's (key, value) pairs ascending by key, then value (one pair per lane, in registers): a
    bitonic network of log2_size * (log2_size + 1) / 2 exchange steps. Returns (key, value)."""
    _check_tile(log2_size)
    lane = _tile_lane(log2_size)
    for s in static(range(1, log2_size + 1)):  # merge runs of 2**s lanes
        for t in static(range(s - 1, -1, -1)):  # exchange with the lane 2**t away
            other_key = shuffle_xor(key, static(1 << t))
            other_value = shuffle_xor(value, static(1 << t))
            ascending = (lane & static(1 << s)) == 0
            keep_min = ((lane & static(1 << t)) == 0) == ascending
            other_less = (other_key < key) | ((other_key == key) & (other_value < value))
            take = other_less == keep_min
            key = select(take, other_key, key)
            value = select(take, other_value, value)
    return key, value


@func
def bitonic_sort_kv(key, value):
    return bitonic_sort_kv_tiled(key, value, static(log2_group_size()))


__all__ = ["bitonic_sort_kv_tiled", "bitonic_sort_kv"]
