"""A cached kernel that fills a field (issue 27, gap 1): the fill is part of the cached code, so a kernel loaded
from the cache in a fresh process fills the field at every launch too. The kernel is declared fastcache, as
Genesis' are; a kernel that uses a field never qualifies for fastcache (docs/fastcache.md), so the second
process loads it from the offline cache, compiling nothing."""

from __future__ import annotations

import pytest

from tests.cache.conftest import REPORT

pytestmark = pytest.mark.slow  # the program runs in fresh processes

APP = "import quadrants as qd\n" + REPORT + '''
qd.init(arch=qd.cpu)
grid = qd.field(qd.i32, (16,))

@qd.kernel(fastcache=True)
def count(grid: qd.template(), keys: qd.types.NDArray[qd.i32, 1]) -> qd.i32:
    grid.fill(0)
    for i in range(keys.shape[0]):
        grid[keys[i]] += 1
    return grid[3]

import numpy as np
keys = np.array([3, 3, 5, 3], np.int32)
first = count(grid, keys)
grid[3] = 1000  # stale counts from outside the kernel must not survive the next launch
second = count(grid, keys)
report(first=first, second=second, grid=grid.to_numpy().tolist(), compiles=qd.stats()["compiles"],
       offline_hits=qd.stats()["cache"].get("offline_hits", 0))
'''


def test_a_cached_kernel_fills_at_every_launch(project) -> None:
    project.write("app.py", APP)
    compiled = project.run()
    loaded = project.run()
    assert compiled.out["compiles"] >= 1 and compiled.out["offline_hits"] == 0
    assert loaded.out["compiles"] == 0 and loaded.out["offline_hits"] >= 1  # the cached code, not a recompile
    expected = [0] * 16
    expected[3], expected[5] = 3, 1  # the counts of `keys`
    for run in (compiled, loaded):
        assert run.out["first"] == 3 and run.out["second"] == 3
        assert run.out["grid"] == expected
