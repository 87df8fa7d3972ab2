"""Compound arguments in the manifest: dataclass instances and `@qd.data_oriented` objects, written at the level
the fastcache key sees them, and rebuilt by `qd precompile`.

A kernel that takes such an object is keyed on its class, the types of its array members and the values of its
compiled-in members; never on array sizes or contents (docs/fastcache.md). So an object is described by its
class and one entry per member, `qd record` writes what a run passed (`describe`), and `qd precompile` builds an
example with the same key (`build`): the class's `__new__` without `__init__` (whose arguments the manifest cannot
know), then each member set directly, arrays as one-element examples of their type.

    [[kernel]]
    name = "sim.step:advance"
    signatures = [{ state = { object = "State" }, config = { object = "Config" } }]

    [objects.State]
    class = "sim.state:State"
    members = { x = "ndarray[f32, 2]", v = "ndarray[vec3, 1]", dt = 0.01, params = { object = "Params" } }

Member forms: a type string is an array ("ndarray[f32, 2]", see typespec.py); a number, boolean or list (a tuple)
is that value; `{ value = "text" }` a string; `{ dtype = "f32" }` a scalar type; `{ enum = "module:Class.NAME" }`
an enum member; `{ numpy = "float32", value = 1.5 }` a numpy scalar; `{ none = true }` None; `{ object = "Name" }`
another entry of [objects] (shared entries build one instance; a back-reference to an enclosing object closes the
cycle as it did in the program).
"""

from __future__ import annotations

import dataclasses
import enum
import numbers
import re
from dataclasses import dataclass
from typing import Any

from quadrants.aot import typespec
from quadrants.cache.source import stable_module

OBJECT_KEYS = {"class", "members"}
_REF = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_][\w.]*$")
_NAME = re.compile(r"^[A-Za-z_][\w-]*$")


@dataclass(frozen=True)
class ObjectRef:
    """`{ object = "Name" }`: the entry `Name` of the manifest's [objects] table."""

    name: str


@dataclass(frozen=True)
class EnumRef:
    """`{ enum = "module:Class.NAME" }`."""

    ref: str


@dataclass(frozen=True)
class Literal:
    """A member's value as the program had it (numbers, strings, tuples, None, scalar types, numpy scalars)."""

    value: Any


Member = typespec.TypeSpec | ObjectRef | EnumRef | Literal


@dataclass(frozen=True)
class ObjectSpec:
    """One entry of [objects]: the class (`module:qualname`) and its members in the program's order."""

    name: str
    cls: str
    members: dict[str, Member]


class ObjectError(ValueError):
    """A malformed entry or member; `path` is where it is written, below the [objects] table."""

    def __init__(self, message: str, path: tuple[Any, ...]) -> None:
        super().__init__(message)
        self.path = path


# ---- the manifest's side: parse and build -----------------------------------------------------------------

MEMBER_FORMS = ('a type string ("ndarray[f32, 1]"), a number, a boolean, a list, { value = "text" }, '
                '{ dtype = "f32" }, { enum = "module:Class.NAME" }, { numpy = "float32", value = 1.5 }, '
                '{ none = true } or { object = "Name" }')  # fmt: skip


def parse_table(table: Any) -> dict[str, ObjectSpec]:
    """The [objects] table, validated (every `{ object = ... }` names an entry); raises ObjectError."""
    if not isinstance(table, dict):
        raise ObjectError("[objects] must be a table of [objects.Name] entries", ())
    out = {}
    for name, entry in table.items():
        if not _NAME.match(name):
            raise ObjectError(f"object name {name!r}: use letters, digits, _ and -", (name,))
        if not isinstance(entry, dict):
            raise ObjectError(f"[objects.{name}] must be a table with class and members", (name,))
        for k in entry:
            if k not in OBJECT_KEYS:
                raise ObjectError(f"unknown key {k!r}; expected class and members", (name, k))
        cls = entry.get("class")
        if not isinstance(cls, str) or not _REF.match(cls):
            raise ObjectError('class must be "module:Class"', (name, "class"))
        raw = entry.get("members", {})
        if not isinstance(raw, dict):
            raise ObjectError("members must be a table: { name = ... }", (name, "members"))
        members = {k: parse_member(v, (name, "members", k)) for k, v in raw.items()}
        out[name] = ObjectSpec(name, cls, members)
    for spec in out.values():
        for k, m in spec.members.items():
            if isinstance(m, ObjectRef) and m.name not in out:
                raise ObjectError(f"no [objects.{m.name}] entry", (spec.name, "members", k))
    return out


def parse_member(v: Any, path: tuple[Any, ...]) -> Member:
    if isinstance(v, str):
        try:
            t = typespec.parse(v)
        except typespec.TypeSpecError as e:
            raise ObjectError(f"{e} (a string is a type; write text as {{ value = ... }})", path) from None
        if t.container is None:
            raise ObjectError(f"{v!r} is a scalar type: a member that holds one is {{ dtype = {v!r} }}", path)
        return t
    if isinstance(v, (bool, int, float)):
        return Literal(v)
    if isinstance(v, list):
        return Literal(_tuples(v, path))
    if isinstance(v, dict):
        keys = set(v)
        if keys == {"object"} and isinstance(v["object"], str):
            return ObjectRef(v["object"])
        if keys == {"value"} and isinstance(v["value"], str):
            return Literal(v["value"])
        if keys == {"none"} and v["none"] is True:
            return Literal(None)
        if keys == {"dtype"} and v["dtype"] in typespec.SCALARS:
            from quadrants.types import dtypes

            return Literal(dtypes.to_dtype(v["dtype"]))
        if keys == {"enum"} and isinstance(v["enum"], str) and _REF.match(v["enum"]) and "." in v["enum"]:
            return EnumRef(v["enum"])
        if keys == {"numpy", "value"} and isinstance(v["numpy"], str) and isinstance(v["value"], (bool, int, float)):
            import numpy as np

            try:
                return Literal(np.dtype(v["numpy"]).type(v["value"]))
            except TypeError:
                raise ObjectError(f"unknown numpy type {v['numpy']!r}", path) from None
    raise ObjectError(f"unexpected {v!r}; expected {MEMBER_FORMS}", path)


def _tuples(v: Any, path: tuple[Any, ...]) -> Any:
    if isinstance(v, list):
        return tuple(_tuples(x, path) for x in v)
    if isinstance(v, (bool, int, float, str)):
        return v
    raise ObjectError(f"a list member holds {v!r}; expected numbers, strings and lists", path)


def build(objects: dict[str, ObjectSpec], name: str, resolve: Any) -> Any:
    """An example instance of the entry `name` (and of the entries it names), with `resolve("module:qualname")`
    importing classes and enums. Raises ObjectError naming the entry and member."""
    made: dict[str, Any] = {}

    def make(n: str) -> Any:
        if n in made:
            return made[n]
        spec = objects[n]
        try:
            cls = resolve(spec.cls)
        except (ImportError, AttributeError) as e:
            raise ObjectError(f"class {spec.cls!r} not found ({e})", (n, "class")) from None
        if not isinstance(cls, type):
            raise ObjectError(f"{spec.cls!r} is not a class", (n, "class"))
        obj = object.__new__(cls) if cls.__new__ is object.__new__ else cls.__new__(cls)  # type: ignore[call-overload]
        made[n] = obj  # before its members: a back-reference to it closes the cycle
        for k, m in spec.members.items():
            where = (n, "members", k)
            try:
                object.__setattr__(obj, k, value(m, where))
            except ObjectError:
                raise
            except Exception as e:  # noqa: BLE001 - a class that refuses the member (slots, descriptors)
                raise ObjectError(f"cannot set {k!r} on a {cls.__name__}: {e}", where) from None
        return obj

    def value(m: Member, where: tuple[Any, ...]) -> Any:
        if isinstance(m, typespec.TypeSpec):
            return m.example()
        if isinstance(m, ObjectRef):
            return make(m.name)
        if isinstance(m, EnumRef):
            cls_ref, _, member = m.ref.rpartition(".")
            try:
                return resolve(cls_ref)[member]
            except (ImportError, AttributeError, KeyError, TypeError) as e:
                raise ObjectError(f"enum member {m.ref!r} not found ({e!r})", where) from None
        return m.value

    return make(name)


# ---- the program's side: describe what a run passed ---------------------------------------------------------

OBJECT = "__object__"  # a described object in a record line: {"__object__": "module:Class", "members": {...}}


def is_object(v: Any) -> bool:
    """A dataclass instance or a data_oriented object: what `describe` writes."""
    from quadrants.lang.data_oriented import is_data_oriented

    return (dataclasses.is_dataclass(v) and not isinstance(v, type)) or is_data_oriented(v)


def describe(v: Any, unrecordable: str, walking: tuple[int, ...] = (), with_grad: bool = False) -> Any:
    """A dataclass / data_oriented object as nested JSON for a record line: its class and each member as a
    manifest writes it; `{unrecordable: why}` for what a manifest cannot spell (a field, a Vector value, an
    arbitrary object). `record.merge` flattens the nesting into [objects] entries. `with_grad` (an adjoint's
    call): array members say whether they have a `.grad`, which the adjoint's specialization depends on."""
    if id(v) in walking:
        return {unrecordable: f"a back-reference to an enclosing {type(v).__name__}"}
    cls = type(v)
    if "<locals>" in cls.__qualname__:
        return {unrecordable: f"a {cls.__name__} (a class defined inside a function)"}
    if dataclasses.is_dataclass(v):
        names = [f.name for f in dataclasses.fields(v)]
    else:
        names = [k for k in vars(v) if k.isidentifier()]
    members = {}
    for k in names:
        d = _member(getattr(v, k), unrecordable, walking + (id(v),), with_grad)
        if isinstance(d, dict) and unrecordable in d:
            return {unrecordable: f"a {cls.__name__} whose member {k!r} is {d[unrecordable]}"}
        members[k] = d
    return {OBJECT: f"{stable_module(cls.__module__)}:{cls.__qualname__}", "members": members}


def _member(v: Any, unrecordable: str, walking: tuple[int, ...], with_grad: bool = False) -> Any:
    import numpy as np

    from quadrants.types.dtypes import PrimitiveType

    if v is None:
        return {"none": True}
    if isinstance(v, enum.Enum):
        cls = type(v)
        return {"enum": f"{stable_module(cls.__module__)}:{cls.__qualname__}.{v.name}"}
    if isinstance(v, np.generic):
        return {"numpy": v.dtype.name, "value": v.item()}
    if isinstance(v, (bool, numbers.Integral, numbers.Real)):
        return v
    if isinstance(v, str):
        return {"value": v}
    if isinstance(v, PrimitiveType):
        return {"dtype": str(v)}
    if isinstance(v, tuple) and plain_nested(v):
        return as_lists(v)
    if is_object(v):
        return describe(v, unrecordable, walking, with_grad)
    t = typespec.of_value(v, with_grad)
    if t is not None:
        return t.text()
    field = getattr(getattr(v, "_unwrap", lambda: v)(), "__qd_field__", None) is not None
    return {unrecordable: "a field (fields are compiled in; a manifest cannot rebuild them)" if field
            else f"a {type(v).__name__}"}  # fmt: skip


def plain_nested(v: Any, depth: int = 0) -> bool:
    """Numbers, strings and nested tuples of them: what a manifest list gives back."""
    if isinstance(v, (bool, int, float, str)) and not isinstance(v, enum.Enum):
        return True
    return depth < 8 and isinstance(v, (tuple, list)) and all(plain_nested(x, depth + 1) for x in v)


def as_lists(v: Any) -> Any:
    return [as_lists(x) for x in v] if isinstance(v, (tuple, list)) else v
