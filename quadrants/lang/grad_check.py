"""`qd.ad.Tape(loss, grad_check=[fields])`: check reverse-mode gradients against central differences.

Consumes the tape's loss (an f64 0-D field), the fields to check and the recorded calls; after the tape has run
the adjoints, for each field and a shrinking step `eps` it draws a random direction `t`, reruns the recorded
calls from the saved state with the field moved by `+eps t` and by `-eps t`, and compares the central
difference of the loss with `sum(x.grad * t)`: a field passes at the first `eps` where they agree within 1 %
(Quadrants' rule). The state of every field is restored and the calls rerun at the end. Raises an
AssertionError naming the fields that failed.
"""

from __future__ import annotations

from typing import Any

import numpy as np

EPS_RANGE = 2.0 ** np.arange(-3, -30, -2).astype(np.float64)


class GradChecker:
    def __init__(self, loss: Any, to_check: list[Any]) -> None:
        self.loss = loss
        self.to_check = to_check
        self.fields = _primal_fields()
        self.backups = [f.to_numpy() for f in self.fields]  # the state the recorded calls start from
        self.result: list[bool] = [False] * len(to_check)

    def _restore(self) -> None:
        for f, b in zip(self.fields, self.backups):
            f.from_numpy(b)

    def _loss_after(self, calls: list[tuple[Any, tuple[Any, ...]]], x: Any, start: np.ndarray) -> float:
        self._restore()
        x.from_numpy(start)
        for func, args in calls:
            func(*args)
        return float(self.loss.to_numpy())

    def check(self, calls: list[tuple[Any, tuple[Any, ...]]]) -> None:
        from quadrants.types.dtypes import f64

        assert self.loss.dtype == f64, "Only f64 is supported when checking grad."
        rng = np.random.default_rng()
        for i, x in enumerate(self.to_check):
            if x is self.loss:
                self.result[i] = True
                continue
            base = self.backups[self.fields.index(x)] if x in self.fields else x.to_numpy()
            grad = x.grad.to_numpy()
            errors = []
            for eps in EPS_RANGE:
                t = rng.random(x.shape).reshape(x.shape + (1,) * (grad.ndim - len(x.shape)))
                numerical = (self._loss_after(calls, x, base + eps * t) - self._loss_after(calls, x, base - eps * t)) * 0.5 / eps
                autodiff = float(np.sum(grad * t))
                err = abs(autodiff - numerical)
                errors.append(err / (abs(autodiff) + (0 if numerical != 0 else 1e-20)) if autodiff or numerical else 0)
                if err * 100 <= abs(autodiff):
                    self.result[i] = True
                    break
            print(f"variable {i} passes grad check" if self.result[i] else
                  f"variable {i} has relative error {min(errors)}, expected relative error 0.01")  # fmt: skip
        self._restore()
        for func, args in calls:
            func(*args)
        assert all(self.result), "Grad check failed: Not all variables pass grad check"


def _primal_fields() -> list[Any]:
    """Every live field that is not a `.grad` / `.dual` companion (the program state the calls read)."""
    from quadrants.lang.field import live_fields

    fields = live_fields()
    companions = {id(f.__dict__.get(k)) for f in fields for k in ("grad", "dual")}
    return [f for f in fields if id(f) not in companions]
