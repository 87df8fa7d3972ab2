"""`qd.graph`: Quadrants' namespace for the graph-structuring kernel constructs, and their flat old names.

- `while qd.graph.do_while(flag):` repeats its body while the 0-d i32 ndarray `flag` is non-zero after a pass
  (a do-while); loops in the body stay parallel. Levels nest, and may sit among other statements.
- `with qd.graph.parallel_context():` holds `with qd.graph.parallel():` sections, independent sequences of work
  (Quadrants forks them onto parallel CUDA streams). Here they run one after another, in order: the results are
  the same.

The constructs are recognized by the frontend (frontend/graph.py) by the `__qd_intrinsic__` of the object a call
names. Called from Python scope, the two context managers do nothing (helpers shared by Python and kernels
still run); `do_while` only exists inside kernels. The flat spellings (`qd.graph_do_while`, ...; quadrants/__init__.py) are the
same objects; using them in a kernel warns (DeprecationWarning), as in Quadrants.
"""

# No module-level names beyond the three constructs (`dir(qd.graph)` is exactly those, as in Quadrants): no
# `from __future__ import annotations`, and the helpers' imports under leading underscores.
import contextlib as _contextlib
from collections.abc import Iterator as _Iterator

from quadrants.frontend.intrinsics import graph_do_while as do_while


@_contextlib.contextmanager
def _parallel_context() -> _Iterator[None]:
    yield


@_contextlib.contextmanager
def _parallel() -> _Iterator[None]:
    yield


def parallel_context() -> _contextlib.AbstractContextManager[None]:
    """`with qd.graph.parallel_context():` a fork/join region of `qd.graph.parallel()` sections."""
    return _parallel_context()


def parallel() -> _contextlib.AbstractContextManager[None]:
    """`with qd.graph.parallel():` one section of a `qd.graph.parallel_context()` region."""
    return _parallel()


parallel_context.__qd_intrinsic__ = "graph_parallel_context"  # type: ignore[attr-defined]
parallel.__qd_intrinsic__ = "graph_parallel"  # type: ignore[attr-defined]

__all__ = ["do_while", "parallel_context", "parallel"]
