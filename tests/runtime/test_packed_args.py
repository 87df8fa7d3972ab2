"""Kernels of many native arguments take them packed (runtime/abi.py MAX_DIRECT_ARGS): ctypes cannot call a
function of more than 1024 arguments, nor a CUDA kernel take more than 4 KiB of parameters. Each case runs twice
(the general path, then the generated fast path) and on both sides of the limit."""

from __future__ import annotations

import numpy as np
import pytest

import quadrants as qd
from quadrants.runtime.abi import MAX_DIRECT_ARGS, packs_args


def test_a_1024_component_vector_argument() -> None:
    vec1024 = qd.types.vector(1024, qd.i32)

    @qd.kernel
    def total(a: vec1024) -> qd.i32:
        ret = 0
        for i in range(1024):
            ret += a[i]
        return ret

    a = vec1024(list(range(1024)))
    assert total(a) == 523776
    assert total(a) == 523776
    assert total(vec1024([1] * 1024)) == 1024


def test_every_kind_of_argument_around_the_limit() -> None:
    for n in (MAX_DIRECT_ARGS - 6, MAX_DIRECT_ARGS - 5, MAX_DIRECT_ARGS + 40, 1100):  # (1100: past ctypes' 1024)
        _every_kind_of_argument(n)


def _every_kind_of_argument(n: int) -> None:
    vec = qd.types.vector(n, qd.f32)

    @qd.kernel
    def mixed(x: qd.types.ndarray(), a: vec, s: qd.f64, h: qd.f16, k: qd.u8,
              y: qd.types.ndarray(dtype=qd.math.vec2, ndim=2)) -> qd.f64:  # fmt: skip
        t = 0.0
        for i in range(n):
            t += a[i] * (i % 3)
        for i in range(x.shape[0]):
            x[i] = t + i
        y[1, 2] = [s, h]
        return t + s + h + k

    assert packs_args(n + 5) == (n + 5 > MAX_DIRECT_ARGS)
    values = np.arange(n, dtype=np.float32) / 4
    want = float((values * (np.arange(n) % 3)).astype(np.float32).sum(dtype=np.float32))
    for _ in range(2):
        x = np.zeros(5, np.float32)
        y = qd.ndarray(qd.math.vec2, (3, 4))
        got = mixed(x, vec(values.tolist()), 2.25, 0.5, 7, y)
        assert got == pytest.approx(want + 2.25 + 0.5 + 7, rel=1e-5)
        np.testing.assert_allclose(x, want + np.arange(5), rtol=1e-5)
        np.testing.assert_array_equal(y[1, 2].to_numpy(), [2.25, 0.5])


def test_a_packed_argument_out_of_its_range_is_refused() -> None:
    vec = qd.types.vector(MAX_DIRECT_ARGS + 1, qd.i32)

    @qd.kernel
    def first(a: vec, k: qd.u8) -> qd.i32:
        return a[0] + k

    a = vec([3] * (MAX_DIRECT_ARGS + 1))
    assert first(a, 4) == 7
    with pytest.raises(qd.QuadrantsRuntimeTypeError, match="out of range for u8"):
        first(a, 300)
