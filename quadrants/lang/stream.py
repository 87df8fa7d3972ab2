"""Streams and events (`qd.create_stream`, `qd.create_event`, `kernel(..., qd_stream=s)`, `qd.stream_parallel()`),
under Quadrants' names (`quadrants.lang.stream.Stream` / `Event`).

Quadrants runs kernels given a stream, and the `with qd.stream_parallel():` blocks of a kernel, on separate GPU
streams so they may overlap; on the CPU its streams are no-op objects (handle 0) and the work runs in order.
Here every backend runs in order: a launch is complete (or, on CUDA, ordered on the one stream this package
uses) before the next begins, so a program written for streams gets the results it would get from any
interleaving its events allow, without the overlap. A stream or event on the CUDA backend is a live token
(handle non-zero until destroyed) whose `synchronize` waits for the device; on the CPU it is handle 0 and every
operation returns at once, as in Quadrants.

`qd.stream_parallel()` inside a kernel is translated by the frontend (frontend/graph.py): its blocks run one
after another. Called from Python scope it does nothing.
"""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import Iterator
from typing import Any

from quadrants.lang import program

_handles = itertools.count(1)


def _device_handle() -> int:
    """A fresh handle on a backend with streams (CUDA, real or emulated), 0 on the CPU."""
    prog = program.get()
    return next(_handles) if prog.device is not None else 0


class _Handle:
    """What a stream and an event share: a handle (0 once destroyed, or on the CPU) and the context manager."""

    def __init__(self, handle: int) -> None:
        self._handle = handle

    @property
    def handle(self) -> int:
        return self._handle

    def destroy(self) -> None:
        """Release it (safe to call more than once)."""
        self._handle = 0

    def __enter__(self) -> Any:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.destroy()


class Stream(_Handle):
    """A stream kernels can be launched on (`kernel(..., qd_stream=s)`)."""

    def synchronize(self) -> None:
        """Wait until the work launched on this stream is done."""
        program.sync()


class Event(_Handle):
    """An event recorded on a stream, that another stream (or the host) waits for."""

    def record(self, qd_stream: Stream | None = None) -> None:
        """Record the event on `qd_stream` (None: the default stream)."""
        _check_stream(qd_stream)

    def wait(self, qd_stream: Stream | None = None) -> None:
        """Make `qd_stream` (None: the default stream) wait for the event: the work before it is ordered first."""
        _check_stream(qd_stream)

    def synchronize(self) -> None:
        """Wait on the host until the event is reached."""
        program.sync()


def _check_stream(s: Any) -> None:
    if s is not None and not isinstance(s, Stream):
        raise TypeError(f"qd_stream must be a qd.create_stream() stream or None, not {type(s).__name__}")


def create_stream() -> Stream:
    """A new stream (handle 0 on the CPU, where streams are no-ops)."""
    return Stream(_device_handle())


def create_event() -> Event:
    """A new event (handle 0 on the CPU, where events are no-ops)."""
    return Event(_device_handle())


@contextlib.contextmanager
def _stream_parallel() -> Iterator[None]:
    yield


def stream_parallel() -> contextlib.AbstractContextManager[None]:
    """`with qd.stream_parallel():` in a kernel: a block of top-level loops Quadrants may run on a stream of its
    own (here the blocks run in order). Every top-level statement of such a kernel is such a block."""
    return _stream_parallel()


stream_parallel.__qd_intrinsic__ = "stream_parallel"  # type: ignore[attr-defined]


def check_launch(kernel: Any, qd_stream: Any, *, graph: bool, autodiff: bool, taped: bool) -> None:
    """The launches Quadrants refuses a stream for (lang/kernel.py calls this when `qd_stream=` is given)."""
    _check_stream(qd_stream)
    if graph:
        raise RuntimeError(f"qd_stream is not compatible with graph=True kernels ({kernel}): a graph is replayed "
                           "on the stream it was captured on; launch it without qd_stream")  # fmt: skip
    if autodiff:
        raise RuntimeError(f"qd_stream is not compatible with autodiff kernels ({kernel}): launch the gradient "
                           "kernel on the default stream")  # fmt: skip
    if taped:
        raise RuntimeError(f"qd_stream is not compatible with autograd Tape ({kernel}): kernels recorded by a "
                           "qd.ad.Tape run on the default stream")  # fmt: skip


__all__ = ["Stream", "Event", "create_stream", "create_event", "stream_parallel"]
