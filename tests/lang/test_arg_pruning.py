"""Members of dataclass and data_oriented arguments that a kernel never reads are not passed (passes/prune_args.py),
as in Quadrants: not counted in `launch_stats`, not marshalled, not checked. Oracles: the members each kernel's
source reads, and numpy for the results."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import quadrants as qd
from quadrants.errors import QuadrantsRuntimeTypeError
from quadrants.lang._kernel_types import KernelBatchedArgType as Kind

Nd = qd.types.NDArray


@dataclasses.dataclass
class State:
    x: Nd[qd.i32, 1]
    unread: Nd[qd.i32, 1]
    k: qd.i32
    small: qd.i8  # read by `scaled` only


@qd.func
def bump(s: State) -> None:
    s.x[0] += s.k


@qd.kernel
def through_func(s: State) -> None:
    bump(s)


@qd.kernel
def scaled(s: State) -> None:
    s.x[1] = s.k * s.small


def _state(small: int = 2) -> State:
    return State(qd.ndarray(qd.i32, (2,)), qd.ndarray(qd.i32, (2,)), 5, small)


def test_only_the_members_read_are_passed_and_counted() -> None:
    s = _state()
    through_func(s)
    counts = through_func._primal.launch_stats.kernel_args_count_by_type
    assert (counts[Kind.QD_ARRAY], counts[Kind.INT]) == (1, 1)  # s.x and s.k, read inside the func
    scaled(s)
    counts = scaled._primal.launch_stats.kernel_args_count_by_type
    assert (counts[Kind.QD_ARRAY], counts[Kind.INT]) == (1, 2)  # s.x, s.k, s.small
    assert s.x.to_numpy().tolist() == [5, 10]


def test_an_unread_member_is_not_checked() -> None:
    s = _state(small=255)  # out of range for i8: an error only where the kernel reads it
    through_func(s)
    through_func(s)  # the fast path too
    assert s.x.to_numpy()[0] == 10
    with pytest.raises(QuadrantsRuntimeTypeError, match="out of range for i8"):
        scaled(s)


def test_a_static_branch_decides_what_is_read() -> None:
    @qd.kernel
    def pick(s: State, use_k: qd.template()) -> None:
        if qd.static(use_k):
            s.x[0] = s.k
        else:
            s.x[0] = s.unread[0]

    s = _state()
    s.unread.from_numpy(np.array([7, 0], np.int32))
    pick(s, True)
    assert s.x.to_numpy()[0] == 5
    assert pick._primal.launch_stats.kernel_args_count_by_type[Kind.QD_ARRAY] == 1
    pick(s, False)
    assert s.x.to_numpy()[0] == 7
    assert pick._primal.launch_stats.kernel_args_count_by_type[Kind.QD_ARRAY] == 2
    assert pick._primal.launch_stats.kernel_args_count_by_type[Kind.INT] == 0


def test_top_level_parameters_are_passed_even_when_unread() -> None:
    @qd.kernel
    def k(a: Nd[qd.i32, 1], b: Nd[qd.i32, 1], n: qd.i32) -> None:
        a[0] = 1

    k(qd.ndarray(qd.i32, (1,)), qd.ndarray(qd.i32, (1,)), 3)
    counts = k._primal.launch_stats.kernel_args_count_by_type
    assert (counts[Kind.QD_ARRAY], counts[Kind.INT]) == (2, 1)


def test_the_same_code_with_other_unread_members_reads_its_own_leaves() -> None:
    """Two data_oriented classes whose kernels compile to the same code (the read members have the same names and
    types) but whose unread members sit elsewhere: each launch must pass its own object's members."""

    @qd.data_oriented
    class A:
        def __init__(self) -> None:
            self.src = qd.ndarray(qd.i32, (3,))
            self.dst = qd.ndarray(qd.i32, (3,))

    @qd.data_oriented
    class B:
        def __init__(self) -> None:
            self.pad0 = qd.ndarray(qd.i32, (3,))
            self.pad1 = qd.ndarray(qd.f32, (3,))
            self.src = qd.ndarray(qd.i32, (3,))
            self.dst = qd.ndarray(qd.i32, (3,))

    @qd.kernel
    def copy(o: qd.template()) -> None:
        for i in range(3):
            o.dst[i] = o.src[i] * 2

    a, b = A(), B()
    a.src.from_numpy(np.array([1, 2, 3], np.int32))
    b.src.from_numpy(np.array([4, 5, 6], np.int32))
    copy(a)
    copy(b)
    assert a.dst.to_numpy().tolist() == [2, 4, 6]
    assert b.dst.to_numpy().tolist() == [8, 10, 12]
    assert b.pad0.to_numpy().tolist() == [0, 0, 0]


def test_internal_views_of_the_specializations() -> None:
    """Quadrants' names for what a kernel compiled: `launch_observations`, `compiled_kernel_data_by_key`,
    `used_py_dataclass_parameters_by_key_enforcing`, `mapper.mapping`, and `launch_kernel` as the general path's
    launch (wrapped here as Quadrants' tests wrap it)."""

    @qd.kernel
    def pick(flag: qd.template(), s: State) -> None:
        if qd.static(flag):
            s.x[0] = s.k

    prim = pick._primal
    assert len(prim.compiled_kernel_data_by_key) == 0
    pick(True, _state())
    assert not prim.launch_observations.found_kernel_in_materialize_cache
    assert prim.used_py_dataclass_parameters_by_key_enforcing[prim._last_launch_key] == {"__qd_s", "__qd_s__qd_x",
                                                                                         "__qd_s__qd_k"}  # fmt: skip
    pick(True, _state())  # another object of the same types: the fast path
    assert prim.launch_observations.found_kernel_in_materialize_cache
    pick(False, _state())
    assert not prim.launch_observations.found_kernel_in_materialize_cache
    assert prim.used_py_dataclass_parameters_by_key_enforcing[prim._last_launch_key] == set()
    assert len(prim.compiled_kernel_data_by_key) == len(prim.mapper.mapping) == 2
    assert prim._last_compiled_kernel_data is prim.compiled_kernel_data_by_key[prim._last_launch_key]

    seen: list[object] = []
    original = type(prim).launch_kernel

    def launch_kernel(self, key, t_kernel, compiled_kernel_data, *args, qd_stream=None):  # type: ignore[no-untyped-def]
        seen.append(compiled_kernel_data)
        return original(self, key, t_kernel, compiled_kernel_data, *args, qd_stream=qd_stream)

    type(prim).launch_kernel = launch_kernel  # type: ignore[method-assign]
    prim._fast.clear()  # the fast paths dropped (each specialization keeps one): the general path
    try:
        s = _state()
        pick(True, s)  # found compiled: its data is handed to the launch
        assert s.x.to_numpy()[0] == 5
    finally:
        type(prim).launch_kernel = original  # type: ignore[method-assign]
    assert seen == [prim.compiled_kernel_data_by_key[prim._last_launch_key]]
