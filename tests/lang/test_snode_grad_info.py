"""`field.snode.ptr`: the gradient kind of a field's place (primal, adjoint, dual, check bits), and a flat
field stays usable after its `snode` was inspected."""

from __future__ import annotations

import numpy as np

import quadrants as qd
from quadrants.types.enums import SNodeGradType


def test_grad_types_of_places_and_check_bits() -> None:
    qd.init(arch=qd.cpu, debug=True, log_level="warn")
    x = qd.field(qd.f32, shape=(), needs_grad=True, needs_dual=True)
    y = qd.field(qd.f32, shape=2)
    qd.root.lazy_grad()
    assert x.snode.ptr.get_snode_grad_type() == SNodeGradType.PRIMAL
    assert x.grad.snode.ptr.get_snode_grad_type() == SNodeGradType.ADJOINT
    assert x.dual.snode.ptr.get_snode_grad_type() == SNodeGradType.DUAL
    assert y.grad.snode.ptr.get_snode_grad_type() == SNodeGradType.ADJOINT and y.snode.ptr.has_adjoint()
    a, b = qd.field(qd.f32), qd.field(qd.f32)
    qd.root.place(a, a.grad, b)

    @qd.kernel
    def k() -> None:
        a[None] = 1.0

    assert not a.snode.ptr.has_adjoint_checkbit()
    with qd.ad.Tape(loss=a, validation=True):
        k()
    assert a.snode.ptr.has_adjoint_checkbit() and not b.snode.ptr.has_adjoint_checkbit()


def test_a_flat_field_works_after_its_snode_is_inspected() -> None:
    x = qd.field(qd.f32, shape=3)
    assert x.snode.parent() is not None
    x.fill(2.0)  # finalized the inspection tree before: AttributeError '_place_offset'
    np.testing.assert_allclose(x.to_numpy(), 2.0)
