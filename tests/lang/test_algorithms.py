"""qd.algorithms.parallel_sort against numpy's sort: dtypes, lengths around powers of two, offsets, keys only."""

from __future__ import annotations

import numpy as np
import pytest

import quadrants as qd


@pytest.mark.parametrize("dt", [qd.i32, qd.f32, qd.u8, qd.f64])
@pytest.mark.parametrize("n", [1, 2, 7, 64, 1000])
def test_parallel_sort_sorts_keys_and_moves_values(dt: qd.types.PrimitiveType, n: int) -> None:
    keys, values = qd.field(dt, n, offset=-5), qd.field(qd.i32, n, offset=-5)
    rng = np.random.default_rng(n)
    k = (rng.random(n) * min(n, 200)).astype(dt.np_dtype)
    keys.from_numpy(k)
    values.from_numpy(np.arange(n, dtype=np.int32))
    with pytest.warns(DeprecationWarning):
        qd.algorithms.parallel_sort(keys, values)
    kh, vh = keys.to_numpy(), values.to_numpy()
    np.testing.assert_array_equal(kh, np.sort(k))
    np.testing.assert_array_equal(k[vh], kh)  # each value moved with its key
    assert sorted(vh) == list(range(n))


def test_parallel_sort_of_keys_alone_and_bad_shapes() -> None:
    keys = qd.field(qd.f32, 33)
    k = np.random.default_rng(1).normal(size=33).astype(np.float32)
    keys.from_numpy(k)
    with pytest.warns(DeprecationWarning):
        qd.algorithms.parallel_sort(keys)
    np.testing.assert_array_equal(keys.to_numpy(), np.sort(k))
    with pytest.raises(ValueError, match="1-D"), pytest.warns(DeprecationWarning):
        qd.algorithms.parallel_sort(qd.field(qd.f32, (4, 4)))
