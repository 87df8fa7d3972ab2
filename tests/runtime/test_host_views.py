"""`to_numpy(dtype=, copy=)` / `to_torch(copy=)` of ndarrays and fields: `copy=False` aliases the memory (a write
through it is what a kernel then reads), `copy=None` aliases where it can, `copy=True` is independent."""

from __future__ import annotations

import numpy as np
import pytest

import quadrants as qd
from tests.helpers import define


def _make(kind: str, layout: tuple | None = None) -> qd.Tensor:
    return qd.tensor(qd.f32, shape=(2, 3), layout=layout,
                     backend=qd.Backend.NDARRAY if kind == "ndarray" else qd.Backend.FIELD)  # fmt: skip


@pytest.mark.parametrize("kind", ["ndarray", "field"])
@pytest.mark.parametrize("layout", [None, (1, 0)])
def test_copy_false_aliases_and_copy_true_does_not(kind: str, layout: tuple | None) -> None:
    ns = define("""
        @qd.kernel
        def read(x: qd.Tensor) -> qd.f32:
            return x[1, 2]
    """)
    t = _make(kind, layout)
    view, none_view, copied = t.to_numpy(copy=False), t.to_numpy(copy=None), t.to_numpy()
    view[1, 2] = 5.0
    assert ns["read"](t) == 5.0 and none_view[1, 2] == 5.0 and copied[1, 2] == 0.0
    assert t.to_numpy(dtype=np.float64).dtype == np.float64
    with pytest.raises(ValueError, match="dtype conversion"):
        t.to_numpy(dtype=np.float64, copy=False)
    assert t.to_numpy(dtype=np.float64, copy=None)[1, 2] == 5.0  # falls back to a converted copy


@pytest.mark.parametrize("kind", ["ndarray", "field"])
def test_to_torch_copy_false_shares_memory_and_from_torch_copies_in(kind: str) -> None:
    torch = pytest.importorskip("torch")
    t = _make(kind, (1, 0))
    shared = t.to_torch(copy=False)
    shared[0, 1] = 7.0
    assert t.to_numpy()[0, 1] == 7.0 and tuple(shared.shape) == (2, 3)
    independent = t.to_torch()
    independent[0, 1] = 1.0
    assert t.to_numpy()[0, 1] == 7.0
    t.from_torch(torch.arange(6, dtype=torch.float32).reshape(2, 3))
    np.testing.assert_array_equal(t.to_numpy(), np.arange(6, dtype=np.float32).reshape(2, 3))
    dl = torch.utils.dlpack.from_dlpack(t.to_dlpack())
    assert tuple(dl.shape) == (2, 3) and dl[1, 2] == 5.0


def test_copy_false_of_a_dtype_quadrants_does_not_share_raises_and_copy_none_copies() -> None:
    f = qd.field(qd.f16, shape=(4,))
    f.fill(1.0)
    with pytest.raises(ValueError, match="Zero-copy not available"):
        f.to_numpy(copy=False)
    out = f.to_numpy(copy=None)
    out[0] = 5.0
    assert f[0] == 1.0  # a copy, not the field's memory


@pytest.mark.parametrize("layout", [None, qd.Layout.AOS, qd.Layout.SOA])
def test_struct_members_share_memory_only_in_the_soa_layout_as_quadrants_lays_them_out(layout: object) -> None:
    """Quadrants interleaves the members of an AoS struct field (its default) and the components of a vector
    field laid out SoA, so it shares neither: copy=False raises, copy=None copies; the other layouts share."""
    s = qd.types.struct(a=qd.i32, b=qd.types.vector(2, qd.f32))
    kw = {} if layout is None else {"layout": layout}
    sf, vf = s.field(shape=(3,), **kw), qd.Vector.field(2, qd.f32, shape=(3,), **kw)
    shares = {"struct": layout is qd.Layout.SOA, "vector": layout is not qd.Layout.SOA}
    for what, f in (("struct", sf.a), ("struct", sf.b), ("vector", vf)):
        if shares[what]:
            f.to_numpy(copy=False)[0] = 4
            assert (f.to_numpy()[0] == 4).all()
            continue
        with pytest.raises(ValueError, match="Zero-copy not available"):
            f.to_numpy(copy=False)
        with pytest.raises(ValueError, match="Zero-copy not available"):
            f.to_dlpack()
        f.to_numpy(copy=None)[0] = 9
        assert (f.to_numpy()[0] == 0).all()  # a copy


@pytest.mark.parametrize("versioned", [False, True])
def test_a_dlpack_capsule_wrapped_for_numpy_shares_the_fields_memory(versioned: bool) -> None:
    from quadrants.lang.field import _DLPackV1Adapter

    f = qd.Matrix.field(2, 3, qd.f32, shape=(2,))
    f.fill(3.0)
    arr = np.from_dlpack(_DLPackV1Adapter(f.to_dlpack(versioned=versioned)))
    assert arr.shape == (2, 2, 3) and arr.flags.writeable == versioned  # numpy reads a v0 capsule read-only
    f[1][0, 2] = 5.0
    assert arr[1, 0, 2] == 5.0
    if versioned:
        arr[1, 0, 2] = 7.0
        assert f[1][0, 2] == 7.0 and f[0][0, 0] == 3.0


def test_a_field_in_a_dense_tree_is_shared_as_one_strided_array() -> None:
    """Its cells' layout is in the strides (axes placed out of order, another field in the same cells); writes
    through the view are the field's. An axis split over levels that do not nest has no such array."""
    qd.init(arch=qd.cpu, offline_cache=False, log_level="warn")
    f = qd.field(qd.f32)
    qd.root.dense(qd.i, 3).dense(qd.k, 2).dense(qd.j, 4).place(f)
    g, h = qd.field(qd.i32), qd.field(qd.f64)
    qd.root.dense(qd.i, 5).place(g, h)
    split = qd.field(qd.i32)
    qd.root.dense(qd.i, 2).dense(qd.j, 3).dense(qd.i, 4).place(split)

    @qd.kernel
    def fill():
        for i, j, k in f:
            f[i, j, k] = i * 100 + j * 10 + k
        for i in g:
            g[i] = i
            h[i] = i * 0.5

    fill()
    v = f.to_numpy(copy=False)
    assert v.shape == (3, 4, 2) and not v.flags.c_contiguous
    np.testing.assert_array_equal(v, np.arange(3)[:, None, None] * 100 + np.arange(4)[:, None] * 10 + np.arange(2))
    v[2, 3, 1] = -1.0
    assert f[2, 3, 1] == -1.0
    import torch

    t = torch.from_dlpack(h.to_dlpack())
    assert t.stride() != (1,) and t.tolist() == [i * 0.5 for i in range(5)]
    t[4] = 9.0
    assert h[4] == 9.0 and g.to_numpy(copy=False).tolist() == [0, 1, 2, 3, 4]
    with pytest.raises(ValueError, match="no single strided array"):
        split.to_numpy(copy=False)
    assert split.to_numpy(copy=None).shape == (8, 3)  # copy=None: a copy where no view exists
