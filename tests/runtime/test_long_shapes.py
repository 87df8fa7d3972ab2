"""External arrays (numpy, torch, struct members) whose indexed dimension is 2**31 or more are refused, naming the
parameter, on every call path: kernels read `x.shape[k]` as i32 (as Quadrants does), and a truncated read made
`for i in range(x.shape[0])` run no iteration and return a wrong result in silence. Quadrants 1.3.3 itself
reads such a shape as -2147483632 and runs zero iterations (measured: `/work/ref133`).

The long arrays are anonymous memory maps that no test touches: they cost address space, not memory."""

from __future__ import annotations

import dataclasses
import mmap
import threading

import numpy as np
import pytest

import quadrants as qd
from tests.conftest import qd_init

Nd = qd.types.NDArray
LONG = 2**31 + 16  # the case: 16 elements past the i32 range


@pytest.fixture(autouse=True)
def _init() -> None:
    qd_init()


@pytest.fixture
def long_u8() -> np.ndarray:
    """A writable, C-contiguous u8 array of LONG elements whose pages are never touched (unmapped when the
    last view goes: an error's traceback may hold one a while)."""
    return np.frombuffer(mmap.mmap(-1, LONG, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS), np.uint8)


@qd.kernel
def count(x: Nd[qd.u8, 1]) -> qd.i64:
    n = qd.i64(0)
    for i in range(x.shape[0]):
        n += 1
    return n


@qd.kernel
def count2(x: Nd[qd.u8, 2]) -> qd.i64:
    n = qd.i64(0)
    for i, j in qd.ndrange(x.shape[0], x.shape[1]):
        n += 1
    return n


REFUSED = r"argument x - dimension {} of the array is {}, but kernels read x.shape\[{}\] as i32"


def test_a_long_numpy_array_is_refused_at_its_first_call(long_u8: np.ndarray) -> None:
    with pytest.raises(qd.QuadrantsRuntimeTypeError, match=REFUSED.format(0, LONG, 0) + ".*kernel 'count'"):
        count(long_u8)


def test_a_long_numpy_array_is_refused_by_the_fast_path(long_u8: np.ndarray) -> None:
    assert count(np.zeros(5, np.uint8)) == 5  # binds the fast path
    with pytest.raises(qd.QuadrantsRuntimeTypeError, match=REFUSED.format(0, LONG, 0)):
        count(long_u8)
    assert count(np.zeros(7, np.uint8)) == 7


def test_a_long_dimension_after_the_first_is_refused(long_u8: np.ndarray) -> None:
    assert count2(np.zeros((2, 3), np.uint8)) == 6
    with pytest.raises(qd.QuadrantsRuntimeTypeError, match=REFUSED.format(1, LONG, 1)):
        count2(long_u8.reshape(1, LONG))


def test_an_empty_array_with_a_long_dimension_is_refused() -> None:
    """Size 0 (nothing allocated), but `x.shape[1]` would still be read truncated."""
    assert count2(np.zeros((2, 3), np.uint8)) == 6
    with pytest.raises(qd.QuadrantsRuntimeTypeError, match=REFUSED.format(1, LONG, 1)):
        count2(np.empty((0, LONG), np.uint8))


def test_a_long_element_dimension_is_not_an_indexed_one() -> None:
    """Only the indexed dimensions are read as `x.shape[k]`: a vector element count is compiled in."""

    @qd.kernel
    def rows(x: Nd[qd.types.vector(2, qd.u8), 1]) -> qd.i32:
        return x.shape[0]

    assert rows(np.zeros((3, 2), np.uint8)) == 3


def test_a_long_torch_tensor_is_refused(long_u8: np.ndarray) -> None:
    torch = pytest.importorskip("torch")
    with pytest.raises(qd.QuadrantsRuntimeTypeError, match=REFUSED.format(0, LONG, 0)):
        count(torch.from_numpy(long_u8))


def test_a_long_array_member_of_a_dataclass_is_refused(long_u8: np.ndarray) -> None:
    @dataclasses.dataclass
    class Holder:
        x: Nd[qd.u8, 1]

    @qd.kernel
    def count_member(h: Holder) -> qd.i64:
        n = qd.i64(0)
        for i in range(h.x.shape[0]):
            n += 1
        return n

    assert count_member(Holder(np.zeros(3, np.uint8))) == 3
    with pytest.raises(qd.QuadrantsRuntimeTypeError, match=r"dimension 0 of the array is 2147483664"):
        count_member(Holder(long_u8))


def test_a_long_array_from_another_thread_is_refused(long_u8: np.ndarray) -> None:
    """A thread other than the fast path's owner is launched through the general path's marshalling."""
    assert count(np.zeros(5, np.uint8)) == 5
    errors: list[BaseException] = []

    def call() -> None:
        try:
            count(long_u8)
        except BaseException as e:  # noqa: BLE001 - handed to the test thread
            errors.append(e)

    t = threading.Thread(target=call)
    t.start()
    t.join()
    assert len(errors) == 1 and isinstance(errors[0], qd.QuadrantsRuntimeTypeError)
    assert "dimension 0 of the array is 2147483664" in str(errors[0])
