"""`qd.ad.Tape`: record the kernel calls of a `with` block, then run their adjoints in reverse order.

Consumes kernel calls (lang/kernel.py hands each primal call made while a recorder is active to the innermost
one's `capture`) and a loss (a 0-D field, a one-element ndarray with a `.grad`, or a one-element torch tensor
that requires grad); produces the gradients, by calling `.grad(*args)` of the recorded calls, last first,
after setting the loss's gradient to 1. As in Quadrants: entering zeroes the loss and, for a field loss with
`clear_gradients=True`, every field's gradient (ndarray gradients are not cleared); a tape is entered once and
evaluated once. A `@qd.ad.grad_replaced` function is recorded as one call, and the kernels it runs are not
(lang/custom_grad.py). `grad_check=[fields]` compares each field's gradient with central differences of the
loss afterwards (lang/grad_check.py).
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

ACTIVE: list[Any] = []  # the recorders (Tape, FwdMode) active now: kernel calls check this list before their fast path


class Tape:
    def __init__(self, loss: Any = None, clear_gradients: bool = True, validation: bool = False,
                 grad_check: Any = None) -> None:  # fmt: skip
        from quadrants.lang import program

        if validation and not program.get().config.debug:
            warnings.warn("Debug mode is disabled, autodiff valid check will not work. Please specify "
                          "`qd.init(debug=True)` to enable the check.", Warning, stacklevel=2)  # fmt: skip
        if grad_check is not None and not isinstance(grad_check, list):
            raise AssertionError("grad_check should be a list of fields that need to check gradients.")
        self.loss = loss
        self.clear_gradients = clear_gradients
        self.validation = validation
        self.grad_check = grad_check or None
        self.calls: list[tuple[Any, tuple[Any, ...]]] = []
        self.modes: list[Any] = []
        self.entered = False
        self.gradient_evaluated = False
        self.paused = 0  # > 0 while a grad_replaced function runs: the kernels it calls are not recorded
        self._checker: Any = None
        self._checking = False  # validation=True under debug=True: kernels run checked

    def __enter__(self) -> Tape:
        from quadrants.lang import program

        assert not self.entered, "Tape can be entered only once."
        self.entered = True
        _prepare_loss(self.loss, self.clear_gradients)
        self._checking = self.validation and program.get().config.debug
        if self._checking:
            _clear_checkbits()
        if self.grad_check:
            from quadrants.lang.grad_check import GradChecker

            self._checker = GradChecker(self.loss, self.grad_check)
        ACTIVE.append(self)
        return self

    def __exit__(self, *exc: Any) -> None:
        ACTIVE.remove(self)
        for func, _ in self.calls:
            if hasattr(func, "mode_override"):  # a kernel: its own mode again
                func.mode_override = None
        if self.loss is not None and exc[0] is None:
            self.grad()

    def capture(self, kernel: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """A primal kernel's call: recorded (unless a grad_replaced function runs it); it runs as it is, or,
        in a validating tape under debug=True, as its validation kernel (`kernel.checked`)."""
        if self.paused:
            return kernel
        self.insert(kernel, tuple(kernel._bind(kernel.params, args, dict(kwargs))) if kwargs else args)
        if self.validation:
            from quadrants.types.enums import AutodiffMode

            kernel.mode_override = AutodiffMode.VALIDATION
        return kernel.checked if self._checking else kernel

    def insert(self, func: Any, args: tuple[Any, ...]) -> None:
        self.calls.append((func, args))
        self.modes.append(getattr(func, "autodiff_mode", None))

    def grad(self) -> None:
        assert self.entered, "Before evaluating gradients tape must be entered."
        assert not self.gradient_evaluated, "Gradients of grad can be evaluated only once."
        if self.loss is not None:
            _seed_loss(self.loss)
        for func, args in reversed(self.calls):
            grad = getattr(func, "grad", None)
            if grad is not None:
                grad(*args)
        self.gradient_evaluated = True
        if self._checker is not None:
            self._checker.check(self.calls)


def _clear_checkbits() -> None:
    """Give every placed field that has a gradient a zeroed u8 check-bit field of its shape (`_checkbit`, which
    the frontend hands the validation pass): cleared on entering a validating tape, as in Quadrants."""
    from quadrants.lang.field import Field, field, live_fields
    from quadrants.types.compound import MatrixType
    from quadrants.types.dtypes import u8

    for f in live_fields():
        if f._unplaced or not isinstance(f.__dict__.get("grad"), Field):
            continue
        bit = f.__dict__.get("_checkbit")
        if bit is None:  # one per scalar: components of a vector element are checked apart
            element = MatrixType(f.element_shape, u8) if f.element_shape else u8
            f._checkbit = field(element, f.shape)  # type: ignore[attr-defined]
        else:
            bit.fill(0)


def _is_torch(v: Any) -> bool:
    return type(v).__module__.startswith("torch") and hasattr(v, "requires_grad")


def _prepare_loss(loss: Any, clear_gradients: bool) -> None:
    """Check the loss has a gradient and zero it (and, for a field loss, every field's gradient)."""
    from quadrants.lang.field import Field, clear_all_gradients

    if loss is None:
        return
    if isinstance(loss, Field):
        if len(loss.shape) != 0:
            raise RuntimeError("The loss of `Tape` must be a 0-D field, i.e. scalar")
        if not isinstance(getattr(loss, "grad", None), Field):
            raise RuntimeError("Gradients of loss are not allocated, please use qd.field(..., needs_grad=True) "
                               "for all fields that are required by autodiff.")  # fmt: skip
        if clear_gradients:
            clear_all_gradients()
        loss.fill(0.0)
    elif _is_torch(loss):
        import torch

        if loss.numel() != 1:
            raise RuntimeError("The loss of `Tape` must be a tensor only contains one element")
        if not loss.requires_grad:
            raise RuntimeError("Gradients of loss are not allocated, please set requires_grad=True for all "
                               "tensors that are required by autodiff.")  # fmt: skip
        with torch.no_grad():
            loss.fill_(0.0)
    else:
        if int(np.prod(getattr(loss, "shape", ()))) != 1:
            raise RuntimeError("The loss of `Tape` must be an ndarray with only one element")
        if getattr(loss, "grad", None) is None:
            raise RuntimeError("Gradients of loss are not allocated, please set needs_grad=True for all "
                               "ndarrays that are required by autodiff.")  # fmt: skip
        loss.fill(0.0)


def _seed_loss(loss: Any) -> None:
    """The loss's gradient := 1 (a torch loss gets a `.grad` of ones if it has none)."""
    if _is_torch(loss):
        import torch

        if loss.grad is None:
            loss.grad = torch.ones_like(loss)
        else:
            with torch.no_grad():
                loss.grad.fill_(1.0)
        return
    loss.grad.fill(1.0)
