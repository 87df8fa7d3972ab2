"""Streams and events (lang/stream.py) and `with qd.stream_parallel():` blocks (frontend/graph.py): the work runs
in order on every backend, so results are those of a serial run; the launches Quadrants refuses a stream for
raise its errors. Oracles: numpy for the values, the serial program for the stream one."""

from __future__ import annotations

import numpy as np
import pytest

import quadrants as qd
from quadrants.lang.stream import Event, Stream

F1 = qd.types.NDArray[qd.f32, 1]


def test_streams_and_events_have_handles_only_where_the_backend_has_streams() -> None:
    """Handle 0 on the CPU (no-op objects); distinct non-zero handles on the CUDA backend (emulated here), and 0
    again once destroyed."""
    s, e = qd.create_stream(), qd.create_event()
    assert isinstance(s, Stream) and isinstance(e, Event)
    on_device = qd.cfg.arch == qd.cuda
    if on_device:
        assert s.handle != 0 and e.handle != 0 and s.handle != e.handle
    else:
        assert (s.handle, e.handle) == (0, 0)
    e.record(s)
    e.wait()
    e.wait(qd_stream=s)
    e.synchronize()
    s.synchronize()
    with qd.create_stream() as t:
        assert (t.handle != 0) == on_device
    assert t.handle == 0
    with pytest.raises(TypeError, match="qd_stream must be"):
        e.record(3)


def test_kernels_on_streams_ordered_by_events_see_each_others_writes() -> None:
    @qd.kernel
    def fill(a: F1, v: qd.f32):
        for i in range(a.shape[0]):
            a[i] = v

    @qd.kernel
    def combine(a: F1, b: F1, out: F1):
        for i in range(out.shape[0]):
            out[i] = a[i] * 10.0 + b[i]

    n = 257
    a, b, out = (qd.ndarray(qd.f32, (n,)) for _ in range(3))
    s1, s2 = qd.create_stream(), qd.create_stream()
    done1, done2 = qd.create_event(), qd.create_event()
    fill(a, 3.0, qd_stream=s1)
    fill(b, 4.0, qd_stream=s2)
    done1.record(s1)
    done2.record(s2)
    done1.wait()
    done2.wait()
    combine(a, b, out)
    combine(a, b, out, qd_stream=None)  # None: the default stream
    np.testing.assert_array_equal(out.to_numpy(), np.full(n, 34.0))
    s1.destroy()
    s1.destroy()  # twice is fine
    assert s1.handle == 0


def test_stream_parallel_blocks_give_the_serial_results() -> None:
    n = 100

    @qd.kernel
    def phases(a: F1, b: F1, v: qd.f32):
        with qd.stream_parallel():
            for i in range(n):
                a[i] = v
            for i in range(n):
                a[i] = a[i] + 1.0  # a later loop of one block sees the earlier one's writes
        with qd.stream_parallel():
            for j in range(n):
                b[j] = v * 2.0

    a, b = qd.ndarray(qd.f32, (n,)), qd.ndarray(qd.f32, (n,))
    for v in (1.0, 5.0):
        phases(a, b, v)
        np.testing.assert_array_equal(a.to_numpy(), np.full(n, v + 1.0))
        np.testing.assert_array_equal(b.to_numpy(), np.full(n, v * 2.0))
    with qd.stream_parallel():  # in Python scope: nothing
        pass


def test_stream_parallel_rules_are_quadrants_errors() -> None:
    x = qd.field(qd.f32, shape=4)

    @qd.kernel
    def mixed():
        with qd.stream_parallel():
            for i in range(4):
                x[i] = 1.0
        for i in range(4):
            x[i] = 2.0

    with pytest.raises(qd.QuadrantsSyntaxError, match="all top-level statements in the kernel must be"):
        mixed()

    @qd.kernel(graph=True)
    def graphed():
        with qd.stream_parallel():
            for i in range(4):
                x[i] = 1.0

    with pytest.raises(qd.QuadrantsSyntaxError, match="not compatible with graph=True"):
        graphed()

    @qd.func
    def helper():
        with qd.stream_parallel():
            for i in range(4):
                x[i] = 1.0

    @qd.kernel
    def through_func():
        helper()

    with pytest.raises(qd.QuadrantsSyntaxError, match="only be used inside @qd.kernel, not @qd.func"):
        through_func()

    @qd.kernel
    def two():
        with qd.stream_parallel(), qd.stream_parallel():
            for i in range(4):
                x[i] = 1.0

    with pytest.raises(qd.QuadrantsSyntaxError, match="single context manager"):
        two()
    bare = qd.stream_parallel

    @qd.kernel
    def not_called():
        with bare:
            for i in range(4):
                x[i] = 1.0

    with pytest.raises(qd.QuadrantsSyntaxError, match="requires a call expression"):
        not_called()


def test_launches_quadrants_refuses_a_stream_for() -> None:
    x = qd.field(qd.f32, shape=(), needs_grad=True)
    loss = qd.field(qd.f32, shape=(), needs_grad=True)

    @qd.kernel
    def compute():
        loss[None] = x[None] ** 2

    @qd.kernel(graph=True)
    def graphed():
        for _ in range(1):
            x[None] = 1.0

    s = qd.create_stream()
    with pytest.raises(RuntimeError, match="not compatible with autodiff"):
        compute.grad(qd_stream=s)
    with pytest.raises(RuntimeError, match="not compatible with graph=True"):
        graphed(qd_stream=s)
    with pytest.raises(RuntimeError, match="not compatible with autograd Tape"):
        with qd.ad.Tape(loss):
            compute(qd_stream=s)
    x[None] = 3.0
    compute(qd_stream=s)  # a plain launch on a stream
    assert loss[None] == 9.0
