"""The program's `qd.random()` state: the seed and the count of launches of kernels that draw.

Produced by `qd.init` (lang/program.py) from `random_seed`; consumed by the launchers, which pass both to every
kernel whose ABI says `random` (as its last two native arguments; passes/random_streams.py makes the launch's
key from them). Nothing here is compiled into code: one cached kernel serves every seed.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable

MASK64 = (1 << 64) - 1


class RandomState:
    """`seed`: the u64 the kernels receive (`random_seed` modulo 2**64); `next_launch()`: 0, 1, 2, ... one per
    launch of a kernel that draws, whichever kernel and Python thread (itertools.count is atomic under the GIL),
    so the same program with the same seed draws the same numbers, and no two launches draw the same ones."""

    __slots__ = ("seed", "next_launch")

    def __init__(self, seed: int = 0) -> None:
        self.seed = seed & MASK64
        self.next_launch: Callable[[], int] = itertools.count().__next__
