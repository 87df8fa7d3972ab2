"""The IR's non-scalar value types (ndarray handles and pointers): a module of their own because the runtime
needs `NdType` at every ndarray, without loading the IR node classes."""

from __future__ import annotations

from dataclasses import dataclass

from quadrants.types.dtypes import PrimitiveType


@dataclass(frozen=True, slots=True)
class NdType:
    """An ndarray handle: `dtype` scalars, `ndim` indexed dimensions, then a fixed element shape
    (`()` for scalars, `(n,)` for vectors, `(n, m)` for matrices).

    `layout` is a `qd.tensor(layout=)` permutation (the canonical axis stored at each memory level, outermost
    first; `()` is the identity): kernels index canonically and the frontend permutes the indices to the
    physical ones, so the layout is part of the type (and of every key built from it)."""

    dtype: PrimitiveType
    ndim: int
    elem_shape: tuple[int, ...] = ()
    layout: tuple[int, ...] = ()

    def __repr__(self) -> str:
        el = "" if not self.elem_shape else ", elem=" + "x".join(map(str, self.elem_shape))
        lay = "" if not self.layout else ", layout=" + "".join(map(str, self.layout))
        return f"ndarray[{self.dtype}, {self.ndim}{el}{lay}]"


@dataclass(frozen=True, slots=True)
class PtrType:
    """The address of one `pointee` scalar (an ndarray element or a local variable)."""

    pointee: PrimitiveType

    def __repr__(self) -> str:
        return f"ptr<{self.pointee}>"
