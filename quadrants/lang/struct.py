"""Structs in Python scope: `qd.Struct` values and struct fields.

- `Struct`: a struct value (what `S(a=1, b=...)` makes outside kernels, what a kernel returns for a struct
  result, what a struct kernel argument reads its members from). Members are attributes; it prints as a dict.
  `qd.Struct(...)` keeps the values as given; a struct type's `S(...)` converts each member to its type, as
  Quadrants does (an integer member given 2.5 is 2); vector/matrix members become `qd.Vector` / `qd.Matrix`, and a
  member not given is zero.
- `StructField`: `S.field(shape=...)` / `qd.Struct.field({...}, shape=...)`: one field per member (nested
  structs give nested struct fields). `f.pos` is the member's field; `f[i]` is the element, whose members read
  and write the fields (`f[i].pos = ...`); `f[i] = S(...)` (or a dict) writes every member; `to_numpy()` /
  `from_numpy()` take a dict of arrays, as in Quadrants.
"""

from __future__ import annotations

import inspect
import types
import typing
from typing import Any

import numpy as np

from quadrants.errors import QuadrantsSyntaxError
from quadrants.frontend.func import Func
from quadrants.lang.field import Companions
from quadrants.types import python_values
from quadrants.types.compound import MatrixType
from quadrants.types.struct import StructType


class Struct:
    """`qd.Struct(a=1, b=qd.Vector([1, 2]))`, or `qd.Struct({"a": 1})`: a struct value."""

    __qd_intrinsic__ = "Struct"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        members: dict[str, Any] = {}
        for a in args:
            if not isinstance(a, dict):
                raise TypeError(f"qd.Struct takes dicts and keyword arguments, got {type(a).__name__}")
            members.update(a)
        members.update(kwargs)
        object.__setattr__(self, "_members", {k: _python_value(v) for k, v in members.items()})
        object.__setattr__(self, "_type", None)

    @classmethod
    def _typed(cls, t: StructType, members: dict[str, Any]) -> Struct:
        """A value of struct type `t` whose members are already Python-scope values."""
        out = cls.__new__(cls)
        object.__setattr__(out, "_members", members)
        object.__setattr__(out, "_type", t)
        return out

    @staticmethod
    def field(members: dict[str, Any], shape: Any = None, needs_grad: bool = False, layout: Any = None,
              name: str = "", offset: Any = None, needs_dual: bool = False) -> StructField:  # fmt: skip
        """`qd.Struct.field({"pos": qd.math.vec3, "m": qd.f32}, shape=n)`"""
        return StructType(members).field(shape, needs_grad, layout, name, offset, needs_dual)

    def __getattr__(self, name: str) -> Any:
        members = object.__getattribute__(self, "_members")
        if name in members:
            return members[name]
        t = object.__getattribute__(self, "_type")
        if t is not None and name in t.python_methods:  # a plain Python method of its @qd.dataclass
            return types.MethodType(t.python_methods[name], self)
        raise AttributeError(f"struct has no member {name!r}")

    def __setattr__(self, name: str, value: Any) -> None:
        if name not in self._members:
            raise AttributeError(f"struct has no member {name!r}")
        self._members[name] = _python_value(value)

    def __getitem__(self, name: str) -> Any:
        return self._members[name]

    # `keys`, `items`, `entries` and `methods` are properties, as in Quadrants (`for k, v in s.items:`)
    @property
    def keys(self) -> list[str]:
        """The member names."""
        return list(self._members)

    @property
    def items(self) -> Any:
        """The members' (name, value) pairs (a dict's items view)."""
        return self._members.items()

    @property
    def entries(self) -> dict[str, Any]:
        """The members by name (the struct's own dict: assigning `s.x = v` is seen here)."""
        return self._members

    @property
    def methods(self) -> dict[str, Any]:
        """The Python methods of its `@qd.dataclass` type (none for a plain `qd.Struct(...)`)."""
        t = object.__getattribute__(self, "_type")
        return dict(t.python_methods) if t is not None else {}

    def to_dict(self) -> dict[str, Any]:
        """Members as a dict: vectors/matrices as numpy arrays, nested structs as dicts."""
        return {k: _dict_value(v) for k, v in self.items}

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Struct):
            other = other.to_dict()
        if not isinstance(other, dict) or set(other) != set(self._members):
            return NotImplemented
        return all(np.array_equal(np.asarray(_dict_value(v)), np.asarray(_dict_value(other[k])))
                   for k, v in self.items)  # fmt: skip

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return repr({k: _repr_value(v) for k, v in self.items})


def _python_value(v: Any) -> Any:
    from quadrants.lang.matrix import Matrix

    if isinstance(v, dict):
        return Struct(v)
    if isinstance(v, (list, tuple)) or (isinstance(v, np.ndarray) and v.ndim > 0):
        return Matrix(v)
    return v


def _dict_value(v: Any) -> Any:
    if isinstance(v, Struct):
        return v.to_dict()
    if hasattr(v, "to_numpy"):
        return v.to_numpy()
    return v


def _repr_value(v: Any) -> Any:
    if isinstance(v, Struct):
        return {k: _repr_value(x) for k, x in v.items}
    if hasattr(v, "to_numpy"):
        return v.to_numpy().tolist()
    return v


def make_struct(t: StructType, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Struct:
    """`S(...)` in Python scope: positional members in declaration order, then keywords; the rest zero."""
    given = t.given(args, kwargs)
    values = {}
    for k, mt in t.members.items():
        v = given.get(k)
        if isinstance(mt, StructType):
            if isinstance(v, (bool, int, float, np.generic)):  # `S(1)`: the member's type called with 1
                v = make_struct(mt, (v,), {})
            v = make_struct(mt, (), v) if isinstance(v, dict) else v if v is not None else make_struct(mt, (), {})
        elif isinstance(mt, MatrixType):
            v = _zeros(mt) if v is None else _cast_matrix(mt, v)
        else:
            v = _cast_scalar(mt, 0 if v is None else v)
        values[k] = _python_value(v)
    return Struct._typed(t, values)


def _cast_scalar(mt: Any, v: Any) -> Any:
    """A scalar member as its type's Python number, as Quadrants converts it (`int(2.5)` is 2; no wrap)."""
    if isinstance(v, (bool, int, float, np.generic)):
        return float(v) if mt is float or getattr(mt, "is_float", False) else int(v)
    return v


def _cast_matrix(mt: MatrixType, v: Any) -> Any:
    """A vector/matrix member with its type's elements (a float given to an integer member is truncated)."""
    from quadrants.lang.matrix import Matrix

    if isinstance(v, (list, tuple, np.ndarray, Matrix)):
        return Matrix(v, mt.dtype)
    return v


def _zeros(t: MatrixType) -> Any:
    from quadrants.lang.matrix import Matrix

    dt = float if t.dtype is float or getattr(t.dtype, "is_float", False) else int
    return Matrix(np.zeros(t.shape, dtype=dt))


class StructField(Companions):
    """A field of a struct type: one field per member, each of the struct field's shape."""

    def __init__(self, t: StructType, shape: Any, name: str = "", offset: Any = None, layout: Any = None) -> None:
        from quadrants.lang.compat import Layout
        from quadrants.lang.field import domain_offset, field

        members: dict[str, Any]
        shape_t: tuple[int, ...]
        off: Any
        if shape is None:  # placed later in an SNode tree, member by member (lang/snode.py)
            domain_offset(offset, 0, None)  # Quadrants' error when an offset comes without a shape
            members = {k: StructField(mt, None) if isinstance(mt, StructType) else field(mt)
                       for k, mt in t.members.items()}  # fmt: skip
            shape_t, off = (), ()
        else:
            shape_t = (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(int(s) for s in shape)
            off = domain_offset(offset, len(shape_t), shape)
            members = {k: StructField(mt, shape_t, offset=off) if isinstance(mt, StructType)
                       else field(mt, shape_t, offset=off) for k, mt in t.members.items()}  # fmt: skip
            if layout is not Layout.SOA:  # Quadrants' default, AoS: its members interleave in memory, so it shares none
                for leaf in _leaves(members):
                    leaf._interleaved = True
        # `struct_type` and `field_dict` (the member fields by name: `_members`, the same dict) are instance
        # attributes, as Quadrants' StructField keeps them
        self.__dict__.update(struct_type=t, _members=members, field_dict=members, _shape=shape_t, name=name,
                             offset=off)  # fmt: skip

    def __qd_struct_field__(self) -> StructType:
        return self.struct_type  # type: ignore[no-any-return]

    @property
    def keys(self) -> list[str]:
        """The member names (a property, as Quadrants' `f.keys`)."""
        return list(self._members)

    # What Quadrants' StructField inherits from its Field base: shape, the first member's snode and dtype, the
    # layout (and `has_grad()` / `has_dual()`: Companions); a DLPack export is refused (no single array).
    @property
    def shape(self) -> tuple[int, ...]:
        return self.__dict__["_shape"]  # type: ignore[no-any-return]

    @shape.setter
    def shape(self, value: tuple[int, ...]) -> None:
        self.__dict__["_shape"] = value

    @property
    def snode(self) -> Any:
        return next(iter(self._leaf_fields())).snode

    @property
    def dtype(self) -> Any:
        return next(iter(self._leaf_fields())).dtype

    @property
    def layout(self) -> Any:
        return next(iter(self._leaf_fields())).layout

    def to_dlpack(self, versioned: bool = False) -> Any:
        raise NotImplementedError("a struct field is one field per member, not one array: export a member's "
                                  "(`f.member.to_dlpack()`)")  # fmt: skip

    def get_member_field(self, name: str) -> Any:
        return self._members[name]

    def __getattr__(self, name: str) -> Any:
        members = self.__dict__.get("_members", {})
        if name in members:
            return members[name]
        raise AttributeError(f"struct field has no member {name!r}")

    def __getitem__(self, index: Any) -> StructElement:
        key = index if isinstance(index, tuple) else (index,) if index is not None else ()
        next(iter(self._leaf_fields()))._key(index)  # index checks and errors as a field's
        return StructElement(self, key)

    def __setitem__(self, index: Any, value: Any) -> None:
        element = self[index]
        for k in self._members:
            setattr(element, k, _member_of(value, k))

    def parent(self, n: int = 1) -> Any:
        """The SNode `n` levels above the place of its members (placed together), as in Quadrants."""
        return next(iter(self._leaf_fields())).parent(n)

    def _leaf_fields(self) -> Any:
        for f in self._members.values():
            if isinstance(f, StructField):
                yield from f._leaf_fields()
            else:
                yield f

    def to_numpy(self) -> dict[str, Any]:
        return {k: f.to_numpy() for k, f in self._members.items()}

    def from_numpy(self, arrays: dict[str, Any]) -> None:
        for k, f in self._members.items():
            f.from_numpy(arrays[k])

    def to_torch(self, device: Any = None) -> dict[str, Any]:
        """One torch tensor per member (nested structs as nested dicts), as Quadrants returns them."""
        return {k: f.to_torch(device=device) for k, f in self._members.items()}

    def from_torch(self, tensors: dict[str, Any]) -> None:
        for k, f in self._members.items():
            f.from_torch(tensors[k])

    def fill(self, value: Any) -> None:
        for f in self._members.values():
            f.fill(value)

    def copy_from(self, other: StructField) -> None:
        for k, f in self._members.items():
            f.copy_from(other._members[k])

    def __iter__(self) -> Any:
        raise NotImplementedError("Struct for is only available in Quadrants scope (a Python loop over a qd.field)")

    def __repr__(self) -> str:
        return f"<qd.field {self.struct_type!r} shape={self.shape}>"


def _member_of(value: Any, k: str) -> Any:
    if isinstance(value, dict):
        return value[k]
    return getattr(value, k)


class StructElement(Struct):
    """`f[i]` of a struct field in Python scope: its members read and write the member fields."""

    def __init__(self, owner: StructField, key: tuple[Any, ...]) -> None:
        object.__setattr__(self, "_owner", owner)
        object.__setattr__(self, "_key", key)
        object.__setattr__(self, "_type", owner.struct_type)

    @property
    def _members(self) -> dict[str, Any]:  # type: ignore[override]
        return {k: getattr(self, k) for k in self._owner._members}

    def __getattr__(self, name: str) -> Any:
        members = object.__getattribute__(self, "_owner")._members
        if name not in members:
            raise AttributeError(f"struct has no member {name!r}")
        key = object.__getattribute__(self, "_key")
        return members[name][key if key else None]

    def __setattr__(self, name: str, value: Any) -> None:
        members = self._owner._members
        if name not in members:
            raise AttributeError(f"struct has no member {name!r}")
        f = members[name]
        if isinstance(f, StructField):
            f[self._key if self._key else None] = value
        else:
            f[self._key if self._key else None] = np.asarray(value) if hasattr(value, "to_numpy") else value


def result_regrouper(returns: tuple[Any, ...]) -> Any:
    """For a kernel whose results include structs (each compiled as its leaf members, in order): a function
    turning the launcher's flat results back into `qd.Struct` values; None when no result is a struct."""
    if not any(isinstance(r, StructType) for r in returns):
        return None
    counts = [sum(1 for _ in r.leaves()) if isinstance(r, StructType) else 1 for r in returns]
    total = sum(counts)

    def regroup(result: Any) -> Any:
        flat = list(result) if total > 1 else [result]
        out = []
        k = 0
        for r, n in zip(returns, counts):
            out.append(_struct_from_leaves(r, flat[k : k + n]) if isinstance(r, StructType) else flat[k])
            k += n
        return out[0] if len(out) == 1 else tuple(out)

    return regroup


def _struct_from_leaves(t: StructType, values: list[Any]) -> Struct:
    it = iter(values)

    def build(st: StructType) -> Struct:
        return Struct._typed(st, {k: build(mt) if isinstance(mt, StructType) else next(it) for k, mt in st.members.items()})

    return build(t)


def dataclass(cls: type) -> StructType:
    """`@qd.dataclass`: a class's annotated members become a struct type, its `qd.func` methods the type's
    methods (called on values: `ray.length()`)."""
    raw = dict(vars(cls).get("__annotations__", {}))
    try:
        hints = typing.get_type_hints(cls)
    except Exception:  # noqa: BLE001 - a string annotation naming a local of the defining function
        hints = raw
    members = {k: hints.get(k, t) for k, t in raw.items()}
    if any(k in vars(cls) for k in members):  # Quadrants' words
        raise QuadrantsSyntaxError("Default value in @dataclass is not supported.")
    methods = {k: v for k, v in vars(cls).items() if isinstance(v, Func)}
    python = {k: v for k, v in vars(cls).items() if inspect.isfunction(v) and not k.startswith("__")}
    return StructType(members, methods, cls.__name__, python)


def _struct_field(t: StructType, shape: Any, needs_grad: bool = False, layout: Any = None, name: str = "",
                  offset: Any = None, needs_dual: bool = False) -> Any:  # fmt: skip
    """`S.field(shape=...)`: a struct field (members are stored as separate arrays either way; the layout only
    decides whether their memory is shared, as in Quadrants: SoA yes, AoS - the default - no), with its gradient
    and dual companions when asked for."""
    from quadrants.lang.field import check_real, with_companions

    value = StructField(t, shape, name, offset, layout)
    if needs_grad or needs_dual:
        for leaf in _leaves(value._members):
            check_real(leaf._prim, True)
    return with_companions(value,
                           lambda: StructField(t, shape, name, offset, layout), needs_grad, needs_dual)  # fmt: skip


def _leaves(members: dict[str, Any]) -> list[Any]:
    """The fields under a struct field's members, nested struct fields walked."""
    out: list[Any] = []
    for m in members.values():
        out.extend(_leaves(m._members) if isinstance(m, StructField) else [m])
    return out


python_values.register_struct(make_struct, _struct_field)  # struct types are callable through this (types/ is below lang)
