"""Atomics of a parallel loop on field elements only the owning iteration touches become plain read-modify-write
(passes/demote_atomics.py), and only those; and loops over fields with a trailing extent of 1 walk the right
elements (codegen/lower.py `rows_loop`)."""

from __future__ import annotations

import numpy as np

import quadrants as qd
from quadrants.ir import nodes as ir
from tests.conftest import kernel_ir, qd_init


def _atomics(kernel) -> list[str]:  # type: ignore[no-untyped-def]
    return [s.op for s in ir.walk(kernel_ir(kernel).body) if isinstance(s, ir.AtomicRMW)]


def test_an_update_indexed_by_the_loops_own_coordinates_is_not_atomic() -> None:
    qd_init(offline_cache=False)
    a = qd.field(qd.i32, shape=(6, 4))
    b = qd.field(qd.i32, shape=(6, 4))

    @qd.kernel
    def k():
        for i, j in qd.ndrange(6, 4):
            a[i, j] -= b[i, j]
            a[i, j] += 2 * i + j

    a.from_numpy(np.full((6, 4), 10, np.int32))
    b.from_numpy(np.arange(24, dtype=np.int32).reshape(6, 4))
    k()
    i, j = np.meshgrid(np.arange(6), np.arange(4), indexing="ij")
    np.testing.assert_array_equal(a.to_numpy(), 10 - np.arange(24).reshape(6, 4) + 2 * i + j)
    assert _atomics(k) == []


def test_updates_other_iterations_can_reach_stay_atomic() -> None:
    qd_init(offline_cache=False)
    n = 4096
    a = qd.field(qd.i32, shape=n + 1)
    s = qd.field(qd.i32, shape=n)
    total = qd.field(qd.i32, shape=())

    @qd.kernel
    def neighbour():
        for i in range(n):
            a[i] += 1
            a[i + 1] += 1  # iteration i + 1 updates this element too

    @qd.kernel
    def partial():
        for i, j in qd.ndrange(n // 4, 4):
            s[i] += j  # four iterations share each element

    @qd.kernel
    def shared():
        for i in range(n):
            total[None] += 1

    neighbour()
    partial()
    shared()
    want = np.full(n + 1, 2)
    want[0] = want[-1] = 1
    np.testing.assert_array_equal(a.to_numpy(), want)
    np.testing.assert_array_equal(s.to_numpy()[: n // 4], np.full(n // 4, 6))
    assert total[None] == n
    assert _atomics(neighbour) == ["add", "add"]
    assert _atomics(partial) == ["add"]  # (`shared` is a reduction: per-thread sums, one atomic per thread)


def test_ndarray_arguments_stay_atomic_they_may_alias() -> None:
    qd_init(offline_cache=False)

    @qd.kernel
    def k(x: qd.types.NDArray[qd.i32, 1], y: qd.types.NDArray[qd.i32, 1]):
        for i in range(x.shape[0] - 1):
            x[i] += 1
            y[i + 1] += 1

    x = np.zeros(1000, np.int32)
    k(x, x)  # one buffer: element i is updated by iterations i and i - 1
    want = np.full(1000, 2)
    want[0] = want[-1] = 1
    np.testing.assert_array_equal(x, want)
    assert _atomics(k) == ["add", "add"]


def test_a_used_old_value_stays_atomic() -> None:
    qd_init(offline_cache=False)
    a = qd.field(qd.i32, shape=8)
    old = qd.field(qd.i32, shape=8)

    @qd.kernel
    def k():
        for i in range(8):
            old[i] = qd.atomic_add(a[i], 3)

    a.from_numpy(np.arange(8, dtype=np.int32))
    k()
    np.testing.assert_array_equal(old.to_numpy(), np.arange(8))
    np.testing.assert_array_equal(a.to_numpy(), np.arange(8) + 3)
    assert _atomics(k) == ["add"]


def test_loops_with_trailing_extents_of_one_visit_every_element_once() -> None:
    qd_init(offline_cache=False)
    a = qd.field(qd.i32, shape=(1000, 1))
    c = qd.field(qd.i32, shape=(7, 1, 5, 1))
    hits = qd.field(qd.i32, shape=(7, 1, 5, 1))

    @qd.kernel
    def fill_and_mark():
        a.fill(3)
        for i, j in qd.ndrange(1000, 1):
            a[i, j] += i * 10 + j
        for i, j, k, m in c:
            c[i, j, k, m] = i * 100 + j * 10 + k + m
            qd.atomic_add(hits[i, j, k, m], 1)

    fill_and_mark()
    np.testing.assert_array_equal(a.to_numpy()[:, 0], 3 + np.arange(1000) * 10)
    i, k = np.meshgrid(np.arange(7), np.arange(5), indexing="ij")
    np.testing.assert_array_equal(c.to_numpy()[:, 0, :, 0], i * 100 + k)
    np.testing.assert_array_equal(hits.to_numpy(), 1)
