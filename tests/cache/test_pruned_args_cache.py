"""A fastcache kernel whose dataclass argument has members it never reads, across processes: the entry records
which leaves the launch passes (passes/prune_args.py), so the kernel loaded in a new process passes the same
members as the compiled one, counts the same arguments and writes the same results."""

from __future__ import annotations

import pytest

from tests.cache.conftest import LOADED, REPORT, STORED

pytestmark = pytest.mark.slow  # every test runs its program in fresh processes

APP = (
    "import sys, dataclasses\nimport numpy as np\nimport quadrants as qd\n"
    + REPORT
    + """
from quadrants.lang._kernel_types import KernelBatchedArgType as Kind
qd.init(arch=qd.cpu)

@dataclasses.dataclass
class Sim:
    pad: qd.types.NDArray[qd.f32, 1]
    x: qd.types.NDArray[qd.i32, 1]
    unused_n: qd.i8
    gain: qd.i32

@qd.kernel(fastcache=True)
def step(s: Sim, base: qd.i32):
    for i in range(s.x.shape[0]):
        s.x[i] = base + i * s.gain

gain, unused = int(sys.argv[1]), int(sys.argv[2])
sim = Sim(qd.ndarray(qd.f32, 3), qd.ndarray(qd.i32, 4), unused, gain)
step(sim, 100)
counts = step._primal.launch_stats.kernel_args_count_by_type
report(x=sim.x.to_numpy().tolist(), arrays=counts[Kind.QD_ARRAY], ints=counts[Kind.INT])
"""
)


def test_a_fastcache_kernel_with_unread_members_loads_and_passes_the_same_leaves(project) -> None:
    project.write("app.py", APP)
    compiled = project.run("2", "1")
    loaded = project.run("3", "300")  # an unread i8 member out of its range: never passed, never checked
    assert compiled.out["step"] == STORED and loaded.out["step"] == LOADED
    assert compiled.out["x"] == [100, 102, 104, 106] and loaded.out["x"] == [100, 103, 106, 109]
    for run in (compiled, loaded):
        assert (run.out["arrays"], run.out["ints"]) == (1, 2)  # s.x; s.gain and base
