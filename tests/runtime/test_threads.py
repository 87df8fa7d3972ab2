"""Calls of one kernel from several Python threads: each caller gets its own result and its own error."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import quadrants as qd
from tests.conftest import qd_init

Nd = qd.types.NDArray


def _run_threads(n: int, body: Callable[[int], Any]) -> list[Any]:
    out: list[Any] = [None] * n
    start = threading.Barrier(n)

    def run(t: int) -> None:
        start.wait()
        try:
            out[t] = body(t)
        except BaseException as e:  # noqa: BLE001 - reported by the test
            out[t] = e

    threads = [threading.Thread(target=run, args=(t,)) for t in range(n)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    return out


def test_each_thread_reads_its_own_result() -> None:
    qd_init()

    @qd.kernel
    def echo(x: qd.i32, a: Nd[qd.f32, 1]) -> tuple[qd.i32, qd.f32]:
        s = 0.0
        for i in range(a.shape[0]):
            s += a[i]
        return x, s

    arrays = [np.full(256, t, np.float32) for t in range(4)]
    echo(0, arrays[0])  # the owner thread compiles it and binds its fast path

    def body(t: int) -> int:
        wrong = 0
        for k in range(3000):
            x, s = echo(t * 100_000 + k, arrays[t])
            wrong += (x != t * 100_000 + k) or (s != 256.0 * t)
        return wrong

    assert _run_threads(4, body) == [0, 0, 0, 0]
    assert echo(7, arrays[1]) == (7, 256.0)  # the owner's state still works


def test_each_thread_gets_its_own_error() -> None:
    qd_init(debug=True)

    @qd.kernel
    def at(a: Nd[qd.f32, 1], i: qd.i32) -> qd.f32:
        return a[i]

    a = np.arange(8, dtype=np.float32)
    assert at(a, 3) == 3.0

    def body(t: int) -> tuple[int, int]:
        errors = good = 0
        for k in range(400):
            bad = (k + t) % 2 == 0
            try:
                r = at(a, 8 + t if bad else t)
            except qd.QuadrantsIndexError as e:
                errors += bad and f"index {8 + t} " in str(e)
            else:
                good += (not bad) and r == float(t)
        return errors, good

    assert _run_threads(4, body) == [(200, 200)] * 4


@pytest.mark.parametrize("threads", [2, 8])
def test_threads_calling_different_specializations(threads: int) -> None:
    qd_init()

    @qd.kernel
    def total(a: qd.types.NDArray) -> qd.f64:
        s = 0.0
        for i in range(a.shape[0]):
            s += a[i]
        return s

    dtypes = [np.float32, np.float64, np.int32, np.int64]

    def body(t: int) -> bool:
        a = np.arange(1000, dtype=dtypes[t % 4])
        return all(total(a) == 499500.0 for _ in range(200))

    assert all(r is True for r in _run_threads(threads, body))
