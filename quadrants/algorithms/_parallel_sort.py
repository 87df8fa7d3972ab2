"""`qd.algorithms.parallel_sort(keys, values=None)`: sorts a 1-D field's keys ascending in place, moving the
values field (when given) with them, on whatever backend the program runs.

Batcher's odd-even merge sort: log2(N) merge levels p = 1, 2, 4, ... of log2(p) + 1 compare-exchange passes each,
every pass one launch of `_pass` whose parallel loop hands each thread one block of independent
compare-exchanges (so N log^2 N work, no scratch memory, and the same launches on the CPU and on CUDA). Keys of
equal value may be reordered (the sort is not stable), as in Quadrants. As there, the function is deprecated in
favour of a radix sort and says so with a DeprecationWarning.
"""

# mypy: disable-error-code="valid-type, operator"
# (the kernel's annotations are Quadrants types and its body is kernel-language code, not Python mypy can type)

from __future__ import annotations

import warnings
from typing import Any

from quadrants.frontend.intrinsics import static
from quadrants.lang.kernel import kernel
from quadrants.types.annotations import template
from quadrants.types.dtypes import i32


@kernel
def _pass(keys: template(), values: template(), has_values: template(), base: i32, n: i32, p: i32,
          k: i32, blocks: i32):  # fmt: skip
    """One pass of the merge at level `p` comparing elements `k` apart: block `b` starts at k % p + 2kb."""
    for b in range(blocks):
        start = k % p + 2 * k * b
        for i in range(k):
            lo = start + i
            hi = lo + k
            if hi < n and lo // (2 * p) == hi // (2 * p):  # both in the same pair of sorted runs
                if keys[base + lo] > keys[base + hi]:
                    keys[base + lo], keys[base + hi] = keys[base + hi], keys[base + lo]
                    if static(has_values):
                        values[base + lo], values[base + hi] = values[base + hi], values[base + lo]


def parallel_sort(keys: Any, values: Any = None) -> None:
    """Sort the 1-D field `keys` ascending in place; `values` (a field of the same length) is permuted with it."""
    warnings.warn(
        "qd.algorithms.parallel_sort is deprecated (as in Quadrants, which recommends its radix sort, "
        "qd.algorithms.sort)",
        DeprecationWarning,
        stacklevel=2,
    )
    if len(keys.shape) != 1 or (values is not None and tuple(values.shape) != tuple(keys.shape)):
        raise ValueError("parallel_sort sorts a 1-D field; values must be a field of the same shape")
    n = int(keys.shape[0])
    base = int(keys.offset[0]) if keys.offset else 0
    if values is not None and (tuple(values.offset) or (0,)) != (tuple(keys.offset) or (0,)):
        raise ValueError("parallel_sort: keys and values must have the same offset")
    p = 1
    while p < n:
        k = p
        while k >= 1:
            blocks = (n - k - k % p) // (2 * k) + 1
            _pass(keys, values if values is not None else keys, values is not None, base, n, p, k, blocks)
            k //= 2
        p *= 2
