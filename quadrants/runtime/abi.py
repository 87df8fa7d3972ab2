"""How Python calls one compiled kernel: the argument kinds, return types, symbol and check sites.

An ABI record is plain data, serializable to JSON (cache entries store it; nothing is pickled).
"""

from __future__ import annotations

import ctypes
import json
from dataclasses import asdict, dataclass
from typing import Any

from quadrants.types import dtypes
from quadrants.types.dtypes import PrimitiveType

CTYPES: dict[PrimitiveType, Any] = {
    dtypes.i8: ctypes.c_int8, dtypes.i16: ctypes.c_int16, dtypes.i32: ctypes.c_int32, dtypes.i64: ctypes.c_int64,
    dtypes.u8: ctypes.c_uint8, dtypes.u16: ctypes.c_uint16, dtypes.u32: ctypes.c_uint32,
    dtypes.u64: ctypes.c_uint64, dtypes.f16: ctypes.c_float, dtypes.f32: ctypes.c_float,
    dtypes.f64: ctypes.c_double, dtypes.u1: ctypes.c_uint8,
}  # fmt: skip


@dataclass(frozen=True)
class ArgABI:
    name: str
    kind: str  # "ndarray" or "scalar"
    dtype: str
    ndim: int = 0
    elem_shape: tuple[int, ...] = ()

    @property
    def prim(self) -> PrimitiveType:
        return dtypes.BY_NAME[self.dtype]


@dataclass(frozen=True)
class SiteABI:
    kind: str  # "bounds" or "assert"
    detail: str
    filename: str
    lineno: int
    col: int
    end_col: int
    line_text: str
    func_name: str


@dataclass(frozen=True)
class KernelABI:
    symbol: str
    args: tuple[ArgABI, ...]
    rets: tuple[str, ...]  # flat: a vector result contributes one entry per element
    sites: tuple[SiteABI, ...] = ()
    has_print: bool = False
    ret_shapes: tuple[tuple[int, ...], ...] = ()  # per declared result: () for a scalar, (n,) or (n, m)

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> KernelABI:
        d = json.loads(text)
        return cls(
            symbol=d["symbol"],
            args=tuple(ArgABI(**{**a, "elem_shape": tuple(a["elem_shape"])}) for a in d["args"]),
            rets=tuple(d["rets"]),
            sites=tuple(SiteABI(**s) for s in d["sites"]),
            has_print=d["has_print"],
            ret_shapes=tuple(tuple(x) for x in d["ret_shapes"]),
        )
