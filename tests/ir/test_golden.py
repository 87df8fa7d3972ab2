"""Golden IR text for a few kernels: the frontend and passes' output, reviewed as diffs.

Regenerate with `pytest tests/ir/test_golden.py --update-golden` and read the diff.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import quadrants as qd
from quadrants.driver.build import build_ir
from quadrants.frontend.records import ParamSpec, SpecKind
from quadrants.ir.printer import format_kernel
from quadrants.runtime.ndarray import nd_type

GOLDEN = Path(__file__).parent.parent / "golden"
Nd = qd.types.NDArray


@qd.kernel
def saxpy(a: qd.f32, x: Nd[qd.f32, 1], y: Nd[qd.f32, 1]):
    for i in range(x.shape[0]):
        y[i] = a * x[i] + y[i]


@qd.kernel
def total(x: Nd[qd.f32, 1], s: Nd[qd.f32, 1]) -> qd.f32:
    acc = 0.0
    for i in range(x.shape[0]):
        s[0] += x[i]
        acc += x[i] * 2
    return acc


@qd.func
def sq(v):
    return v * v


@qd.kernel
def control(a: Nd[qd.i32, 2], n: qd.template()) -> qd.i32:
    c = 0
    for i, j in qd.ndrange(a.shape[0], (1, a.shape[1])):
        k = 0
        while k < n:
            if a[i, j] > k and k % 2 == 0:
                a[i, j] = sq(k)
            k += 1
    for p in qd.static(range(n)):
        c += p
    return c


CASES = {
    "saxpy": (saxpy, [ParamSpec("a", SpecKind.SCALAR, qd.f32), ParamSpec("x", SpecKind.NDARRAY, nd_type(qd.f32, 1)),
                      ParamSpec("y", SpecKind.NDARRAY, nd_type(qd.f32, 1))], ()),
    "total": (total, [ParamSpec("x", SpecKind.NDARRAY, nd_type(qd.f32, 1)), ParamSpec("s", SpecKind.NDARRAY, nd_type(qd.f32, 1))],
              (qd.f32,)),
    "control": (control, [ParamSpec("a", SpecKind.NDARRAY, nd_type(qd.i32, 2)), ParamSpec("n", SpecKind.TEMPLATE, value=3)],
                (qd.i32,)),
}  # fmt: skip


@pytest.mark.parametrize("name", list(CASES))
def test_golden_ir(name: str, update_golden: bool) -> None:
    kernel, params, rets = CASES[name]
    from quadrants.lang.program import get

    result = build_ir(kernel.source, name, params, rets, get().config)
    text = format_kernel(result.kernel)
    path = GOLDEN / f"{name}.ir"
    if update_golden or not path.exists():
        path.write_text(text)
    assert text == path.read_text()
