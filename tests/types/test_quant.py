"""qd.types.quant: the types are described; storing one is refused by name until bit-packed SNodes exist."""

from __future__ import annotations

import pytest

import quadrants as qd


def test_quant_types_describe_themselves() -> None:
    q = qd.types.quant
    assert repr(q.int(13, True)) == "qd.types.quant.int(13)" and q.int(7, False).signed is False
    assert q.fixed(bits=8, max_value=2).scale == 2 / 128 and q.fixed(8, signed=False, scale=0.5).scale == 0.5
    f = q.float(exp=5, frac=10)
    assert (f.exponent_bits, f.bits, f.compute) == (5, 10, qd.f32)
    with pytest.raises(ValueError, match="1 to 64 bits"):
        q.int(0)


def test_storing_a_quant_type_is_refused_naming_the_type() -> None:
    with pytest.raises(NotImplementedError, match=r"a field of qd.types.quant.int\(13\): .*bit-packed SNodes"):
        qd.field(dtype=qd.types.quant.int(13, True))
    with pytest.raises(NotImplementedError, match=r"BitpackedFields\(max_num_bits=32\)"):
        qd.BitpackedFields(max_num_bits=32)
    assert not qd.is_extension_supported(qd.cpu, qd.extension.quant_basic)


def test_a_quant_type_where_a_scalar_dtype_is_needed_is_refused_too() -> None:
    with pytest.raises(NotImplementedError, match=r"quant.fixed\(bits=16.*not supported yet"):
        qd.Vector.field(2, dtype=qd.types.quant.fixed(16, max_value=2), shape=3)
