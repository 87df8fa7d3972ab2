"""`qd.ndrange(..., axes=)`: the visit order of a multi-dimensional loop (axis `axes[0]` outermost) while the
loop variables stay the canonical indices. Oracles: a serialized loop's visit counter against the flat index
numpy computes for the permuted nest, and Python-scope iteration against itertools."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import quadrants as qd
from tests.helpers import define


def _visit_numbers(dims: tuple[int, ...], axes: tuple[int, ...]) -> np.ndarray:
    """At each canonical index, its position in the nest that walks `axes[0]` outermost."""
    out = np.zeros(dims, np.int32)
    for n, phys in enumerate(itertools.product(*(range(dims[a]) for a in axes))):
        canonical = [0] * len(dims)
        for p, a in enumerate(axes):
            canonical[a] = phys[p]
        out[tuple(canonical)] = n
    return out


@pytest.mark.parametrize("axes", [(1, 0, 2), (2, 0, 1), (0, 1, 2)])
def test_a_serial_loop_visits_in_axes_order_with_canonical_indices(axes: tuple) -> None:
    ns = define("""
        @qd.kernel
        def visit(order: qd.types.NDArray[qd.i32, 3], axes: qd.template()):
            qd.loop_config(serialize=True)
            n = 0
            for i, j, k in qd.ndrange(order.shape[0], order.shape[1], order.shape[2], axes=axes):
                order[i, j, k] = n
                n += 1
    """)
    order = np.full((2, 3, 4), -1, np.int32)
    ns["visit"](order, axes)
    np.testing.assert_array_equal(order, _visit_numbers((2, 3, 4), axes))


def test_parallel_and_grouped_loops_cover_each_canonical_index_once() -> None:
    ns = define("""
        @qd.kernel
        def cover(x: qd.types.NDArray[qd.i32, 2]):
            for i, j in qd.ndrange((1, 4), 5, axes=(1, 0)):
                x[i, j] += i * 10 + j
            for I in qd.grouped(qd.ndrange(4, 5, axes=(1, 0))):
                x[I] += 1000
            for I in qd.static(qd.grouped(qd.ndrange(2, 2, axes=(1, 0)))):
                x[I] += 100000
    """)
    x = np.zeros((4, 5), np.int32)
    ns["cover"](x)
    idx = np.indices((4, 5))
    expected = np.where(idx[0] >= 1, idx[0] * 10 + idx[1], 0) + 1000
    expected[:2, :2] += 100000
    np.testing.assert_array_equal(x, expected)


def test_python_scope_iteration_and_the_axes_attribute() -> None:
    from quadrants.lang._ndrange import _Ndrange

    assert list(qd.ndrange(2, 3, axes=(1, 0))) == [(i, j) for j in range(3) for i in range(2)]
    assert list(qd.ndrange((1, 3), 2, axes=(0, 1))) == list(qd.ndrange((1, 3), 2))
    assert [tuple(v.to_list()) for v in _Ndrange(2, 2, axes=(1, 0)).grouped()] == [(0, 0), (1, 0), (0, 1), (1, 1)]
    assert qd.ndrange(3, 4, axes=(0, 1)).axes is None and qd.ndrange(3, 4).axes is None
    assert qd.ndrange(3, 4, axes=[1, 0]).axes == (1, 0)
    assert list(qd.ndrange(axes=())) == [()]


@pytest.mark.parametrize(("axes", "error", "words"), [
    ((0, 1, 2), qd.QuadrantsSyntaxError, "has 3 entries but ndrange has 2"),
    ((0, 0), qd.QuadrantsSyntaxError, "is not a permutation"),
    ((0, 2), qd.QuadrantsSyntaxError, "is not a permutation"),
    ((0, "1"), qd.QuadrantsTypeError, "entries must be Python ints"),
    ((True, False), qd.QuadrantsTypeError, "entries must be Python ints"),
])  # fmt: skip
def test_bad_axes_are_refused_in_python_and_in_kernels(axes: tuple, error: type, words: str) -> None:
    with pytest.raises(error, match=words):
        qd.ndrange(4, 5, axes=axes)
    ns = define("""
        @qd.kernel
        def k(x: qd.types.NDArray[qd.i32, 2], axes: qd.template()):
            for i, j in qd.ndrange(4, 5, axes=axes):
                x[i, j] = 1
    """)
    with pytest.raises(error, match=words) as e:
        ns["k"](np.zeros((4, 5), np.int32), axes)
    assert "qd.ndrange(4, 5, axes=axes)" in str(e.value)  # the source line of the call
