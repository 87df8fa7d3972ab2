"""One error style at call and run time (README, Arguments): a bad argument is a QuadrantsRuntimeTypeError naming
the parameter, raised from the kernel's call (not a bare ValueError deep in the specializer), and a runtime error
names the kernel by its Python name (not its symbol `qd_<name>_<key>`)."""

from __future__ import annotations

import traceback

import numpy as np
import pytest

import quadrants as qd
from tests.conftest import qd_init

Nd = qd.types.NDArray


def test_a_dtype_mismatch_is_a_runtime_type_error_naming_the_parameter() -> None:
    qd_init()

    @qd.kernel
    def fill(x: Nd[qd.f32, 1]):
        for i in range(x.shape[0]):
            x[i] = 1.0

    with pytest.raises(qd.QuadrantsRuntimeTypeError, match=r"argument x - required array has dtype=f32") as e:
        fill(np.zeros(3, np.float64))
    assert isinstance(e.value, ValueError)  # Quadrants raises ValueError: programs that catch it still do
    internal = [f for f in traceback.extract_tb(e.value.__traceback__) if "/quadrants/" in f.filename]
    assert len(internal) <= 3, [f"{f.filename}:{f.name}" for f in internal]


@pytest.mark.parametrize(
    ("arr", "words"),
    [(np.zeros((3, 2), np.float32), "ndim=1"), (np.zeros(3, np.float64), "dtype=f32")],
)
def test_every_array_mismatch_is_a_runtime_type_error(arr: np.ndarray, words: str) -> None:
    qd_init()

    @qd.kernel
    def total(x: Nd[qd.f32, 1]) -> qd.f32:
        s = 0.0
        for i in range(x.shape[0]):
            s += x[i]
        return s

    with pytest.raises(qd.QuadrantsRuntimeTypeError, match=words):
        total(arr)


def test_a_runtime_error_names_the_kernel_by_its_python_name() -> None:
    qd_init(debug=True)

    @qd.kernel
    def read_past(x: Nd[qd.f32, 1]) -> qd.f32:
        return x[x.shape[0]]

    with pytest.raises(qd.QuadrantsIndexError) as e:
        read_past(np.zeros(4, np.float32))
    assert "(kernel 'read_past')" in str(e.value) and "qd_read_past" not in str(e.value)
