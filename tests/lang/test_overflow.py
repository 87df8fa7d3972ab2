"""debug=True: integer add, sub, mul and shl that overflow print Quadrants' warning naming the line, and the
kernel goes on with the wrapped result (the same value as without debug). Without debug nothing is checked."""

from __future__ import annotations

import numpy as np
import pytest

import quadrants as qd
from tests.conftest import qd_init
from tests.helpers import define

_SRC = """
@qd.kernel
def k(x: qd.{t}, y: qd.{t}) -> qd.{t}:
    r = x {op} y
    return r
"""
_WORDS = {"+": "Addition", "-": "Subtraction", "*": "Multiplication", "<<": "Shift left"}


def _wrapped(op: str, x: int, y: int, dtype: qd.types.PrimitiveType) -> int:
    exact = {"+": x + y, "-": x - y, "*": x * y, "<<": x << y}[op]
    return int(dtype(exact))


def _cases() -> list[tuple[str, str, int, int, bool]]:
    """(dtype, op, x, y, overflows) at each type's edges, computed from the type's range."""
    cases = []
    for t in (qd.i8, qd.u8, qd.i16, qd.u16, qd.i32, qd.u32, qd.i64, qd.u64):
        lo, hi = t.min_max()
        half = 1 << (t.bits // 2)
        fits = half if t.kind == "uint" else half // 2  # (half - 1) * fits stays within the type
        cases += [
            (t.name, "+", hi, 1, True), (t.name, "+", hi - 1, 1, False),
            (t.name, "-", lo, 1, True), (t.name, "-", lo + 1, 1, False),
            (t.name, "*", half, half, True), (t.name, "*", half - 1, fits, False),
            (t.name, "<<", 2, t.bits - 2 + (t.kind == "uint"), True), (t.name, "<<", 1, t.bits - 2, False),
        ]  # fmt: skip
    return cases


@pytest.mark.parametrize("t, op, x, y, overflows", _cases())
def test_overflow_warns_with_the_line_and_wraps(capfd: pytest.CaptureFixture[str], t: str, op: str, x: int, y: int,
                                                overflows: bool) -> None:  # fmt: skip
    qd_init(debug=True)
    dtype = getattr(qd, t)
    k = define(_SRC.format(t=t, op=op))["k"]
    assert k(x, y) == _wrapped(op, x, y, dtype)
    out = capfd.readouterr().out
    assert (f"{_WORDS[op]} overflow detected in" in out) == overflows, out
    assert ("r = x " + op + " y" in out) == overflows


def test_without_debug_nothing_is_reported(capfd: pytest.CaptureFixture[str]) -> None:
    k = define(_SRC.format(t="i32", op="+"))["k"]
    assert k(2**31 - 1, 1) == -(2**31)
    assert "overflow" not in capfd.readouterr().out


def test_a_parallel_loop_warns_once_per_launch_and_site(capfd: pytest.CaptureFixture[str]) -> None:
    qd_init(debug=True)

    @qd.kernel
    def k(a: qd.types.NDArray[qd.i64, 1]):
        for i in range(a.shape[0]):
            a[i] = a[i] * qd.i64(2**40)
            a[i] = a[i] + 1

    a = np.full(4096, 2**30, np.int64)
    k(a)
    out = capfd.readouterr().out
    assert out.count("Multiplication overflow detected") == 1 and "Addition" not in out
    np.testing.assert_array_equal(a, np.full(4096, 1, np.int64))  # 2**70 wraps to 0, then + 1
    k(np.zeros(8, np.int64))  # the flags were cleared: a launch that does not overflow says nothing
    assert "overflow" not in capfd.readouterr().out
