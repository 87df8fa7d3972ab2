"""`qd.types.quant`: Quadrants' quantized types (`int(bits, signed)`, `fixed(bits, signed, max_value)`,
`float(exp, frac, signed)`), as type descriptions.

They describe values stored in a few bits of a shared word, which needs bit-packed SNodes (`qd.BitpackedFields`,
`snode.quant_array`); those are not implemented yet, so a field of a quantized type is refused naming the type
(lang/field.py) rather than stored in full width, which would round differently from Quadrants.
"""

from __future__ import annotations

import builtins
from dataclasses import dataclass
from typing import Any

from quadrants.types import dtypes


@dataclass(frozen=True)
class QuantType:
    __qd_quant__ = True  # what dtypes.to_dtype recognizes (it cannot import this module)

    kind: str  # "int", "fixed" or "float"
    bits: int  # all the bits a value takes
    signed: bool
    compute: Any  # the dtype arithmetic happens in
    scale: builtins.float = 1.0  # fixed: the value of one step
    exponent_bits: int = 0  # float: exponent bits (the rest, `bits`, hold the fraction and sign)

    def __repr__(self) -> str:
        sign = "" if self.signed else ", signed=False"
        if self.kind == "float":
            return f"qd.types.quant.float(exp={self.exponent_bits}, frac={self.bits}{sign})"
        if self.kind == "fixed":
            return f"qd.types.quant.fixed(bits={self.bits}{sign}, scale={self.scale:g})"
        return f"qd.types.quant.int({self.bits}{sign})"


def _compute(compute: Any, default: Any) -> Any:
    return dtypes.to_dtype(compute) if compute is not None else default


def int(bits: builtins.int, signed: bool = True, compute: Any = None) -> QuantType:  # noqa: A001 - Quadrants' name
    """A `bits`-bit integer (signed or not), computed as `compute` (default i32)."""
    if not 1 <= bits <= 64:
        raise ValueError(f"a quantized int has 1 to 64 bits, got {bits}")
    return QuantType("int", bits, signed, _compute(compute, dtypes.i32))


def fixed(bits: builtins.int, signed: bool = True, max_value: builtins.float = 1.0, compute: Any = None,
          scale: builtins.float | None = None) -> QuantType:  # fmt: skip
    """A fixed-point number of `bits` bits covering [-max_value, max_value] (or [0, max_value] unsigned), or
    with an explicit `scale` (the value of one step)."""
    if not 1 <= bits <= 64:
        raise ValueError(f"a quantized fixed-point type has 1 to 64 bits, got {bits}")
    if scale is None:
        scale = max_value / (2 ** (bits - 1) if signed else 2**bits - 1)
    return QuantType("fixed", bits, signed, _compute(compute, dtypes.f32), builtins.float(scale))


def float(exp: builtins.int, frac: builtins.int, signed: bool = True, compute: Any = None) -> QuantType:  # noqa: A001
    """A floating-point number of `exp` exponent bits and `frac` fraction bits (plus a sign bit if signed)."""
    if exp < 1 or frac < 1:
        raise ValueError(f"a quantized float needs exponent and fraction bits, got exp={exp}, frac={frac}")
    return QuantType("float", frac, signed, _compute(compute, dtypes.f32), 1.0, exp)


def refuse(what: str) -> NotImplementedError:
    """The error for anything that would store a quantized type (`what` names it)."""
    return NotImplementedError(
        f"{what}: quantized types need bit-packed SNodes (qd.BitpackedFields, quant_array), which are not "
        "supported yet; use a full-width dtype (qd.i32, qd.f32, ...)"
    )


class BitpackedFields:
    """`qd.BitpackedFields(max_num_bits=32)`: fields of quantized types sharing one word. Not supported yet."""

    def __init__(self, max_num_bits: builtins.int = 32) -> None:
        raise refuse(f"qd.BitpackedFields(max_num_bits={max_num_bits})")
