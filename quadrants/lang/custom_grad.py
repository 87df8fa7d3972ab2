"""`@qd.ad.grad_replaced`, `@qd.ad.grad_for`, `@qd.ad.no_grad`: Python functions whose gradient the user gives.

Consumes plain Python functions (which call kernels); produces wrappers that a `qd.ad.Tape` records as one call
each (the kernels they run are not recorded: lang/tape.py) and whose `.grad(*args)` runs the user's gradient
function (`grad_for`) or nothing (`no_grad`). As in Quadrants, the primal must be a Python function decorated
with `grad_replaced`, never a kernel itself.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from quadrants.lang import tape as _tape


def _recorded(func: Callable[..., Any]) -> Any:
    """`func`, recorded by the active tape as one call while the kernels it calls are not."""

    @functools.wraps(func)
    def decorated(*args: Any, **kwargs: Any) -> Any:
        tape = _tape.ACTIVE[-1] if _tape.ACTIVE and isinstance(_tape.ACTIVE[-1], _tape.Tape) else None
        if tape is None:
            return func(*args, **kwargs)
        if not tape.paused:
            tape.insert(decorated, args)
        tape.paused += 1
        try:
            return func(*args, **kwargs)
        finally:
            tape.paused -= 1

    from quadrants.types.enums import AutodiffMode

    decorated.autodiff_mode = AutodiffMode.NONE  # type: ignore[attr-defined]
    return decorated


def grad_replaced(func: Callable[..., Any]) -> Any:
    """A Python function whose gradient is the function that `@qd.ad.grad_for(it)` decorates."""
    decorated = _recorded(func)
    decorated.grad = None
    return decorated


def grad_for(primal: Any) -> Callable[[Callable[..., Any]], Any]:
    """The decorator of `primal`'s gradient function; `primal` must be decorated by `grad_replaced`."""

    def decorator(func: Callable[..., Any]) -> Any:
        if not hasattr(primal, "grad"):
            raise RuntimeError(f"Primal function `{primal.__name__}` must be decorated by qd.ad.grad_replaced")
        if primal.grad is not None:
            raise RuntimeError("Primal function must be a **python** function instead of a quadrants kernel. Please "
                               "wrap the quadrants kernel in a @qd.ad.grad_replaced decorated python function "
                               "instead.")  # fmt: skip

        @functools.wraps(func)
        def decorated(*args: Any, **kwargs: Any) -> Any:
            return func(*args, **kwargs)

        primal.grad = decorated
        return decorated

    return decorator


def no_grad(func: Callable[..., Any]) -> Any:
    """A Python function whose gradient is nothing: a tape records it, and its `.grad` does nothing."""
    decorated = _recorded(func)

    def placeholder(*args: Any, **kwargs: Any) -> None:
        return None

    decorated.grad = placeholder
    return decorated
