"""Where a field of a quantized type (qd.types.quant) keeps its values: bits of a word, as the IR records it.

lang/bitpacked.py and lang/snode.py lay the words out; a field's `ir.GlobalNd.bits` carries its `BitSlot`, so
the layout is in the IR text (hence in the offline key), and codegen/quant.py reads and writes the bits. The
terms of such a field address the word (a `quant_array` level moves no bytes); the slot says which bits of it.
"""

from __future__ import annotations

from dataclasses import dataclass

from quadrants.types.dtypes import PrimitiveType


@dataclass(frozen=True, slots=True)
class BitMember:
    """One member of a bit-packed word: a quantized value's digits, or a float's exponent (`kind` "exp")."""

    kind: str  # "int", "fixed", "float" or "exp"
    bits: int
    signed: bool
    offset: int  # of its lowest bit in the word
    compute: PrimitiveType  # what a load gives (an exponent: i32)
    scale: float = 1.0  # fixed
    exponent: int = -1  # float: the member holding its exponent
    users: tuple[int, ...] = ()  # exp: the floats using it (more than one: a shared exponent)

    def __repr__(self) -> str:  # the IR text (so the offline key) holds all of it
        s = f"{self.kind}{'' if self.signed else 'u'}{self.bits}@{self.offset}:{self.compute}"
        if self.kind == "fixed":
            s += f"*{self.scale!r}"
        if self.kind == "float":
            s += f"^{self.exponent}"
        return s + (f"<{','.join(map(str, self.users))}>" if self.users else "")

    @property
    def digit_bits(self) -> int:
        """A float's fraction bits (its digits less the sign bit)."""
        return self.bits - int(self.signed)


@dataclass(frozen=True, slots=True)
class BitSlot:
    """A field's place in its words: member `member` of `members` (the word's layout, `word` wide). A
    `quant_array` element is the word's only member at bit `offset + digit * bits`, its digits given per index
    by `array`: `(index position, div, mod)`, `(I[position] // div) % mod`, row-major in that order."""

    word: PrimitiveType  # u8, u16, u32 or u64
    members: tuple[BitMember, ...]
    member: int
    array: tuple[tuple[int, int, int], ...] = ()

    def __repr__(self) -> str:
        arr = f" array {self.array}" if self.array else ""
        return f"{self.word}[{', '.join(map(repr, self.members))}].{self.member}{arr}"

    @property
    def this(self) -> BitMember:
        return self.members[self.member]

    def shares_exponent(self, k: int) -> bool:
        m = self.members[k]
        return m.kind == "float" and len(self.members[m.exponent].users) > 1
