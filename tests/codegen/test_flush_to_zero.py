"""Kernels flush denormal results to zero, as Quadrants does on the CPU: constants at compile time, arithmetic
in the serial code and on the parallel workers; denormal inputs are kept, and the caller's mode is restored."""

from __future__ import annotations

import numpy as np
import pytest

import quadrants as qd
from tests.conftest import qd_init

Nd = qd.types.NDArray
# the smallest normal numbers: below them a result is denormal (numpy computes them so, as IEEE says)
TINY = {qd.f32: float(np.finfo(np.float32).tiny), qd.f64: float(np.finfo(np.float64).tiny)}


@pytest.fixture(autouse=True)
def _init() -> None:
    qd_init()


@pytest.mark.parametrize("dt", [qd.f32, qd.f64])
def test_denormal_results_are_zero_in_serial_and_parallel_code(dt: object) -> None:
    np_dt = np.float32 if dt is qd.f32 else np.float64
    tiny = TINY[dt]  # type: ignore[index]
    out = qd.ndarray(dt, (4,))
    par = qd.ndarray(dt, (100_000,))

    @qd.kernel
    def serial(out: Nd[dt, 1], t: dt):  # type: ignore[valid-type]
        out[0] = tiny / 4  # a compile-time constant
        out[1] = t / 4  # computed at run time
        out[2] = t  # a denormal-free input, moved as it is
        out[3] = t * 2

    @qd.kernel
    def parallel(x: Nd[dt, 1], t: dt):  # type: ignore[valid-type]
        for i in range(x.shape[0]):
            x[i] = t / (4 + i % 3)

    assert np_dt(tiny) / np_dt(4) != 0  # IEEE (numpy): a denormal
    serial(out, tiny)
    assert out.to_numpy().tolist() == [0.0, 0.0, tiny, 2 * tiny]
    parallel(par, tiny)
    assert np.count_nonzero(par.to_numpy()) == 0
    # the caller's floating-point mode is restored: numpy in this thread still computes denormals
    assert np_dt(tiny) / np_dt(4) != 0


def test_denormal_inputs_are_kept() -> None:
    """Only results flush (Quadrants sets FTZ, not DAZ): a denormal argument or array element reads as itself."""
    x = np.array([1e-40, 0.0], dtype=np.float32)

    @qd.kernel
    def scale(x: Nd[qd.f32, 1], t: qd.f32) -> qd.f32:
        x[1] = x[0] * 1e30  # a normal result of a denormal input (with DAZ it would be 0)
        return t

    assert scale(x, 1e-40) == float(np.float32(1e-40))
    assert x[1] == pytest.approx(1e-10, rel=1e-3)


def test_constants_flush_by_their_type() -> None:
    """f32 and f64 constants below the type's smallest normal number are zeros of their sign; f16 keeps its
    denormals (so does Quadrants 1.3.3: 1e-7 stays 1.2e-7 in an f16 field)."""
    from quadrants.codegen.lower import flush_denormal

    assert flush_denormal(1e-45, qd.f32) == 0.0 and str(flush_denormal(-1e-45, qd.f32)) == "-0.0"
    assert flush_denormal(1e-45, qd.f64) == 1e-45 and flush_denormal(1e-320, qd.f64) == 0.0
    assert flush_denormal(TINY[qd.f32], qd.f32) == TINY[qd.f32] and flush_denormal(1e-7, qd.f16) == 1e-7
