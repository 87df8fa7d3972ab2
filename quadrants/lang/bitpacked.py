"""Bit-packed storage: `qd.BitpackedFields` (several quantized fields in one word per cell) and the bit layout of
`quant_array` levels (one word holding a run of elements), as Quadrants lays them out.

Consumes fields of `qd.types.quant` types; produces, when their tree is laid out (lang/snode.py,
lang/sparse_layout.py), an `ir.bits.BitSlot` per field: the word's width, every member's bit offset and type,
which one the field is. Members take the word's bits from the lowest up, in the order placed; a quantized
float adds its exponent as a member of its own just before its digits, or, placed with `shared_exponent=True`,
shares the exponent that the first float of that `place` call added.
"""

from __future__ import annotations

from typing import Any

from quadrants.errors import QuadrantsSyntaxError
from quadrants.ir.bits import BitMember, BitSlot
from quadrants.types import dtypes
from quadrants.types.quant import QuantType

WORDS = {8: dtypes.u8, 16: dtypes.u16, 32: dtypes.u32, 64: dtypes.u64}


def word_type(max_num_bits: int) -> dtypes.PrimitiveType:
    if max_num_bits not in WORDS:
        raise ValueError(f"max_num_bits must be 8, 16, 32 or 64, got {max_num_bits}")
    return WORDS[max_num_bits]


def quant_of(f: Any) -> QuantType:
    q = getattr(f, "_quant", None)
    if q is None:
        raise QuadrantsSyntaxError(f"{f!r} has no quantized type: only fields of qd.types.quant types are bit-packed")
    return q


class BitpackedFields:
    """`qd.BitpackedFields(max_num_bits=32)`: quantized fields sharing one word per cell; place it in an SNode
    (`qd.root.dense(qd.i, n).place(bitpack)`) like a field."""

    def __init__(self, max_num_bits: int = 32) -> None:
        self.word = word_type(int(max_num_bits))
        self.members: list[BitMember] = []
        self.fields: list[tuple[Any, int]] = []  # (scalar field, its member)
        self.placed = False

    def place(self, *fields: Any, shared_exponent: bool = False) -> None:
        """Add the fields (a vector/matrix field: each component) as members, in order; with `shared_exponent`,
        their floats share one exponent."""
        shared = -1
        count = 0
        for f in fields:
            for member in _scalars(f):
                q = quant_of(member)
                if q.kind == "float":
                    if shared_exponent and shared >= 0:
                        exp = self.members[shared]
                        if exp.bits != q.exponent_bits:
                            raise QuadrantsSyntaxError("QuantFloatTypes with shared exponents must have exactly the "
                                                       "same exponent type.")  # fmt: skip
                        e = shared
                    else:
                        e = self._add(BitMember("exp", q.exponent_bits, False, 0, dtypes.i32))
                        shared = e if shared_exponent else -1
                    k = self._add(BitMember("float", q.bits, q.signed, 0, q.compute, exponent=e))
                    m = self.members[e]
                    self.members[e] = BitMember("exp", m.bits, False, m.offset, m.compute, users=(*m.users, k))
                else:
                    k = self._add(BitMember(q.kind, q.bits, q.signed, 0, q.compute, q.scale))
                self.fields.append((member, k))
                count += 1
        if shared_exponent and count <= 1:
            raise QuadrantsSyntaxError("At least 2 fields need to be placed when shared_exponent=True")

    def _add(self, m: BitMember) -> int:
        used = sum(x.bits for x in self.members)
        if used + m.bits > self.word.bits:
            raise QuadrantsSyntaxError(f"BitStructType overflows: {used + m.bits} bits used out of {self.word.bits}.")
        self.members.append(BitMember(m.kind, m.bits, m.signed, used, m.compute, m.scale, m.exponent, m.users))
        return len(self.members) - 1

    def slot(self, k: int) -> BitSlot:
        return BitSlot(self.word, tuple(self.members), k)


def _scalars(f: Any) -> list[Any]:
    """A field's scalar fields: itself, or a vector/matrix field's components (lang/component_fields.py)."""
    if isinstance(f, (list, tuple)):
        return [s for x in f for s in _scalars(x)]
    comps = getattr(f, "_components", None)
    return list(comps()) if comps is not None else [f]


def array_slot(f: Any, max_num_bits: int, n: int, axes: tuple[tuple[int, int, int], ...]) -> BitSlot:
    """The slot of field `f`, the one field of a quant_array level of `n` elements per word (`axes`: the
    level's digits, as `BitSlot.array` gives them)."""
    q = quant_of(f)
    if q.kind == "float":
        raise QuadrantsSyntaxError("a quant_array holds quantized ints or fixed-point numbers, not floats")
    word = word_type(max_num_bits)
    if n * q.bits > word.bits:
        raise QuadrantsSyntaxError(f"quant_array: {n} elements of {q.bits} bits do not fit {word.bits} bits")
    return BitSlot(word, (BitMember(q.kind, q.bits, q.signed, 0, q.compute, q.scale),), 0, axes)
