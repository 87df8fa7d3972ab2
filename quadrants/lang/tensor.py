"""`qd.ndarray`, and `qd.tensor` / `qd.Tensor`: one API over ndarrays and fields.

`qd.tensor(dtype, shape, backend=qd.Backend.NDARRAY | FIELD)` allocates either and returns a `qd.Tensor` wrapper;
`qd.Tensor` as a kernel parameter annotation accepts an ndarray, a field, or a wrapper of either.
"""

from __future__ import annotations

import enum
from typing import Any

from quadrants.lang import program
from quadrants.runtime.ndarray import Ndarray
from quadrants.types.compound import MatrixType


def ndarray(dtype: Any, shape: Any, needs_grad: bool = False) -> Ndarray:
    """`qd.ndarray(dtype, shape)`: a zero-initialized ndarray. `dtype` may be a vector/matrix type; `needs_grad`
    allocates `.grad` beside it."""
    if needs_grad:
        from quadrants.errors import QuadrantsRuntimeError
        from quadrants.lang.field import with_companions

        prim = program.resolve_dtype(dtype.dtype if isinstance(dtype, MatrixType) else dtype)
        if not prim.is_float:
            raise QuadrantsRuntimeError(f"{prim} is not supported for ndarray with `needs_grad=True` or "
                                        "`needs_dual=True`.")  # fmt: skip

        return with_companions(ndarray(dtype, shape), lambda: ndarray(dtype, shape), needs_grad)
    if isinstance(dtype, MatrixType):
        return Ndarray(None, shape, element_type=MatrixType(dtype.shape, program.resolve_dtype(dtype.dtype)))
    return Ndarray(program.resolve_dtype(dtype), shape)


class Backend(enum.IntEnum):
    FIELD = 0
    NDARRAY = 1


class Tensor:
    """A wrapper over an ndarray or a field, with the surface both share. Also a parameter annotation."""

    def __init__(self, impl: Any) -> None:
        from quadrants.lang.field import Field

        if isinstance(impl, Tensor):
            impl = impl._impl
        if not isinstance(impl, (Ndarray, Field)):
            raise TypeError(f"qd.Tensor wraps an ndarray or a field, not {type(impl).__name__}")
        self._impl: Any = impl

    def _unwrap(self) -> Any:
        return self._impl

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self._impl.shape)

    @property
    def dtype(self) -> Any:
        return self._impl.dtype

    @property
    def backend(self) -> Backend:
        return Backend.NDARRAY if isinstance(self._impl, Ndarray) else Backend.FIELD

    def to_numpy(self) -> Any:
        return self._impl.to_numpy()

    def from_numpy(self, arr: Any) -> None:
        self._impl.from_numpy(arr)

    def fill(self, value: Any) -> None:
        self._impl.fill(value)

    def copy_from(self, other: Any) -> None:
        self._impl.copy_from(other._unwrap() if isinstance(other, Tensor) else other)

    def __getitem__(self, index: Any) -> Any:
        return self._impl[index]

    def __setitem__(self, index: Any, value: Any) -> None:
        self._impl[index] = value

    @property
    def grad(self) -> Any:
        """The wrapped ndarray's or field's `.grad` itself (a kernel argument's grad pointer reads it)."""
        g = getattr(self._unwrap(), "grad", None)
        if g is None:
            raise AttributeError("this tensor has no gradient: allocate it with `needs_grad=True`")
        return g

    def __repr__(self) -> str:
        return f"Tensor(shape={self.shape}, dtype={self.dtype!r}, backend={self.backend.name})"


def tensor(dtype: Any, shape: Any, *, backend: Backend = Backend.NDARRAY, layout: Any = None,
           needs_grad: bool = False, **_kw: Any) -> Tensor:  # fmt: skip
    """Allocate an ndarray or a field (`backend`) and wrap it; `needs_grad` gives it a `.grad`."""
    if layout is not None and tuple(layout) != tuple(range(len(tuple(layout)))):
        raise NotImplementedError("qd.tensor(layout=...) with a non-identity layout is not supported yet")
    if Backend(backend) is Backend.FIELD:
        from quadrants.lang.field import field

        return Tensor(field(dtype, shape, needs_grad=needs_grad))
    return Tensor(ndarray(dtype, shape, needs_grad=needs_grad))


def wrap(impl: Any) -> Tensor:
    return Tensor(impl)
