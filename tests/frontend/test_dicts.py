"""Dict displays and dict comprehensions in kernels: compile-time Python dicts whose values may be runtime values
(as in Quadrants), read with compile-time keys; `sum()` over them."""

from __future__ import annotations

import pytest

import quadrants as qd
from tests.conftest import qd_init


def test_a_dict_of_runtime_values_is_read_by_constant_keys() -> None:
    qd_init()

    @qd.kernel
    def k(u: qd.i32, v: qd.f32) -> qd.f32:
        x = {"foo": 2 + u, "bar": 3 + v}
        y = {**x, "baz": x["foo"] * 2}
        return y["foo"] * 100 + y["bar"] + y["baz"]

    assert k(2, 0.25) == pytest.approx(400 + 3.25 + 8)


def test_a_dict_comprehension_unrolls_with_its_conditions_and_sums() -> None:
    qd_init()
    a = qd.field(qd.i32, shape=8)

    @qd.kernel
    def k() -> qd.i32:
        d = {j: a[j] * j for j in range(8) if j % 2 == 1 if j < 6}
        return sum(d.values()) + sum([a[0], a[1]], 100)

    for i in range(8):
        a[i] = i + 1
    assert k() == (2 * 1 + 4 * 3 + 6 * 5) + 100 + 1 + 2


def test_a_dict_comprehension_over_a_runtime_range_is_refused() -> None:
    qd_init()

    @qd.kernel
    def k(n: qd.i32) -> qd.i32:
        d = {j: j for j in range(n)}
        return d[0]

    with pytest.raises(qd.QuadrantsCompilationError, match=r"range\(\) with runtime bounds"):
        k(3)
