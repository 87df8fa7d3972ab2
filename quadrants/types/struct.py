"""Struct types: `qd.types.struct(pos=vec3, mass=qd.f32)` and `@qd.dataclass` classes (made in lang/struct.py).

A `StructType` is an ordered set of named members, each a scalar dtype (or `float` / `int`: the program's
defaults), a vector/matrix type, or another struct type, plus the `qd.func` methods of a `@qd.dataclass`. It is
immutable and compares by its members (so two identical declarations are one type; methods are compared by
identity). Calling it builds a value: inside a kernel the frontend handles the call (members cast to their
types, missing members zero); in Python scope it returns a `qd.Struct` (lang/struct.py). `.field(shape=...)`
makes a struct field: one field per member (lang/struct.py).

`repr` is the type's stable text: fastcache keys and error messages use it.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from quadrants.types import python_values
from quadrants.types.compound import MatrixType, UnpackedVectorType
from quadrants.types.dtypes import PrimitiveType, default_uint, to_dtype


class StructType:
    __slots__ = ("members", "methods", "python_methods", "name", "_unpacked_groups")

    members: dict[str, Any]  # name -> PrimitiveType | float | int | MatrixType | StructType, in declaration order
    methods: dict[str, Any]  # name -> a qd.func (of a @qd.dataclass)
    python_methods: dict[str, Any]  # name -> a plain Python method of a @qd.dataclass (on Python-scope values)
    name: str

    def __init__(self, members: dict[str, Any], methods: dict[str, Any] | None = None, name: str = "",
                 python_methods: dict[str, Any] | None = None) -> None:  # fmt: skip
        checked: dict[str, Any] = {}
        groups: dict[str, tuple[int, Any, tuple[str, ...]]] = {}  # unpacked vector -> (count, dtype, members)
        for k, t in members.items():
            if not isinstance(k, str) or not k.isidentifier():
                raise TypeError(f"struct member names must be identifiers, got {k!r}")
            names = [f"_{k}{i}" for i in range(t.n)] if isinstance(t, UnpackedVectorType) else [k]
            for member in names:
                if member in checked:
                    from quadrants.errors import QuadrantsSyntaxError

                    group = next((g for g, (_, _, ns) in groups.items() if member in ns), k)
                    raise QuadrantsSyntaxError(f"struct member {member!r} collides with a component member of the "
                                               f"unpacked vector member {group!r} (qd.types.vector(..., "
                                               f"unpacked=True) stores {group!r} as _{group}0, _{group}1, ...)")  # fmt: skip
            if isinstance(t, UnpackedVectorType):
                for member in names:
                    checked[member] = _member_type(member, t.dtype)
                groups[k] = (t.n, checked[names[0]], tuple(names))
            else:
                checked[k] = _member_type(k, t)
        object.__setattr__(self, "members", checked)
        object.__setattr__(self, "_unpacked_groups", groups)
        object.__setattr__(self, "methods", dict(methods or {}))
        object.__setattr__(self, "python_methods", dict(python_methods or {}))
        object.__setattr__(self, "name", name)

    def __setattr__(self, key: str, value: Any) -> None:
        raise AttributeError("types are immutable")

    def __getattr__(self, name: str) -> Any:
        """A method of a @qd.dataclass (`Ray.length`)."""
        methods = object.__getattribute__(self, "methods")
        if name in methods:
            return methods[name]
        raise AttributeError(f"struct type {self!r} has no attribute {name!r}")

    def _identity(self) -> tuple[Any, ...]:
        return tuple(self.members.items()), tuple(sorted((k, id(v)) for k, v in self.methods.items())), \
            tuple(self._unpacked_groups)  # fmt: skip

    def __eq__(self, other: object) -> bool:
        return isinstance(other, StructType) and self._identity() == other._identity()

    def __hash__(self) -> int:
        return hash(("struct", self._identity()))

    def __repr__(self) -> str:
        parts = ", ".join(f"{k}={_type_text(t)}" for k, t in self.members.items())
        return f"struct {self.name}({parts})" if self.name else f"struct({parts})"

    # ---- structure ------------------------------------------------------------------------------------

    def resolve(self, default_ip: PrimitiveType, default_fp: PrimitiveType) -> StructType:
        """This type with `float` / `int` members made the program's default dtypes."""
        out: dict[str, Any] = {}
        for k, t in self.members.items():
            if isinstance(t, StructType):
                out[k] = t.resolve(default_ip, default_fp)
            elif isinstance(t, MatrixType):
                out[k] = MatrixType(t.shape, t.resolve(default_ip, default_fp))
            else:
                out[k] = to_dtype(t, default_ip, default_fp)
        resolved = type(self)(out, self.methods, self.name, self.python_methods)  # a subclass keeps its class
        object.__setattr__(resolved, "_unpacked_groups", {g: (n, out[names[0]], names)
                                                          for g, (n, _, names) in self._unpacked_groups.items()})  # fmt: skip
        for k, v in getattr(self, "__dict__", {}).items():  # a subclass's own constants (a register tile's SIZE)
            object.__setattr__(resolved, k, v)
        return resolved

    def leaves(self) -> Iterator[tuple[tuple[str, ...], Any]]:
        """(member path, scalar dtype or MatrixType) of every non-struct member, depth first in order."""
        for k, t in self.members.items():
            if isinstance(t, StructType):
                for path, leaf in t.leaves():
                    yield (k, *path), leaf
            else:
                yield (k,), t

    # ---- values and fields ----------------------------------------------------------------------------

    def given(self, args: Any, kwargs: dict[str, Any]) -> dict[str, Any]:
        """The members a call `S(*args, **kwargs)` gives: positional ones in declaration order, then keywords
        (TypeError for too many, unknown or repeated members). Both scopes build values from this."""
        names = list(self.members)
        if len(args) > len(names):
            raise TypeError(f"{self!r} has {len(names)} members, got {len(args)} positional values")
        out = dict(zip(names, args))
        for k, v in kwargs.items():
            if k not in self.members:
                raise TypeError(f"{self!r} has no member {k!r}")
            if k in out:
                raise TypeError(f"member {k!r} of {self!r} given twice")
            out[k] = v
        return out

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return python_values.make_struct(self, args, kwargs)

    def field(self, shape: Any = None, needs_grad: bool = False, layout: Any = None, name: str = "",
              offset: Any = None, needs_dual: bool = False) -> Any:  # fmt: skip
        """A field of this struct: one field per member, all of `shape` (the layout is accepted; members are
        stored as separate arrays, the SOA layout, either way)."""
        return python_values.struct_field(self, shape, needs_grad, layout, name, offset, needs_dual)


def _member_type(name: str, t: Any) -> Any:
    if isinstance(t, (StructType, MatrixType)) or t in (float, int, default_uint):
        return t
    if isinstance(t, dict):
        return StructType(t)
    if t is bool:
        return int
    try:
        return to_dtype(t)
    except Exception:  # noqa: BLE001
        raise TypeError(f"struct member {name!r}: {t!r} is not a dtype, vector/matrix type or struct type") from None


def _type_text(t: Any) -> str:
    if isinstance(t, type):
        return t.__name__
    return repr(t)


def struct(**members: Any) -> StructType:
    """`qd.types.struct(pos=qd.math.vec3, mass=qd.f32)`"""
    return StructType(members)


def is_struct_type(obj: Any) -> bool:
    return isinstance(obj, StructType)
