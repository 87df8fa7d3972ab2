"""`qd.ad.FwdMode(loss=, param=, seed=)`: forward-mode differentiation of the kernels called in a `with` block.

Consumes a parameter field, a seed (the direction: one number per element of the parameter) and the loss
field(s); on entry zeroes every field's `.dual` (`clear_gradients=True`) and writes the seed into
`param.dual`; every primal kernel called inside runs its dual kernel instead (`kernel.dual`, built by
passes/autodiff/forward.py), which has the primal's effects and also writes the tangents into the `.dual` of
the fields it writes, so `loss.dual` holds the Jacobian-vector product afterwards. On exit the seed is cleared.
Fields only, as in Quadrants (ndarrays have no `.dual` there).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from quadrants.lang import tape as _tape

_SEED_NEEDED = ("`seed` is not set for non 0-D field, please specify. `seed` is a list to specify which parameters "
                "the computed derivatives respect to. The length of the `seed` should be same to that of the "
                "`parameters` E.g. Given a loss `loss = qd.field(float, shape=3)`, parameter `x = qd.field(float, "
                "shape=3)`      seed = [0, 0, 1] indicates compute derivative respect to the third element of `x`.  "
                "    seed = [1, 1, 1] indicates compute the sum of derivatives respect to all three element of `x`, "
                "i.e., Jacobian-vector product(Jvp) for each element in `loss`")  # fmt: skip


class FwdMode:
    def __init__(self, loss: Any, param: Any, seed: Any = None, clear_gradients: bool = True) -> None:
        self.loss = loss
        self.param = param
        self.seed = seed
        self.clear_gradients = clear_gradients
        self.calls: list[Any] = []
        self.entered = False
        self.kernels_recovered = False

    def __enter__(self) -> FwdMode:
        from quadrants.lang.field import Field, clear_all_gradients

        assert not self.entered, "Forward mode manager can be entered only once."
        self.entered = True
        if not isinstance(self.loss, list):
            self.loss = [self.loss]
        for ls in self.loss:
            assert _scalar_field(ls), "the loss of qd.ad.FwdMode must be a scalar field (or a list of them)"
        assert _scalar_field(self.param), "the param of qd.ad.FwdMode must be a scalar field"
        if not isinstance(getattr(self.param, "dual", None), Field):
            raise RuntimeError("the param of qd.ad.FwdMode has no dual: use needs_dual=True or qd.root.lazy_dual()")
        n = int(np.prod(self.param.shape)) if self.param.shape else 1
        if not self.seed:
            if n != 1:
                raise RuntimeError(_SEED_NEEDED)
            self.seed = [1.0]
        else:
            assert n == len(self.seed)
        if self.clear_gradients:
            clear_all_gradients("dual")
        self.param.dual.from_numpy(np.asarray(self.seed, dtype=np.float64).reshape(self.param.shape))
        _tape.ACTIVE.append(self)
        return self

    def __exit__(self, *exc: Any) -> None:
        _tape.ACTIVE.remove(self)
        self.param.dual.fill(0)  # the seed is cleared; the losses' duals stay
        self.kernels_recovered = True

    def capture(self, kernel: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """A primal kernel's call inside the block: its dual kernel runs instead."""
        self.calls.append(kernel)
        return kernel.dual

    def insert(self, func: Any, args: tuple[Any, ...]) -> None:  # a grad_replaced function: nothing to record
        pass


def _scalar_field(f: Any) -> bool:
    from quadrants.lang.field import Field

    return isinstance(f, Field) and f.element_type is None
