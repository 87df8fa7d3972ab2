"""`qd.algorithms.PrefixSumExecutor(length).run(arr)`: an inclusive prefix sum of a 1-D i32 tensor in place, from
Python scope. Deprecated in Quadrants (and here, with a DeprecationWarning) in favour of `exclusive_scan_add`,
which it runs, then adding each element to its exclusive prefix. Quadrants offers it on CUDA and Vulkan only;
here it runs on every backend.
"""

# mypy: disable-error-code="valid-type, operator"

from __future__ import annotations

import warnings
from typing import Any

from quadrants.algorithms._reduce import exclusive_scan_add
from quadrants.algorithms._scratch import depth_for, exclusive_scan_scratch_slots
from quadrants.lang.kernel import kernel
from quadrants.types import dtypes
from quadrants.types.annotations import template


@kernel
def _inclusive(arr: template(), tmp: template(), scratch: template(), n: dtypes.i32, depth: template()):
    exclusive_scan_add(arr, tmp, scratch, n, dtypes.i32, depth)
    for i in range(n):
        arr[i] += tmp[i]


class PrefixSumExecutor:
    """Inclusive in-place prefix sums of i32 tensors of up to `length` elements."""

    def __init__(self, length: int) -> None:
        warnings.warn("qd.algorithms.PrefixSumExecutor is deprecated: use qd.algorithms.exclusive_scan_add (a "
                      "@qd.func composed into your kernel) instead", DeprecationWarning, stacklevel=2)  # fmt: skip
        self.sorting_length = int(length)
        self._depth = depth_for(max(self.sorting_length, 1))
        self._buffers: tuple[Any, Any] | None = None

    def run(self, input_arr: Any) -> None:
        from quadrants.lang.field import field

        if getattr(input_arr, "dtype", None) != dtypes.i32:
            raise TypeError(f"PrefixSumExecutor sums i32 tensors only, got {getattr(input_arr, 'dtype', input_arr)}")
        n = int(input_arr.shape[0])
        if n > self.sorting_length:
            raise ValueError(f"PrefixSumExecutor({self.sorting_length}) got {n} elements")
        if self._buffers is None:  # allocated at the first run (fields need an initialized program)
            self._buffers = (field(dtypes.i32, shape=max(self.sorting_length, 1)),
                             field(dtypes.u32, shape=exclusive_scan_scratch_slots(self.sorting_length, self._depth)))  # fmt: skip
        tmp, scratch = self._buffers
        _inclusive(input_arr, tmp, scratch, n, self._depth)
