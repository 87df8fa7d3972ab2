"""What a kernel records about its calls, under Quadrants' names: `launch_stats` (the native arguments of the
last launch, by `KernelBatchedArgType`) and `fe_ll_cache_observations.cache_hit` (the offline cache served
it). Oracles: the argument kinds written in the test, and a second `qd.init` over the same cache folder."""

from __future__ import annotations

import dataclasses

import numpy as np

import quadrants as qd
from quadrants.lang._kernel_types import KernelBatchedArgType
from tests.conftest import qd_init


@dataclasses.dataclass
class Params:
    a: qd.types.NDArray[qd.i32, 1]
    unread: qd.types.NDArray[qd.i32, 1]
    n: qd.i32
    gain: qd.f32


@qd.kernel
def step(p: Params, flag: qd.u8, out: qd.types.NDArray[qd.f32, 1]) -> None:
    p.a[0] += p.n
    out[0] = p.gain * flag


def test_launch_stats_count_the_arguments_of_the_last_launch_by_kind() -> None:
    a, unread = qd.ndarray(qd.i32, (2,)), qd.ndarray(qd.i32, (2,))
    out = np.zeros(1, np.float32)
    assert step._primal.launch_stats.kernel_args_count_by_type[KernelBatchedArgType.QD_ARRAY] == 0  # no launch
    step(Params(a, unread, 3, 2.0), 1, out)
    counts = step._primal.launch_stats.kernel_args_count_by_type
    # p.a and out; the member the kernel never reads is not passed (passes/prune_args.py), as in Quadrants
    assert counts[KernelBatchedArgType.QD_ARRAY] == 2
    assert (counts[KernelBatchedArgType.INT], counts[KernelBatchedArgType.FLOAT], counts[KernelBatchedArgType.UINT]) \
        == (1, 1, 1)  # fmt: skip
    assert counts[KernelBatchedArgType.QD_ARRAY_WITH_GRAD] == 0
    assert a.to_numpy()[0] == 3 and out[0] == 2.0


def test_fe_ll_cache_hit_after_a_new_program_over_the_same_cache(tmp_path) -> None:  # type: ignore[no-untyped-def]
    @qd.kernel
    def bump(x: qd.types.NDArray[qd.i32, 1]) -> None:
        x[0] += 1

    qd_init(offline_cache=True, offline_cache_file_path=str(tmp_path))
    bump(qd.ndarray(qd.i32, (1,)))
    assert not bump._primal.fe_ll_cache_observations.cache_hit  # compiled
    qd_init(offline_cache=True, offline_cache_file_path=str(tmp_path))
    assert not bump._primal.fe_ll_cache_observations.cache_hit  # a new program observes afresh
    bump(qd.ndarray(qd.i32, (1,)))
    assert bump._primal.fe_ll_cache_observations.cache_hit  # served by the offline cache
