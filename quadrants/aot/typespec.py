"""Argument types as a manifest writes them, parsed, turned into example arguments, and written back.

    f32 | i32 | ... | u1                       a scalar
    ndarray[f32, 1]                            a qd.ndarray of 1 dimension
    ndarray[vector(3, f32), 2]                 ... of vectors (also vec2..vec4, ivec2..ivec4: f32 / i32)
    ndarray[matrix(3, 3, f32), 1]              ... of matrices (also mat2..mat4: f32)
    numpy[f64, 2] / torch[f32, 1]              a numpy array / a CPU torch tensor
    ndarray[f32, 1, grad] / torch[f32, 1, grad]   ... with a `.grad` (needs_grad / requires_grad): what an
                                               adjoint (`kernel.grad`, a manifest name ending `.grad`) passes

A numpy array, a torch tensor and a qd.ndarray of one element type and dimension compile to the same kernel
(one key), so all three spellings precompile the same entry.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from quadrants.types import dtypes
from quadrants.types.dtypes import PrimitiveType

SCALARS = ("i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "f16", "f32", "f64", "u1")
CONTAINERS = ("ndarray", "numpy", "torch")
ALIASES = {
    **{f"vec{n}": ((n,), "f32") for n in (2, 3, 4)},
    **{f"ivec{n}": ((n,), "i32") for n in (2, 3, 4)},
    **{f"mat{n}": ((n, n), "f32") for n in (2, 3, 4)},
}
EXPECTED = (
    'a type such as "f32", "ndarray[f32, 1]", "ndarray[vector(3, f32), 1]", "ndarray[matrix(2, 2, f64), 2]", '
    '"numpy[f64, 2]" or "torch[f32, 1]"'
)

_ARRAY = re.compile(r"^(ndarray|numpy|torch)\[\s*(.+?)\s*,\s*(\d+)\s*(,\s*grad\s*)?\]$")
_VECTOR = re.compile(r"^vector\(\s*(\d+)\s*,\s*(\w+)\s*\)$")
_MATRIX = re.compile(r"^matrix\(\s*(\d+)\s*,\s*(\d+)\s*,\s*(\w+)\s*\)$")


class TypeSpecError(ValueError):
    pass


@dataclass(frozen=True)
class TypeSpec:
    """A parsed argument type: a scalar (`container` is None) or an array of `elem_shape`-shaped elements."""

    dtype: PrimitiveType
    container: str | None = None
    ndim: int = 0
    elem_shape: tuple[int, ...] = ()
    grad: bool = False  # the array has a `.grad` (needs_grad=True / requires_grad=True)

    def text(self) -> str:
        if self.container is None:
            return str(self.dtype)
        return f"{self.container}[{element_text(self.dtype, self.elem_shape)}, {self.ndim}{', grad' if self.grad else ''}]"

    def example(self) -> Any:
        """A smallest argument of this type (one element per axis)."""
        import numpy as np

        shape = (1,) * self.ndim + self.elem_shape
        if self.container is None:
            return False if self.dtype is dtypes.u1 else 0.0 if self.dtype.is_float else 0
        if self.container == "numpy":
            return np.zeros(shape, dtype=self.dtype.np_dtype)
        if self.container == "torch":
            import torch

            dtype = getattr(torch, _TORCH_NAMES.get(str(self.dtype), "float32"))
            return torch.zeros(shape, dtype=dtype, requires_grad=self.grad)
        from quadrants.lang.matrix import Matrix, Vector
        from quadrants.lang.tensor import ndarray

        g = self.grad
        if not self.elem_shape:
            return ndarray(self.dtype, (1,) * self.ndim, needs_grad=g)
        if len(self.elem_shape) == 1:
            return Vector.ndarray(self.elem_shape[0], self.dtype, (1,) * self.ndim, needs_grad=g)
        return Matrix.ndarray(self.elem_shape[0], self.elem_shape[1], self.dtype, (1,) * self.ndim, needs_grad=g)


def of_value(v: Any, with_grad: bool = False) -> TypeSpec | None:
    """The type of an array argument (a qd.ndarray, a numpy array, a CPU torch tensor); None for other values.
    `with_grad`: say whether it has a `.grad` (what an adjoint's specialization depends on)."""
    import dataclasses

    t = _of_value(v)
    if t is None or not with_grad or t.container == "numpy":
        return t
    impl = getattr(v, "_unwrap", lambda: v)()
    has = bool(impl.requires_grad) if t.container == "torch" else impl.__dict__.get("grad") is not None
    return dataclasses.replace(t, grad=has and t.dtype.is_float)


def _of_value(v: Any) -> TypeSpec | None:
    import numpy as np

    from quadrants.runtime.ndarray import Ndarray

    impl = getattr(v, "_unwrap", lambda: v)()
    if isinstance(impl, Ndarray):
        t = impl._spec
        return TypeSpec(t.dtype, "ndarray", t.ndim, tuple(t.elem_shape))
    if isinstance(impl, np.ndarray):
        try:
            return TypeSpec(dtypes.from_numpy(impl.dtype), "numpy", impl.ndim)
        except TypeError:
            return None
    from quadrants.runtime.leaves import is_torch_tensor

    if is_torch_tensor(impl):
        name = str(impl.dtype).removeprefix("torch.")
        prim = {"float32": "f32", "float64": "f64", "float16": "f16", "int32": "i32", "int64": "i64", "int8": "i8",
                "int16": "i16", "uint8": "u8", "bool": "u1"}.get(name)  # fmt: skip
        return TypeSpec(dtypes.to_dtype(prim), "torch", impl.dim()) if prim else None
    return None


_TORCH_NAMES = {"u1": "bool", "f16": "float16", "f32": "float32", "f64": "float64", "i8": "int8", "i16": "int16",
                "i32": "int32", "i64": "int64", "u8": "uint8", "u16": "uint16", "u32": "uint32", "u64": "uint64"}  # fmt: skip


def element_text(dtype: PrimitiveType, elem_shape: tuple[int, ...]) -> str:
    if not elem_shape:
        return str(dtype)
    if len(elem_shape) == 1:
        return f"vector({elem_shape[0]}, {dtype})"
    return f"matrix({elem_shape[0]}, {elem_shape[1]}, {dtype})"


def _scalar(name: str, whole: str) -> PrimitiveType:
    if name not in SCALARS:
        raise TypeSpecError(f"unknown type {whole!r}; expected {EXPECTED}")
    return dtypes.to_dtype(name)


def parse(text: str) -> TypeSpec:
    """Parse a manifest type string; a TypeSpecError says what was expected."""
    t = text.strip()
    if t in SCALARS:
        return TypeSpec(dtypes.to_dtype(t))
    m = _ARRAY.match(t)
    if m is None:
        raise TypeSpecError(f"unknown type {text!r}; expected {EXPECTED}")
    container, elem, ndim = m.group(1), m.group(2), int(m.group(3))
    if m.group(4):
        if container == "numpy":
            raise TypeSpecError(f"{text!r}: a numpy array has no .grad (use ndarray[...] or torch[...])")
        plain = parse(f"{container}[{elem}, {ndim}]")
        if not plain.dtype.is_float:
            raise TypeSpecError(f"{text!r}: only arrays of real numbers have a .grad")
        return TypeSpec(plain.dtype, plain.container, plain.ndim, plain.elem_shape, grad=True)
    if not (0 if container == "ndarray" else 1) <= ndim <= MAX_NDIM:
        raise TypeSpecError(f"{text!r}: an array has 1 to {MAX_NDIM} dimensions (a qd.ndarray 0 to {MAX_NDIM}), "
                            f"not {ndim}")  # fmt: skip
    if elem in ALIASES:
        shape, name = ALIASES[elem]
        return TypeSpec(dtypes.to_dtype(name), container, ndim, shape)
    if (v := _VECTOR.match(elem)) is not None:
        return TypeSpec(_scalar(v.group(2), text), container, ndim, _elem_shape(text, int(v.group(1))))
    if (mm := _MATRIX.match(elem)) is not None:
        shape = _elem_shape(text, int(mm.group(1)), int(mm.group(2)))
        return TypeSpec(_scalar(mm.group(3), text), container, ndim, shape)
    return TypeSpec(_scalar(elem, text), container, ndim)


MAX_NDIM = 16
MAX_ELEMENTS = 1024  # a vector/matrix element is unrolled into scalars: beyond this, use another dimension


def _elem_shape(text: str, *sizes: int) -> tuple[int, ...]:
    n = 1
    for s in sizes:
        n *= s
    if min(sizes) < 1 or n > MAX_ELEMENTS:
        raise TypeSpecError(f"{text!r}: vector and matrix sizes must be at least 1, with at most {MAX_ELEMENTS} "
                            f"elements in all (got {' x '.join(map(str, sizes))})")  # fmt: skip
    return tuple(sizes)
