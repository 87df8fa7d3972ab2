"""A primal kernel passes its ndarray arguments' gradients when it, or a func it calls, reads a `.grad`
(frontend/grad_reads.py); a read the source scan cannot see compiles again with them."""

from __future__ import annotations

from typing import Any

import numpy as np

import quadrants as qd
from quadrants.frontend.grad_reads import reads_grad

Nd = qd.types.NDArray


@qd.func
def _grad_is_nan(a: Nd[qd.f32, 1], i: qd.i32) -> qd.i32:
    return qd.cast(qd.math.isnan(a.grad[i]), qd.i32)


@qd.func
def _through(a: Nd[qd.f32, 1], i: qd.i32) -> qd.i32:
    return _grad_is_nan(a, i)


@qd.kernel
def _count_nan_grads(a: Nd[qd.f32, 1]) -> qd.i32:
    n = 0
    for i in range(a.shape[0]):
        n += _through(a, i)
    return n


@qd.kernel
def _plain(a: Nd[qd.f32, 1]) -> qd.f32:
    s = 0.0
    for i in range(a.shape[0]):
        s += _plain_value(a, i)
    return s


@qd.func
def _plain_value(a: Nd[qd.f32, 1], i: qd.i32) -> qd.f32:
    return a[i] * 2.0


def test_a_grad_read_two_funcs_down_passes_the_gradients() -> None:
    qd.init(arch=qd.cpu)
    a = qd.ndarray(qd.f32, shape=(4,), needs_grad=True)
    a.grad.from_numpy(np.array([0.0, np.nan, 1.0, np.nan], np.float32))
    assert reads_grad(_count_nan_grads.fn)
    before = qd.stats()["compiles"]
    assert _count_nan_grads(a) == 2
    assert qd.stats()["compiles"] == before + 1  # found before compiling: no failed first try


def test_a_kernel_reaching_no_grad_keeps_the_plain_signature() -> None:
    qd.init(arch=qd.cpu)
    assert not reads_grad(_plain.fn)
    a = qd.ndarray(qd.f32, shape=(3,), needs_grad=True)
    a.from_numpy(np.array([1.0, 2.0, 3.0], np.float32))
    assert _plain(a) == 12.0


def test_methods_of_the_kernel_class_are_followed() -> None:
    @qd.data_oriented
    class Solver:
        @qd.func
        def check(self, a: Nd[qd.f32, 1]) -> qd.f32:
            return a.grad[0]

        @qd.kernel
        def step(self, a: Nd[qd.f32, 1]) -> qd.f32:
            return self.check(a)

    assert not reads_grad(Solver.step.fn)  # defined in a function: its class is no global to find it by
    qd.init(arch=qd.cpu)
    a = qd.ndarray(qd.f32, shape=(1,), needs_grad=True)
    a.grad.fill(3.0)
    assert Solver().step(a) == 3.0  # found when it compiles, then compiled again with the gradients


class _Module:
    @qd.func
    def read(a: Any) -> qd.f32:  # noqa: N805 - a func stored on a class, called as _Module.read(a)
        return a.grad[1]


@qd.kernel
def _via_attribute(a: Nd[qd.f32, 1]) -> qd.f32:
    return _Module.read(a)


def test_a_func_reached_through_attributes_is_followed() -> None:
    assert reads_grad(_via_attribute.fn)
    qd.init(arch=qd.cpu)
    a = qd.ndarray(qd.f32, shape=(2,), needs_grad=True)
    a.grad.from_numpy(np.array([0.0, 5.0], np.float32))
    assert _via_attribute(a) == 5.0


@qd.data_oriented
class _Solver:
    @qd.func
    def check(self, a: Nd[qd.f32, 1]) -> qd.f32:
        return a.grad[0] + 1.0

    @qd.kernel
    def step(self, a: Nd[qd.f32, 1]) -> qd.f32:
        return self.check(a)


def test_a_method_of_a_module_level_class_is_followed() -> None:
    assert reads_grad(_Solver.step.fn)
    qd.init(arch=qd.cpu)
    a = qd.ndarray(qd.f32, shape=(1,), needs_grad=True)
    a.grad.fill(2.0)
    before = qd.stats()["compiles"]
    assert _Solver().step(a) == 3.0
    assert qd.stats()["compiles"] == before + 1  # found before compiling: no failed first try
