"""The Python-scope API surface programs written for Quadrants reach: companions' presence (`has_grad()`,
`has_dual()`), `Ndarray.get_type()`, the properties of struct values, the FieldsBuilder's level and lazy-companion
methods, Python-scope vector reductions, `qd.interop`, and namespaces that hold only their API."""

from __future__ import annotations

import numpy as np
import pytest

import quadrants as qd
from tests.conftest import qd_init


def test_fields_and_ndarrays_say_which_companions_they_have() -> None:
    qd_init()
    plain = qd.field(qd.f32, (3, 2))
    learned = qd.field(qd.f32, 4, needs_grad=True)
    dual = qd.field(qd.f32, 4, needs_dual=True)
    assert (plain.has_grad(), plain.has_dual()) == (False, False)
    assert (learned.has_grad(), learned.has_dual()) == (True, False)
    assert (dual.has_grad(), dual.has_dual()) == (False, True)
    assert plain.shape == (3, 2) and qd.Vector.field(3, qd.f32, 5).shape == (5,)
    lazy = qd.field(qd.f32)
    qd.root.dense(qd.i, 6).place(lazy)
    assert not lazy.has_grad()  # a companion made on demand but never placed is not allocated
    qd.root.lazy_grad()
    assert lazy.has_grad() and lazy.shape == (6,)

    a = qd.ndarray(qd.f32, (2, 3), needs_grad=True)
    v = qd.Vector.ndarray(3, qd.i32, 4)
    assert (a.has_grad(), a.has_dual(), v.has_grad()) == (True, False, False)
    t = v.get_type()
    assert (t.shape, t.needs_grad) == ((4,), False) and t.element_type.shape() == [3]
    assert a.get_type().element_type == qd.f32 and a.get_type().needs_grad
    # instance attributes, as in Quadrants: rows and columns of the element, its type, the native handle
    m = qd.Matrix.ndarray(2, 3, qd.f32, 7)
    assert (m.n, m.m, v.n, v.m, a.n, a.m) == (2, 3, 3, 1, 1, 1)
    assert m.arr.device_allocation_ptr() > 0 and m.arr.device_allocation_ptr() != v.arr.device_allocation_ptr()
    if qd.cfg.arch == qd.cpu:  # host memory: where numpy's zero-copy view starts
        assert m.arr.device_allocation_ptr() == m.to_numpy(copy=False).ctypes.data
    assert "dtype" not in dir(qd.Ndarray) and "to_numpy" not in dir(qd.Ndarray) and "to_numpy" in dir(qd.VectorNdarray)


def test_struct_values_list_members_through_properties() -> None:
    qd_init()
    s = qd.Struct(pos=qd.Vector([1.0, 2.0]), mass=3.0)
    assert s.keys == ["pos", "mass"]
    assert [k for k, _ in s.items] == ["pos", "mass"] and dict(s.items)["mass"] == 3.0
    s.mass = 4.0
    assert s.entries["mass"] == 4.0 and s.methods == {}

    @qd.dataclass
    class Body:
        x: qd.f32

        def doubled(self):  # type: ignore[no-untyped-def]
            return self.x * 2

    @qd.kernel
    def make() -> Body:
        return Body(x=1.5)

    b = make()
    assert b.x == 1.5 and set(b.methods) == {"doubled"} and b.doubled() == 3.0


def test_the_fields_builder_offers_its_root_levels_and_lazy_companions() -> None:
    qd_init()
    x = qd.field(qd.f32)
    fb = qd.FieldsBuilder()
    fb.dense(qd.i, 4).place(x)
    fb.lazy_dual()
    tree = fb.finalize()
    assert x.has_dual() and not x.has_grad()

    @qd.kernel
    def fill():
        for i in x:
            x[i] = i + 1.0

    fill()
    fb.deactivate_all()  # dense cells stay active: their fields are zeroed, as in Quadrants
    assert x.to_numpy().tolist() == [0.0] * 4
    tree.destroy()
    qb = qd.FieldsBuilder()
    assert qb.quant_array(qd.i, 8, max_num_bits=32).word_bits == 32


def test_python_scope_vector_reductions_and_products() -> None:
    qd_init()
    v = qd.Vector([1.5, -2.0, 3.0])
    assert (v.sum(), v.max(), v.min()) == (2.5, 3.0, -2.0)
    assert v.norm_inv() == pytest.approx(1 / np.sqrt(15.25)) and v.norm_inv(eps=0.75) == pytest.approx(0.25)
    np.testing.assert_array_equal(v.outer_product(qd.Vector([1, 2])).to_numpy(), np.outer([1.5, -2, 3], [1, 2]))
    assert v.cast(qd.i32).to_list() == [1, -2, 3]  # toward zero
    m = qd.Matrix([[1, 2], [3, 4]])
    assert m.frobenius_inner(m) == 30 and m.sum() == 10
    with pytest.raises(ValueError, match="shapes"):
        m.frobenius_inner(v)

    @qd.kernel
    def same(a: qd.types.vector(3, qd.f32)) -> qd.types.vector(2, qd.f32):  # type: ignore[valid-type]
        return qd.Vector([a.sum(), a.norm_inv()])

    got = same(v).to_numpy()
    assert got[0] == pytest.approx(v.sum()) and got[1] == pytest.approx(v.norm_inv())
    assert len(qd.lang.matrix._generate_swizzle_patterns("xyzw")) == 4 + 16 + 64 + 256
    assert qd.lang.matrix._generate_swizzle_patterns("rg", 2) == ["r", "g", "rr", "rg", "gr", "gg"]


def test_interop_has_no_metal_queue_to_share() -> None:
    assert qd.interop.get_mps_command_queue() == 0


@pytest.mark.parametrize("module", ["graph", "ad", "math", "sparse", "interop"])
def test_namespaces_hold_their_api_and_no_helper_imports(module: str) -> None:
    names = [n for n in dir(getattr(qd, module)) if not n.startswith("_")]
    helpers = {"annotations", "Any", "Iterator", "contextlib", "cache", "prod", "func", "template", "GradChecker"}
    assert not helpers & set(names), sorted(helpers & set(names))
    assert all(callable(getattr(getattr(qd, module), n)) or module == "math" for n in names)


@pytest.mark.parametrize("option", [{"print_ir": True}, {"dump_ir": True}, {"dump": "llvm,ir"}])
def test_asking_for_ir_with_the_cache_on_warns_that_cached_kernels_show_none(option: dict) -> None:
    with pytest.warns(UserWarning, match=r"\[warning_code=DUMP_IR_CACHE_MISMATCH\]"):
        qd_init(offline_cache=True, **option)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        qd_init(offline_cache=False, **option)  # nothing is cached: every kernel shows its IR
        qd_init(offline_cache=True, dump="llvm")  # no IR asked for


def test_a_struct_field_answers_as_a_field_does() -> None:
    qd_init()
    f = qd.Struct.field({"pos": qd.math.vec3, "m": qd.f32}, shape=(4, 2), needs_grad=True)
    assert f.shape == (4, 2) and f.dtype == qd.f32 and f.layout is None
    assert f.snode.parent() is f.pos.snode.parent() and f.has_grad() and not f.has_dual()
    assert f.struct_type.members.keys() == {"pos", "m"} and f.field_dict["m"] is f.m
    with pytest.raises(NotImplementedError, match="member"):
        f.to_dlpack()
    g = qd.Struct.field({"a": qd.i32}, shape=3)
    assert not g.has_grad()
