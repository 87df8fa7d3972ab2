"""Python-scope values of the compound types, for the rooms below the language layer.

A vector or matrix value is lang/matrix.py's `Matrix` and a struct value lang/struct.py's `Struct`, but the rooms
that hand such values out sit below lang: the runtime returns a vector element of an ndarray, the backends wrap a
kernel's vector result, and a type itself is callable (`qd.math.vec3(1, 2, 3)`, `Particle(pos=...)`,
`Particle.field(shape)`). lang registers its constructors here when it is imported (`import quadrants` imports it
before anything can run), so no lower room imports lang.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

_matrix: dict[str, Callable[..., Any]] = {}
_struct: dict[str, Callable[..., Any]] = {}
_field: dict[str, Callable[..., Any]] = {}


def register_matrix(wrap: Callable[[Any], Any], construct: Callable[[Any, tuple[Any, ...]], Any]) -> None:
    """lang/matrix.py: `wrap(array)` views a numpy array as a vector/matrix value; `construct(type, args)` builds one."""
    _matrix.update(wrap=wrap, construct=construct)


def register_struct(make: Callable[..., Any], field: Callable[..., Any]) -> None:
    """lang/struct.py: `make(type, args, kwargs)` builds a struct value; `field(type, shape, ...)` a struct field."""
    _struct.update(make=make, field=field)


def register_field(field: Callable[..., Any]) -> None:
    """lang/field.py: `field(dtype, shape, **options)` is `qd.field` (`qd.types.matrix(2, 2, qd.f32).field(shape)`)."""
    _field.update(field=field)


def make_field(dtype: Any, shape: Any, **kwargs: Any) -> Any:
    return _field["field"](dtype, shape, **kwargs)


def wrap_matrix(arr: Any) -> Any:
    """The vector/matrix value viewing the numpy array `arr` (writes through it)."""
    return _matrix["wrap"](arr)


def construct_matrix(mtype: Any, args: tuple[Any, ...]) -> Any:
    return _matrix["construct"](mtype, args)


def make_struct(stype: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    return _struct["make"](stype, args, kwargs)


def struct_field(stype: Any, *args: Any) -> Any:
    return _struct["field"](stype, *args)
