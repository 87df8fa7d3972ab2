"""The global data access rule: `Tape(validation=True)` under debug=True raises at a write into an element
read before (passes/autodiff/validation.py), and reverse mode refuses a top-level loop that reads a field's
element another iteration writes (passes/autodiff/cross_iter.py)."""

from __future__ import annotations

import numpy as np
import pytest

import quadrants as qd
from quadrants.types.enums import AutodiffMode


def test_validation_raises_at_a_write_after_a_read_and_lets_good_kernels_through() -> None:
    qd.init(arch=qd.cpu, debug=True, log_level="warn")
    x = qd.field(qd.f32, shape=4, needs_grad=True)
    v = qd.Vector.field(2, qd.f32, shape=4, needs_grad=True)
    b = qd.field(qd.f32, shape=(), needs_grad=True)
    loss = qd.field(qd.f32, shape=(), needs_grad=True)
    x.from_numpy(np.arange(4, dtype=np.float32))

    @qd.kernel
    def good() -> None:
        for i in range(4):
            v[i][1] = x[i] * 2.0  # another component of the element than any read
            loss[None] += v[i][1] * x[i]

    @qd.kernel
    def bad() -> None:
        loss[None] = x[1] * b[None]
        b[None] += 100.0

    with qd.ad.Tape(loss=loss, validation=True) as tape:
        good()
        assert [f.autodiff_mode for f, _ in tape.calls] == [AutodiffMode.VALIDATION]
    assert good.autodiff_mode == AutodiffMode.NONE
    np.testing.assert_allclose(x.grad.to_numpy(), 4.0 * np.arange(4))  # d/dx 2x^2
    with pytest.raises(qd.QuadrantsAssertionError, match=r"(?s)global data access rule.*b\[None\] \+= 100"):
        with qd.ad.Tape(loss=loss, validation=True):
            bad()
    bad()  # outside a validating tape: the primal, unchecked


def test_validation_without_debug_warns_and_checks_nothing() -> None:
    x = qd.field(qd.f32, shape=(), needs_grad=True)

    @qd.kernel
    def k() -> None:
        x[None] = x[None] + 1.0

    with pytest.warns(Warning, match="Debug mode is disabled"):
        with qd.ad.Tape(loss=x, validation=True):
            k()


def test_reverse_mode_refuses_cross_iteration_read_after_write() -> None:
    out = qd.field(qd.f32, shape=(4, 2), needs_grad=True)
    s = qd.field(qd.f32, shape=(), needs_grad=True)

    @qd.kernel
    def chain() -> None:
        for i in range(1, 4):
            out[i, 0] = out[i - 1, 0] + s[None]

    @qd.kernel
    def siblings() -> None:
        for i in range(4):
            out[i, 0] = out[i, 1] * s[None]  # a sibling component on a loop-independent axis

    @qd.kernel
    def in_place() -> None:
        for i in range(3):
            out[i + 1, 1] = out[i + 1, 1] + s[None]  # the same index expression (emitted twice)

    with pytest.raises(RuntimeError, match=r"(?s)test_autodiff_validation.py:\d+.*Cross-iteration read-after-write"):
        chain.grad()
    siblings.grad()
    in_place.grad()
