"""`qd.algorithms`: device-wide algorithms written in the kernel language.

The composable ops (`reduce_*`, `exclusive_scan_*`, `select`, `reduce_by_key_add`, `sort`) are `@qd.func`s called
at the top level of a kernel, with caller-owned scratch sized by the `*_scratch_slots` helpers (`_scratch.py`,
`_staircase.py` for how they work); `parallel_sort` and `PrefixSumExecutor` are Python-scope and deprecated.
"""

from quadrants.algorithms._compact import reduce_by_key_add, select
from quadrants.algorithms._parallel_sort import parallel_sort
from quadrants.algorithms._prefix_sum import PrefixSumExecutor
from quadrants.algorithms._radix_sort import sort
from quadrants.algorithms._reduce import (
    exclusive_scan_add,
    exclusive_scan_max,
    exclusive_scan_min,
    reduce_add,
    reduce_max,
    reduce_min,
)
from quadrants.algorithms._scratch import (
    exclusive_scan_scratch_slots,
    reduce_by_key_scratch_slots,
    reduce_scratch_slots,
    select_scratch_slots,
    sort_scratch_slots,
)

__all__ = ["PrefixSumExecutor", "exclusive_scan_add", "exclusive_scan_max", "exclusive_scan_min",
           "exclusive_scan_scratch_slots", "parallel_sort", "reduce_add", "reduce_by_key_add",
           "reduce_by_key_scratch_slots", "reduce_max", "reduce_min", "reduce_scratch_slots", "select",
           "select_scratch_slots", "sort", "sort_scratch_slots"]  # fmt: skip
