"""`quadrants.lang._kernel_types`: the records a kernel keeps about its calls, under Quadrants' names:
`SrcLlCacheObservations` (what fastcache did), `FeLlCacheObservations` (whether the offline cache, keyed on
the lowered kernel, served it) and `LaunchStats` (the native arguments of the last launch, counted by
`KernelBatchedArgType`)."""

from __future__ import annotations

import enum
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any


class KernelBatchedArgType(enum.IntEnum):
    FLOAT = 0
    INT = 1
    UINT = 2
    QD_ARRAY = 3
    QD_ARRAY_WITH_GRAD = 4


@dataclass
class SrcLlCacheObservations:
    """What fastcache did for this kernel (kept from the first call of the process)."""

    cache_key_generated: bool = False
    cache_validated: bool = False
    cache_loaded: bool = False
    cache_stored: bool = False


@dataclass
class FeLlCacheObservations:
    """Whether the offline cache (keyed on the lowered kernel) served a specialization of this program."""

    cache_hit: bool = False


@dataclass
class LaunchStats:
    """The native arguments a launch passes, by kind. Every leaf of the arguments is passed: a dataclass member
    the kernel never reads is counted too (this package does not prune unread members, as Quadrants does)."""

    kernel_args_count_by_type: defaultdict[KernelBatchedArgType, int] = field(
        default_factory=lambda: defaultdict(int)
    )


def launch_stats(args: Any) -> LaunchStats:
    """Count a launcher's ABI arguments (`runtime/abi.ArgABI`): scalars by float / signed / unsigned, arrays as
    QD_ARRAY, or QD_ARRAY_WITH_GRAD for one whose `.grad` travels beside it (that hidden argument is not counted
    again)."""
    counts: defaultdict[KernelBatchedArgType, int] = defaultdict(int)
    names = {a.name for a in args}
    for a in args:
        if a.kind == "ndarray":
            if a.name.endswith(".grad") and a.name[: -len(".grad")] in names:
                continue
            with_grad = a.name + ".grad" in names
            counts[KernelBatchedArgType.QD_ARRAY_WITH_GRAD if with_grad else KernelBatchedArgType.QD_ARRAY] += 1
        elif a.dtype.startswith("f"):
            counts[KernelBatchedArgType.FLOAT] += 1
        elif a.dtype.startswith("u"):
            counts[KernelBatchedArgType.UINT] += 1
        else:
            counts[KernelBatchedArgType.INT] += 1
    return LaunchStats(counts)
