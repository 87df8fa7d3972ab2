"""Arguments are checked on every call, not only the first: integer ranges, element shapes, read-only arrays;
and loops longer than 2**31 iterations run all of them."""

from __future__ import annotations

import mmap

import numpy as np
import pytest

import quadrants as qd
from tests.conftest import qd_init

Nd = qd.types.NDArray


@pytest.fixture(autouse=True)
def _init() -> None:
    qd_init()


@pytest.mark.parametrize(
    ("dtype", "good", "bad"),
    [(qd.i32, [-(2**31), 2**31 - 1], [2**31, -(2**31) - 1, 2**70]), (qd.u8, [0, 255], [256, 300, -1]),
     (qd.i64, [2**63 - 1], [2**63]), (qd.u32, [2**32 - 1], [2**32, -1]), (qd.i8, [-128], [-129])],
)  # fmt: skip
def test_integer_arguments_out_of_range_raise_on_every_call(dtype: object, good: list[int], bad: list[int]) -> None:
    @qd.kernel
    def echo(x: dtype, y: qd.i32) -> qd.i64:  # type: ignore[valid-type]
        return qd.cast(x, qd.i64) + y

    for v in good:  # the first call binds the fast path
        assert echo(v, 0) == v
    for v in bad:
        with pytest.raises(qd.QuadrantsRuntimeTypeError, match=f"'x' = {v} is out of range for {dtype}"):
            echo(v, 0)
        assert echo(good[-1], 0) == good[-1]  # and the fast path still serves good values


def test_vector_element_arguments_are_range_checked() -> None:
    @qd.kernel
    def first(v: qd.types.vector(2, qd.u8)) -> qd.i32:
        return qd.cast(v[0], qd.i32) + v[1]

    assert first(qd.Vector([1, 2])) == 3
    with pytest.raises(qd.QuadrantsRuntimeTypeError, match="out of range for u8"):
        first(qd.Vector([1, 300]))


def test_element_shape_is_checked_after_the_first_call() -> None:
    @qd.kernel
    def last(a: Nd[qd.math.vec3, 1]) -> qd.f32:
        s = 0.0
        for i in range(a.shape[0]):
            s += a[i][2]
        return s

    assert last(np.ones((4, 3), np.float32)) == 4.0
    with pytest.raises((ValueError, qd.QuadrantsRuntimeTypeError), match=r"required element_shape=\(3,\), array with element shape of \(4,\)"):
        last(np.ones((4, 4), np.float32))
    assert last(np.full((2, 3), 2.0, np.float32)) == 4.0


@qd.kernel
def fill(a: Nd[qd.f32, 1]):
    for i in range(a.shape[0]):
        a[i] = 1.0


@qd.kernel
def total(a: Nd[qd.f32, 1]) -> qd.f32:
    s = 0.0
    for i in range(a.shape[0]):
        s += a[i]
    return s


def _read_only_arrays(tmp_path: object) -> list[np.ndarray]:
    ro = np.zeros(4, np.float32)
    ro.flags.writeable = False
    path = f"{tmp_path}/data.bin"
    np.zeros(4, np.float32).tofile(path)
    return [ro, np.frombuffer(bytes(16), np.float32), np.memmap(path, np.float32, mode="r"),
            np.broadcast_to(np.float32(0), (4,))]  # fmt: skip


def test_a_kernel_that_writes_refuses_read_only_arrays(tmp_path: object) -> None:
    fill(np.zeros(4, np.float32))  # the fast path exists before the read-only calls
    for arr in _read_only_arrays(tmp_path):
        with pytest.raises(qd.QuadrantsRuntimeTypeError, match="'a' is a read-only array, but the kernel writes"):
            fill(arr)
        assert not arr.any()


def test_a_kernel_that_only_reads_accepts_read_only_arrays(tmp_path: object) -> None:
    for arr in _read_only_arrays(tmp_path):
        assert total(arr) == 0.0
    with open(f"{tmp_path}/ones.bin", "wb") as f:
        f.write(np.ones(8, np.float32).tobytes())
    with open(f"{tmp_path}/ones.bin", "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as m:
        assert total(np.frombuffer(m, np.float32)) == 8.0


def test_writes_through_a_func_and_atomics_count_as_writes() -> None:
    @qd.func
    def put(a: qd.template(), i: qd.i32):
        qd.atomic_add(a[i], 1.0)

    @qd.kernel
    def k(a: Nd[qd.f32, 1], b: Nd[qd.f32, 1]):
        for i in range(a.shape[0]):
            put(b, i)

    ro = np.zeros(4, np.float32)
    ro.flags.writeable = False
    k(ro, np.zeros(4, np.float32))  # `a` is only read
    with pytest.raises(qd.QuadrantsRuntimeTypeError, match="'b' is a read-only array"):
        k(np.zeros(4, np.float32), ro)


# ---- 64-bit loop counts ----------------------------------------------------------------------------------------


def test_a_loop_with_a_64_bit_bound_runs_every_iteration() -> None:
    @qd.kernel
    def count(n: qd.i64) -> qd.i64:
        c = qd.i64(0)
        for i in range(n):
            c += 1
        return c

    @qd.kernel
    def last_index(n: qd.i64) -> qd.i64:
        m = qd.i64(0)
        for i in range(n - 3, n):
            qd.atomic_max(m, i)
        return m

    n = 2**31 + 5
    assert count(n) == n
    assert last_index(2**40) == 2**40 - 1
    assert count(7) == 7


def test_a_multi_dimensional_loop_over_more_than_2_31_cells() -> None:
    @qd.kernel
    def count(n: qd.i32, m: qd.i32) -> qd.i64:
        c = qd.i64(0)
        for i, j in qd.ndrange(n, m):
            c += 1
        return c

    @qd.kernel
    def corner(n: qd.i32, m: qd.i32) -> qd.i64:
        s = qd.i64(0)
        for i, j in qd.ndrange(n, m):
            if i == n - 1 and j == m - 1:
                s += qd.cast(i, qd.i64) * 100_000 + j
        return s

    assert count(50_000, 50_000) == 2_500_000_000
    assert corner(50_000, 50_000) == 49_999 * 100_000 + 49_999
    assert count(3, 4) == 12
