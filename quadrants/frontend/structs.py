"""Struct values in kernels: `S(a=1, b=v)`, `qd.Struct(a=...)`, struct variables, struct field elements.

A struct lives in the frontend as a `values.Struct` whose `cls` is its `StructType` and whose members are
bindings, as a name's binding is (`scope.py`):
- a value (`S(...)`, a func's result): IR values, Matrices and nested Structs;
- a variable (`p = S(...)`): one `Var` / `MatVar` per member, so `p.a += 1` updates it; assigning the struct to
  a new name copies it (value semantics, as in Quadrants);
- a field element (`f[i, j]`): one `Alias` per member, of that member field's element, so `f[i].pos = v` and
  `f[i].vel[0] += 1` write the field and `f[i] = S(...)` writes every member;
- a kernel argument: `Fixed` members.
Nothing of a struct reaches the IR as such: every member is its own scalars, so structs cost nothing at run
time. Assignment targets through structs are resolved in `lvalues.py` (`member_ref`, `StructRef`);
`result_scalars` flattens declared results (structs by their leaf members) for kernels and real functions.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any

import numpy as np

from quadrants.errors import QuadrantsCompilationError, QuadrantsTypeError
from quadrants.frontend.builder import FrontendBuilder
from quadrants.frontend.ndarrays import element_indices, element_ptrs_at, ndarray_handle
from quadrants.frontend.refs import MatrixRef, ScalarRef, read
from quadrants.frontend.scope import Alias, MatVar, Var
from quadrants.frontend.values import Matrix, Struct, is_runtime, matrix_dtype
from quadrants.frontend.vectors import as_matrix
from quadrants.frontend.vectors import construct as construct_matrix
from quadrants.ir import nodes as ir
from quadrants.types.compound import MatrixType
from quadrants.types.dtypes import PrimitiveType
from quadrants.types.struct import StructType


def is_struct_field(v: Any) -> bool:
    return getattr(v, "__qd_struct_field__", None) is not None


def is_struct_value(v: Any) -> bool:
    """A struct of a `qd.types.struct` type (not a dataclass / data_oriented parameter)."""
    return isinstance(v, Struct) and isinstance(v.cls, StructType)


def resolved(fb: FrontendBuilder, t: StructType) -> StructType:
    return t.resolve(fb.options.default_ip, fb.options.default_fp)


# ---- building values ----------------------------------------------------------------------------------


def construct(fb: FrontendBuilder, t: StructType, args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> Struct:
    """`S(a, b)` / `S(a=..., b=...)` in a kernel: each member cast to its type; members not given are zero."""
    try:
        given = t.given(args, kwargs)
    except TypeError as e:
        raise fb.error(node, str(e), QuadrantsTypeError) from None
    return _build(fb, resolved(fb, t), given, node)


def _build(fb: FrontendBuilder, t: StructType, given: dict[str, Any], node: ast.AST) -> Struct:
    members: dict[str, Any] = {}
    for k, mt in t.members.items():
        members[k] = member_value(fb, mt, given.get(k), node, k)
    return Struct(cls=t, members=members)


def member_value(fb: FrontendBuilder, mt: Any, v: Any, node: ast.AST, name: str) -> Any:
    """`v` as a member of type `mt` (resolved): cast, converted, or zero when None."""
    loc = fb.loc(node)
    if isinstance(mt, StructType):
        if v is None:
            return _build(fb, mt, {}, node)
        if isinstance(v, dict):
            return _build(fb, mt, v, node)
        if not isinstance(v, Struct) and as_matrix(fb, v, node) is None:  # `S(1)`: its first member from 1, as
            return _build(fb, mt, mt.given([v], {}), node)  # Quadrants calls a struct member's type with it
        return coerce(fb, v, mt, node, f"member {name!r}")
    if isinstance(mt, MatrixType):
        return construct_matrix(fb, mt, [0 if v is None else v], node)
    if as_matrix(fb, v, node) is not None or isinstance(v, Struct):
        raise fb.error(node, f"member {name!r} is a {mt} scalar, got {_what(v)}", QuadrantsTypeError)
    return fb.ops.cast(0 if v is None else v, mt, loc)


def coerce(fb: FrontendBuilder, v: Any, t: StructType, node: ast.AST, what: str) -> Struct:
    """A struct value `v` of type `t` (its members read): returns, by-value parameters, struct members.
    Another struct type is an error, as in Quadrants."""
    if not is_struct_value(v) or resolved(fb, v.cls).members != t.members:
        raise fb.error(node, f"{what}: expected a {t!r} value, got {_what(v)}", QuadrantsCompilationError)
    return snapshot(fb, v)


def anonymous(fb: FrontendBuilder, args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> Struct:
    """`qd.Struct(a=x, b=v)` in a kernel: a struct whose member types are those of the values given."""
    given: dict[str, Any] = {}
    for a in args:
        if not isinstance(a, dict):
            raise fb.error(node, "qd.Struct takes keyword arguments (or a dict) in kernels")
        given.update(a)
    given.update(kwargs)
    types = {k: _type_of(fb, v, node) for k, v in given.items()}
    return _build(fb, StructType(types), given, node)


def _type_of(fb: FrontendBuilder, v: Any, node: ast.AST) -> Any:
    if is_struct_value(v):
        return resolved(fb, v.cls)
    if isinstance(v, dict):
        return StructType({k: _type_of(fb, x, node) for k, x in v.items()})
    m = as_matrix(fb, v, node)
    if m is not None:
        return MatrixType(m.shape, matrix_dtype(m))
    if isinstance(v, ir.Value) and isinstance(v.type, PrimitiveType):
        return v.type
    if isinstance(v, bool) or isinstance(v, int):
        return fb.options.default_ip
    if isinstance(v, float):
        return fb.options.default_fp
    raise fb.error(node, f"qd.Struct members must be scalars, vectors/matrices or structs, got {_what(v)}")


def _what(v: Any) -> str:
    if is_struct_value(v):
        return f"a {v.cls!r} value"
    if isinstance(v, Matrix):
        return f"a vector/matrix of shape {v.shape}"
    return f"a {type(v).__name__}"


# ---- reading, copying ---------------------------------------------------------------------------------


def snapshot(fb: FrontendBuilder, s: Struct) -> Struct:
    """The struct's current member values (loads of variables and field elements)."""
    s.note_read()
    members = {}
    for k, b in s.members.items():
        members[k] = snapshot(fb, b) if isinstance(b, Struct) else read(fb, b)
    return Struct(cls=s.cls, members=members)


def new_variable(fb: FrontendBuilder, s: Struct, name: str, node: ast.AST) -> Struct:
    """A struct variable holding a copy of `s`: one local variable per member, typed by the struct type."""
    t = resolved(fb, s.cls)
    value = snapshot(fb, s)
    loc = fb.loc(node)
    members: dict[str, Any] = {}
    for k, mt in t.members.items():
        v = value.members[k]
        if isinstance(mt, StructType):
            members[k] = new_variable(fb, v, f"{name}.{k}", node)
        elif isinstance(mt, MatrixType):
            m = as_matrix(fb, v, node)
            assert m is not None
            members[k] = MatVar(mt.shape, [fb.new_var(f"{name}.{k}[{i}]", fb.ops.cast(e, mt.dtype, loc), mt.dtype)
                                           for i, e in enumerate(m.elements)])  # fmt: skip
        else:
            members[k] = fb.new_var(f"{name}.{k}", fb.ops.cast(v, mt, loc), mt)
    return Struct(cls=t, members=members)


def is_variable(s: Struct) -> bool:
    """Whether the struct's members can be assigned (a local struct variable or a field element)."""
    return is_struct_value(s) and all(
        is_variable(b) if isinstance(b, Struct) else isinstance(b, (Var, MatVar, Alias)) for b in s.members.values()
    )


# ---- struct fields ------------------------------------------------------------------------------------


def field_element(fb: FrontendBuilder, sf: Any, node: ast.Subscript) -> Struct:
    """`f[i, j]` of a struct field: a struct whose members alias the member fields' elements (the index is
    evaluated once)."""
    indices = element_indices(fb, node)

    def element(f: Any) -> Struct:
        members: dict[str, Any] = {}
        for k, mf in f.field_dict.items():
            members[k] = element(mf) if is_struct_field(mf) else Alias(element_ref(fb, mf, indices, node), node)
        return Struct(cls=f.struct_type, members=members)

    return element(sf)


def element_ref(fb: FrontendBuilder, field: Any, indices: list[Any], node: ast.Subscript) -> ScalarRef | MatrixRef:
    """The memory of element `field[indices]` (evaluated indices) of a scalar or vector/matrix field."""
    handle = ndarray_handle(fb, field)
    refs = [ScalarRef(p, p.type.pointee, shared=True)  # type: ignore[union-attr]
            for p in element_ptrs_at(fb, handle, indices, node)]  # fmt: skip
    elem_shape = handle.type.elem_shape  # type: ignore[union-attr]
    return refs[0] if not elem_shape else MatrixRef(elem_shape, refs)


def leaf_values(fb: FrontendBuilder, s: Struct) -> list[Any]:
    """The struct's leaf member values (scalars and Matrices), in `StructType.leaves()` order."""
    out: list[Any] = []
    for b in snapshot(fb, s).members.values():
        out.extend(leaf_values(fb, b) if isinstance(b, Struct) else [b])
    return out


def result_scalars(fb: FrontendBuilder, values: list[Any], types: Any, node: ast.AST, who: str) -> list[ir.Value]:
    """The scalars a `return` of `values` carries, for declared result `types` (dtypes, vector/matrix types and
    struct types, resolved): each cast to its type, a struct as its leaf members in order. `who` ("the kernel",
    "the real function") words the errors."""
    loc = fb.loc(node)
    leaves: list[tuple[Any, Any]] = []
    for v, t in zip(values, types):
        if isinstance(t, StructType):
            leaves.extend(zip(leaf_values(fb, coerce(fb, v, t, node, f"{who}'s return value")),
                              (leaf for _, leaf in t.leaves())))  # fmt: skip
        else:
            leaves.append((v, t))
    out: list[ir.Value] = []
    for v, t in leaves:
        m = as_matrix(fb, v, node)
        if isinstance(t, MatrixType):
            if m is None or m.shape != t.shape:
                got = "a scalar" if m is None else f"shape {m.shape}"
                raise fb.error(node, f"{who} is annotated to return {t!r} but returns {got}", QuadrantsTypeError)
            out.extend(fb.ops.cast(e, t.dtype, loc) for e in m.elements)
        else:
            if m is not None:
                raise fb.error(node, f"{who} is annotated to return {t} but returns a vector/matrix", QuadrantsTypeError)
            out.append(fb.ops.cast(v, t, loc))
    return out


# ---- unpacked vector members (`qd.types.vector(n, dt, unpacked=True)` in a @qd.dataclass) -------------------


@dataclass(frozen=True)
class UnpackedGroup:
    """`obj.r` for an unpacked vector member `r`: its components are the scalar members `_r0 ..`, so it is only
    indexed (`obj.r[i]`, `i` known at compile time), never a value of its own."""

    struct: Struct
    name: str
    count: int


def unpacked_group(s: Struct, attr: str) -> UnpackedGroup | None:
    groups = getattr(s.cls, "_unpacked_groups", None) if isinstance(s.cls, StructType) else None
    if not groups or attr not in groups:
        return None
    return UnpackedGroup(s, attr, groups[attr][0])


def unpacked_member(fb: FrontendBuilder, g: UnpackedGroup, index: Any, node: ast.AST) -> str:
    """The scalar member `obj.r[index]` names (Quadrants' errors for a runtime or out-of-range index)."""
    if is_runtime(index) or not isinstance(index, (int, np.integer)) or isinstance(index, bool):
        raise fb.error(node, f"an unpacked vector member ({g.name!r}) is indexed by a python-int or a qd.static loop "
                             "variable, not a runtime value")  # fmt: skip
    if not 0 <= int(index) < g.count:
        raise fb.error(node, f"index {int(index)} is out of bounds for the unpacked vector member {g.name!r} "
                             f"({g.count} components)")  # fmt: skip
    return f"_{g.name}{int(index)}"
