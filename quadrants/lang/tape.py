"""`qd.ad.Tape`: record the kernel calls of a `with` block, then run their adjoints in reverse order.

Consumes kernel calls (lang/kernel.py reports each primal call made while a tape is active) and a loss (a 0-D
field or a one-element ndarray with a `.grad`); produces the gradients, by calling `kernel.grad(*args)` for the
recorded calls, last first, after setting the loss's gradient to 1. As in Quadrants: entering zeroes the loss
and, for a field loss with `clear_gradients=True`, every field's gradient (ndarray gradients are not cleared);
a tape is entered once and evaluated once.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

ACTIVE: list[Tape] = []  # the tape recording now (kernel calls check this list before their fast path)


class Tape:
    def __init__(self, loss: Any = None, clear_gradients: bool = True, validation: bool = False,
                 grad_check: Any = None) -> None:  # fmt: skip
        from quadrants.lang import program

        if grad_check:
            raise NotImplementedError("qd.ad.Tape(grad_check=...) is not supported yet")
        if validation and not program.get().config.debug:
            warnings.warn("Debug mode is disabled, autodiff valid check will not work. Please specify "
                          "`qd.init(debug=True)` to enable the check.", Warning, stacklevel=2)  # fmt: skip
        self.loss = loss
        self.clear_gradients = clear_gradients
        self.validation = validation
        self.calls: list[tuple[Any, tuple[Any, ...]]] = []
        self.entered = False
        self.gradient_evaluated = False

    def __enter__(self) -> Tape:
        from quadrants.lang.field import Field, clear_all_gradients

        assert not self.entered, "Tape can be entered only once."
        self.entered = True
        loss = self.loss
        if isinstance(loss, Field):
            if len(loss.shape) != 0:
                raise RuntimeError("The loss of `Tape` must be a 0-D field, i.e. scalar")
            if not isinstance(getattr(loss, "grad", None), Field):
                raise RuntimeError("Gradients of loss are not allocated, please use qd.field(..., needs_grad=True) "
                                   "for all fields that are required by autodiff.")  # fmt: skip
            if self.clear_gradients:
                clear_all_gradients()
            loss.fill(0.0)
        elif loss is not None:
            if getattr(loss, "grad", None) is None:
                raise RuntimeError("Gradients of loss are not allocated, please set needs_grad=True for all "
                                   "ndarrays that are required by autodiff.")  # fmt: skip
            if int(np.prod(getattr(loss, "shape", ()))) != 1:
                raise RuntimeError("The loss of `Tape` must be an ndarray with only one element")
            loss.fill(0.0)
        ACTIVE.append(self)
        return self

    def __exit__(self, *exc: Any) -> None:
        ACTIVE.remove(self)
        if self.loss is not None and exc[0] is None:
            self.grad()

    def insert(self, kernel: Any, args: tuple[Any, ...]) -> None:
        self.calls.append((kernel, args))

    def grad(self) -> None:
        assert self.entered, "Before evaluating gradients tape must be entered."
        assert not self.gradient_evaluated, "Gradients of grad can be evaluated only once."
        if self.loss is not None:
            self.loss.grad.fill(1.0)
        for kernel, args in reversed(self.calls):
            kernel.grad(*args)
        self.gradient_evaluated = True
