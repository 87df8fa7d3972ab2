"""`qd.types.quant`: Quadrants' quantized types (`int(bits, signed)`, `fixed(bits, signed, max_value)`,
`float(exp, frac, signed)`), as type descriptions.

A quantized value lives in a few bits of a shared word: the fields of a `qd.BitpackedFields` (one word per
cell, lang/bitpacked.py) or the elements of a `quant_array` level (lang/snode.py). Kernels compute with the
type's `compute` dtype; codegen/quant.py converts between it and the bits, as Quadrants 1.3.3 does:

- int: the low `bits` bits of the value; a load sign-extends (signed) or zero-extends;
- fixed: the int `round(value / scale)` (halves away from zero, in the compute type), read back as
  `digits * scale`;
- float: `bits` digit bits (the sign bit included when signed) and an unsigned exponent of `exponent_bits`
  bits, a member of its own in the word (shared by several floats with `shared_exponent=True`).
"""

from __future__ import annotations

import builtins
from dataclasses import dataclass
from typing import Any

from quadrants.types import dtypes


@dataclass(frozen=True)
class QuantType:
    __qd_quant__ = True  # what dtypes.to_dtype and MatrixType recognize (they cannot import this module)

    kind: str  # "int", "fixed" or "float"
    bits: int  # the bits the digits take (a float's sign bit included; its exponent is counted apart)
    signed: bool
    compute: Any  # the dtype arithmetic happens in
    scale: builtins.float = 1.0  # fixed: the value of one step
    exponent_bits: int = 0  # float: bits of its (unsigned) exponent

    def __repr__(self) -> str:
        sign = "" if self.signed else ", signed=False"
        if self.kind == "float":
            return f"qd.types.quant.float(exp={self.exponent_bits}, frac={self.bits}{sign})"
        if self.kind == "fixed":
            return f"qd.types.quant.fixed(bits={self.bits}{sign}, scale={self.scale:g})"
        return f"qd.types.quant.int({self.bits}{sign})"

    @property
    def is_float(self) -> bool:
        return bool(self.compute.is_float)


def _compute(compute: Any, default: Any) -> Any:
    return dtypes.to_dtype(compute) if compute is not None else default


def int(bits: builtins.int, signed: bool = True, compute: Any = None) -> QuantType:  # noqa: A001 - Quadrants' name
    """A `bits`-bit integer (signed or not), computed as `compute` (default i32, or u32 when unsigned)."""
    if not 1 <= bits <= 64:
        raise ValueError(f"a quantized int has 1 to 64 bits, got {bits}")
    return QuantType("int", bits, signed, _compute(compute, dtypes.i32 if signed else dtypes.u32))


def fixed(bits: builtins.int, signed: bool = True, max_value: builtins.float = 1.0, compute: Any = None,
          scale: builtins.float | None = None) -> QuantType:  # fmt: skip
    """A fixed-point number of `bits` bits: steps of `scale`, by default `max_value / 2**(bits - 1)` (signed)
    or `max_value / 2**bits` (unsigned), as Quadrants computes it."""
    if not 1 <= bits <= 32:
        raise ValueError(f"a quantized fixed-point type has 1 to 32 bits, got {bits}")
    if scale is None:
        scale = max_value / 2 ** (bits - 1) if signed else max_value / 2**bits
    return QuantType("fixed", bits, signed, _compute(compute, dtypes.f32), builtins.float(scale))


def float(exp: builtins.int, frac: builtins.int, signed: bool = True, compute: Any = None) -> QuantType:  # noqa: A001
    """A floating-point number of `exp` exponent bits and `frac` digit bits (the sign bit among them if signed),
    computed as f32 (the only compute type Quadrants has for them)."""
    if not 1 <= exp <= 8:
        raise ValueError(f"a quantized float has 1 to 8 exponent bits, got exp={exp}")
    if not 1 <= frac - builtins.int(signed) <= 23:
        raise ValueError(f"a quantized float has 1 to 23 fraction bits besides its sign, got frac={frac}")
    c = _compute(compute, dtypes.f32)
    if c != dtypes.f32:
        raise ValueError(f"a quantized float computes in f32, got compute={c}")
    return QuantType("float", frac, signed, c, 1.0, exp)


def is_quant(obj: Any) -> bool:
    return isinstance(obj, QuantType)


__all__ = ["int", "fixed", "float"]
