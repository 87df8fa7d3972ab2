"""Assignment targets and name bindings: where `x = ...`, `a[i] += ...`, `v.y = ...`, `m[i, j] -= ...`,
`p.pos = ...`, `f[i] = S(...)` and `qd.atomic_add(a[i], ...)` write.

A target resolves to a reference (`refs.py`: one memory location, a vector/matrix of them, one chosen at run
time), or to a `StructRef` (a struct's members' references). One resolution serves assignment, augmented
assignment and atomics. Assigning a runtime value to a new name defines a local variable (a struct: one per
member, `structs.py`); anything else binds the name to the value.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any

import numpy as np

from quadrants.errors import QuadrantsCompilationError, QuadrantsSyntaxError, QuadrantsTypeError
from quadrants.frontend import mesh, seqvars, sparse_builders, tiles, views
from quadrants.frontend.builder import FrontendBuilder
from quadrants.frontend.matrix_ops import check_index, index_items, is_swizzle, slice_positions, swizzle
from quadrants.frontend.ndarrays import element_ptrs, is_ndarray, ndarray_handle, reject_captured_array
from quadrants.frontend.operators import binary
from quadrants.frontend.ops import is_static_number
from quadrants.frontend.refs import DynamicRef, LineRef, MatrixRef, Ref, ScalarRef, load_ref, var_ref
from quadrants.frontend.scope import MISSING, Alias, Fixed, MatVar, Var, VarSeq
from quadrants.frontend.structs import (
    UnpackedGroup,
    field_element,
    is_struct_field,
    is_struct_value,
    is_variable,
    new_variable,
    snapshot,
    unpacked_group,
    unpacked_member,
)
from quadrants.frontend.values import Matrix, Struct, is_runtime
from quadrants.frontend.vectors import as_matrix, flatten
from quadrants.ir import nodes as ir
from quadrants.types.dtypes import PrimitiveType
from quadrants.types.promotion import promote

ATOMIC_AUG = {"add", "sub", "and", "or", "xor"}


@dataclass
class StructRef:
    """A struct as an assignment target: a struct variable or a field element (`struct` is its binding)."""

    struct: Struct



@dataclass
class TileRef:
    """`t[:]` of a register tile (`t` the tile's expression: a load changes it) or an array slice `arr[r0:r1,
    c0:c1]`: targets of tile loads and stores (frontend/tiles.py)."""

    tile: ast.expr | None = None
    slice: Any = None


Target = Ref | StructRef | sparse_builders.TripletRef | TileRef | VarSeq  # what an assignment target resolves to


# ---- references ---------------------------------------------------------------------------------------


def binding_ref(fb: FrontendBuilder, binding: Any) -> Ref | None:
    """The memory a name's (or a struct member's) binding is, when it is one: a local variable, a vector/matrix
    of them, or an element alias; None for anything else."""
    if isinstance(binding, Var):
        return var_ref(fb, binding)
    if isinstance(binding, MatVar):
        return MatrixRef(binding.shape, [var_ref(fb, v) for v in binding.vars])
    if isinstance(binding, Alias):
        return binding.ref  # type: ignore[no-any-return]
    return None


def resolve_ref(fb: FrontendBuilder, node: ast.expr) -> Target | None:
    """The reference `node` denotes, or None for a plain name that is not a variable yet."""
    if isinstance(node, ast.Name):
        _, binding = fb.frame.scope.find(node.id)
        if isinstance(binding, Fixed):
            raise fb.error(node, _fixed_words(binding.what, node.id))
        return binding_ref(fb, binding)
    if isinstance(node, ast.Subscript):
        inner = _sub_ref(fb, node.value)
        if inner is None:
            base = fb.expr(node.value)
            if is_struct_field(base):
                return StructRef(field_element(fb, base, node))
            if isinstance(base, views.View):
                return views.element_ref(fb, base, node)
            if isinstance(base, sparse_builders.Builder):
                return sparse_builders.entry_ref(fb, base, node)
            reject_captured_array(fb, base, node)
            if is_ndarray(base) and tiles.has_slices(node) and ndarray_handle(fb, base).type.ndim >= 2:  # type: ignore[union-attr]
                return TileRef(slice=tiles.array_slice(fb, base, node))
            if not is_ndarray(base):
                raise fb.error(node, "only ndarray, field, vector and matrix elements can be assigned through []")
            handle = ndarray_handle(fb, base)
            ptrs = element_ptrs(fb, handle, node)
            elem_shape = handle.type.elem_shape  # type: ignore[union-attr]
            refs = [ScalarRef(p, p.type.pointee, shared=True) for p in ptrs]  # type: ignore[union-attr]
            return refs[0] if not elem_shape else MatrixRef(elem_shape, refs)
        if isinstance(inner, VarSeq):  # `verts[1] = ...`: the item's variable
            return _item_ref(fb, seqvars.item(fb, inner, node.slice, node))
        if isinstance(inner, StructRef) and tiles.is_tile(inner.struct) and _whole(node.slice):
            return TileRef(tile=node.value)
        if isinstance(inner, UnpackedGroup):  # `obj.r[i] = v`: the scalar member `_r{i}`
            return member_ref(fb, inner.struct, unpacked_member(fb, inner, fb.expr(node.slice), node), node)
        if not isinstance(inner, MatrixRef):
            raise fb.error(node, "a scalar cannot be indexed")
        return index_ref(fb, inner, fb.expr(node.slice), node)
    if isinstance(node, ast.Attribute):
        inner = _sub_ref(fb, node.value)
        if isinstance(inner, StructRef):
            return member_ref(fb, inner.struct, node.attr, node)
        if isinstance(inner, MatrixRef) and len(inner.shape) == 1 and is_swizzle(node.attr):
            idx = swizzle(fb, node.attr, inner.shape[0], node)
            return inner.refs[idx[0]] if len(idx) == 1 else MatrixRef((len(idx),), [inner.refs[i] for i in idx])
        if inner is None:
            base = fb.expr(node.value)
            if isinstance(base, mesh.Element):  # `v.x = ...`, `v.cells[j].x += ...`
                return mesh.attribute_ref(fb, base, node.attr, node)
        raise fb.error(node, f"cannot assign to attribute {node.attr!r} in a kernel")
    raise fb.error(node, f"cannot assign to {type(node).__name__} in a kernel")


def _item_ref(fb: FrontendBuilder, binding: Any) -> Target:
    return binding if isinstance(binding, VarSeq) else binding_ref(fb, binding)  # type: ignore[return-value]


def _whole(index: ast.expr) -> bool:
    """`[:]`"""
    return isinstance(index, ast.Slice) and index.lower is None and index.upper is None and index.step is None


def _sub_ref(fb: FrontendBuilder, node: ast.expr) -> Target | None:
    """The reference of the base of a subscript or attribute target, or None when the base is a value to
    evaluate (an ndarray, a field, a dataclass member)."""
    if isinstance(node, ast.Name):
        _, binding = fb.frame.scope.find(node.id)
        if isinstance(binding, VarSeq):
            return binding
        return StructRef(binding) if is_struct_value(binding) else binding_ref(fb, binding)
    if isinstance(node, ast.Subscript):
        if _compile_time_container(fb, node.value):
            return None  # `fields[0][i] = v`: an item of a Python list / tuple / dict is a value to evaluate
        return resolve_ref(fb, node)
    if isinstance(node, ast.Attribute):
        inner = _sub_ref(fb, node.value)
        return resolve_ref(fb, node) if isinstance(inner, (MatrixRef, StructRef)) else None
    return None


def _compile_time_container(fb: FrontendBuilder, node: ast.expr) -> bool:
    """Whether `node` (a name or attribute) is a Python list, tuple or dict the kernel captured, or a mesh
    relation (whose items are elements, not memory)."""
    if not isinstance(node, (ast.Name, ast.Attribute)) or _sub_ref(fb, node) is not None:
        return False
    return isinstance(fb.expr(node), (list, tuple, dict, mesh.Relation))


def member_ref(fb: FrontendBuilder, s: Struct, attr: str, node: ast.AST) -> Ref | StructRef:
    """Member `attr` of a struct as an assignment target (an unpacked vector member: the group, to index)."""
    group = unpacked_group(s, attr)
    if group is not None and attr not in s.members:
        return group  # type: ignore[return-value]
    if attr not in s.members:
        raise fb.error(node, f"{s.cls!r} has no member {attr!r}")
    s.note_read(attr)
    b = s.members[attr]
    ref = binding_ref(fb, b)
    if ref is not None:
        return ref
    if isinstance(b, Struct) and is_variable(b):
        return StructRef(b)
    what = b.what if isinstance(b, Fixed) else "a struct value (not a variable)"
    raise fb.error(node, f"cannot assign to member {attr!r} of {what}")


def index_ref(fb: FrontendBuilder, ref: MatrixRef, index: Any, node: ast.AST) -> Ref:
    idx = index_items(index)
    if any(isinstance(i, slice) for i in idx):  # `T[:3, 3] = v`: the selected elements, as one target
        if len(ref.shape) == 2 and len(idx) == 2 and any(is_runtime(i) for i in idx):
            return _runtime_line_ref(fb, ref, idx, node)
        flat, shape = slice_positions(fb, ref.shape, idx, node)
        return MatrixRef(shape, [ref.refs[k] for k in flat])
    if not any(is_runtime(i) for i in idx):
        if len(ref.shape) == 1 or len(idx) == 2:
            flat = idx[0] if len(ref.shape) == 1 else idx[0] * ref.m + idx[1]
            return ref.refs[flat]
        return MatrixRef((ref.m,), ref.refs[idx[0] * ref.m : (idx[0] + 1) * ref.m])
    if len(ref.shape) == 2 and len(idx) == 1:
        raise fb.error(node, "a matrix row cannot be assigned with a runtime index; index both dimensions")
    flat = idx[0] if len(ref.shape) == 1 else binary(fb, "add", binary(fb, "mul", idx[0], ref.m, node), idx[1], node)
    check_index(fb, ref.shape, flat, node)
    return DynamicRef(ref, flat)


def _runtime_line_ref(fb: FrontendBuilder, ref: MatrixRef, idx: list[Any], node: ast.AST) -> LineRef:
    """`M[:, n] = v` / `M[n, 1:] = v` with `n` known at run time (Genesis' SAP coupler): per sliced position,
    the element the runtime index picks on its line, as the read `matrix_ops._runtime_line` does."""
    axis = 0 if is_runtime(idx[0]) else 1  # the axis the runtime index picks on
    if not isinstance(idx[1 - axis], slice):
        raise fb.error(node, "an index next to a slice must be a slice or an index")
    positions, _ = slice_positions(fb, (ref.shape[1 - axis],), [idx[1 - axis]], node)
    m = ref.shape[1]
    out: list[DynamicRef] = []
    for p in positions:
        line = [ref.refs[k * m + p] if axis == 0 else ref.refs[p * m + k] for k in range(ref.shape[axis])]
        check_index(fb, (len(line),), idx[axis], node)
        out.append(DynamicRef(MatrixRef((len(line),), line), idx[axis]))
    return LineRef((len(out),), out)


# ---- reading and writing references -------------------------------------------------------------------


def store_ref(fb: FrontendBuilder, ref: Target, value: Any, node: ast.AST) -> None:
    loc = fb.loc(node)
    if isinstance(ref, sparse_builders.TripletRef):
        sparse_builders.refuse_store(fb, node)
    if isinstance(ref, StructRef):
        _store_struct(fb, ref.struct, value, node)
        return
    if isinstance(ref, VarSeq):
        _store_seq(fb, ref, value, node)
        return
    if isinstance(ref, TileRef):
        if ref.tile is not None:
            tiles.load(fb, ref.tile, value, node)
        else:
            tiles.store(fb, ref.slice, value, node)
        return
    if isinstance(ref, ScalarRef):
        if as_matrix(fb, value, node) is not None:
            raise QuadrantsTypeError("cannot assign a vector/matrix to a scalar", loc)
        if ref.var is not None:
            fb.assign_var(ref.var, value, node)
        else:
            fb.b.store(ref.ptr, fb.ops.cast(value, ref.dtype, loc))
        return
    if isinstance(ref, MatrixRef):
        for r, e in zip(ref.refs, elements_for(fb, ref, value, node)):
            store_ref(fb, r, e, node)
        return
    if isinstance(ref, LineRef):
        typed = MatrixRef(ref.shape, [d.base.refs[0] for d in ref.items])  # the target's shape and dtypes
        for d, e in zip(ref.items, elements_for(fb, typed, value, node)):
            store_ref(fb, d, e, node)
        return
    shared = any(r.shared for r in ref.base.refs)
    for k, r in enumerate(ref.base.refs):
        hit = fb.ops.binary("eq", ref.index, k, loc)
        if shared:  # other threads write the other elements: store only the chosen one
            branch = fb.b.emit(ir.If(cond=hit))
            with fb.b.into(branch.then):
                store_ref(fb, r, value, node)
        else:  # a thread's own vector: selects keep it in registers
            store_ref(fb, r, fb.ops.select(hit, value, fb.b.load(r.ptr), loc), node)


def _store_struct(fb: FrontendBuilder, target: Struct, value: Any, node: ast.AST) -> None:
    """`f[i] = S(...)`, `p = q`: every member (the value is read first: `p = p` and swaps stay right)."""
    if not is_struct_value(value) or set(value.members) != set(target.members):
        raise fb.error(node, f"cannot assign {_struct_what(value)} to a {target.cls!r}", QuadrantsTypeError)
    v = snapshot(fb, value)
    for k in target.members:
        store_ref(fb, member_ref(fb, target, k, node), v.members[k], node)


def _store_seq(fb: FrontendBuilder, seq: VarSeq, value: Any, node: ast.AST) -> None:
    """A container of variables given a new container (of values already read: `lst = [lst[1], lst[0]]` swaps),
    item by item."""
    if not seqvars.fits(seq, value):
        n = len(value) if isinstance(value, seqvars.CONTAINERS) else None
        got = f"a {type(value).__name__} of {n} items" if n is not None else f"a {type(value).__name__}"
        raise fb.error(node, f"cannot store {got} into a {seq.kind.__name__} of {len(seq.items)} variables: inside "
                             "a runtime if or loop, a name bound to a list outside it keeps its length and the kind "
                             "of each item", QuadrantsTypeError)  # fmt: skip
    for k, binding in seq.items.items():
        store_ref(fb, _item_ref(fb, binding), value[k], node)


def _struct_what(v: Any) -> str:
    return f"a {v.cls!r} value" if is_struct_value(v) else f"a {type(v).__name__}"


def elements_for(fb: FrontendBuilder, ref: MatrixRef, value: Any, node: ast.AST) -> list[Any]:
    """What each element of a vector/matrix target receives, as in Quadrants: the elements of a vector/matrix or
    of a (nested) Python list of the same size, or one scalar broadcast to every element."""
    m = as_matrix(fb, value, node)
    if m is not None:
        elements = m.elements
    elif isinstance(value, (list, tuple)):
        elements = flatten(fb, value, node)
    else:
        return [value] * len(ref.refs)
    if len(elements) != len(ref.refs):
        shape = m.shape if m is not None else _list_shape(value)
        got, want = _tensor_text(fb, shape, elements), _tensor_text(fb, ref.shape, [r.dtype for r in ref.refs])
        raise QuadrantsTypeError(f"cannot assign '{got}' to '{want}'", fb.loc(node))  # Quadrants' words
    return elements


def _list_shape(value: Any) -> tuple[int, ...]:
    if isinstance(value, (list, tuple)) and value and isinstance(value[0], (list, tuple)):
        return (len(value), len(value[0]))
    return (len(value),)


def _tensor_text(fb: FrontendBuilder, shape: tuple[int, ...], elements: list[Any]) -> str:
    """`[Tensor (2, 3) i32]`: a vector/matrix type as Quadrants' messages write it (the elements' common type;
    Python numbers count as the default int and float types)."""
    dtype: PrimitiveType | None = None
    for e in elements:
        t = e if isinstance(e, PrimitiveType) else getattr(e, "type", None)
        if not isinstance(t, PrimitiveType):
            t = fb.ops.default_fp if isinstance(e, float) else fb.ops.default_ip
        dtype = t if dtype is None else promote(dtype, t)
    return f"[Tensor ({', '.join(map(str, shape))}) {dtype}]"


def augassign_ref(fb: FrontendBuilder, ref: Target, op: str, value: Any, node: ast.AST) -> None:
    if isinstance(ref, sparse_builders.TripletRef):
        sparse_builders.add(fb, ref, op, value, node)
        return
    if isinstance(ref, (StructRef, TileRef)):
        raise fb.error(node, "augmented assignment to a whole struct is not supported; update its members")
    if isinstance(ref, VarSeq):
        raise fb.error(node, f"augmented assignment to a {ref.kind.__name__} item that is itself a "
                             f"{ref.kind.__name__} is not supported; update its items")  # fmt: skip
    if isinstance(ref, ScalarRef):
        if ref.shared and op in ATOMIC_AUG:
            atomic_ref(fb, ref, op, value, node)
        else:
            store_ref(fb, ref, binary(fb, op, fb.b.load(ref.ptr), value, node), node)
        return
    if isinstance(ref, MatrixRef):
        for r, e in zip(ref.refs, elements_for(fb, ref, value, node)):
            augassign_ref(fb, r, op, e, node)
        return
    if isinstance(ref, LineRef):
        typed = MatrixRef(ref.shape, [d.base.refs[0] for d in ref.items])
        for d, e in zip(ref.items, elements_for(fb, typed, value, node)):
            augassign_ref(fb, d, op, e, node)
        return
    store_ref(fb, ref, binary(fb, op, load_ref(fb, ref, node), value, node), node)


def atomic_ref(fb: FrontendBuilder, ref: Target, op: str, value: Any, node: ast.AST) -> Any:
    """`qd.atomic_<op>(target, value)`: the old value(s)."""
    loc = fb.loc(node)
    if isinstance(ref, sparse_builders.TripletRef):
        raise QuadrantsSyntaxError("a SparseMatrixBuilder entry is updated with += or -=, not atomics", loc)
    if isinstance(ref, (StructRef, VarSeq)):
        raise QuadrantsSyntaxError("atomics operate on scalars, vectors and matrices, not structs or lists", loc)
    if isinstance(ref, ScalarRef):
        if op in ("and", "or", "xor") and ref.dtype.is_float:
            raise QuadrantsTypeError(f"atomic_{op} needs an integer target, not {ref.dtype}", loc)
        v = fb.ops.cast(value, ref.dtype, loc)
        return fb.b.emit(ir.AtomicRMW(op=op, ptr=ref.ptr, value=v, type=ref.dtype))
    if isinstance(ref, MatrixRef):
        m = as_matrix(fb, value, node)
        return Matrix(
            ref.shape,
            [atomic_ref(fb, r, op, m.elements[k] if m is not None else value, node) for k, r in enumerate(ref.refs)],
        )
    raise QuadrantsSyntaxError("atomics need a compile-time index into vectors and matrices", loc)


def lvalue(fb: FrontendBuilder, node: ast.expr, what: str) -> Target:
    ref = resolve_ref(fb, node) if isinstance(node, (ast.Name, ast.Subscript, ast.Attribute)) else None
    if ref is None:
        raise fb.error(node, f"cannot use a non-writable target as the first operand of '{what}'")
    return ref


def _assign_target(fb: FrontendBuilder, target: ast.expr, value: Any, node: ast.AST) -> None:
    """`target = value` for targets other than plain names and tuples (`assign` handles those)."""
    ref = resolve_ref(fb, target)
    if ref is None:
        raise fb.error(target, "cannot assign here")
    store_ref(fb, ref, value, node)


# ---- names --------------------------------------------------------------------------------------------


def assign(fb: FrontendBuilder, target: ast.expr, value: Any, node: ast.AST, static: bool = False) -> None:
    """`target = value` for any target: a name, a tuple/list of targets (unpacking), an element or component."""
    if isinstance(target, ast.Name):
        assign_name(fb, target.id, value, target, static)
    elif isinstance(target, (ast.Tuple, ast.List)):
        items = unpack(fb, value, len(target.elts), target)
        for t, v in zip(target.elts, items):
            assign(fb, t, v, node, static)
    elif static:
        raise fb.error(target, "Static assign cannot be used on elements in arrays", QuadrantsCompilationError)
    else:
        _assign_target(fb, target, value, target)


def _fixed_words(what: str, name: str) -> str:
    """Why a kernel argument or loop index cannot be assigned (Quadrants' words for an argument first)."""
    if what == "kernel argument":
        return f'Kernel argument "{name}" is immutable in the kernel (cannot assign to kernel argument {name!r})'
    return f"cannot assign to {what} {name!r}"


def assign_name(fb: FrontendBuilder, name: str, value: Any, node: ast.AST, static: bool = False) -> None:
    scope, binding = fb.frame.scope.find(name)
    if scope is not None and scope.parent is None and name in fb.frame.template_args:
        raise fb.error(node, _fixed_words("kernel argument", name))
    if isinstance(binding, Fixed):
        if binding.what != "loop index" or scope is not fb.frame.scope:
            raise fb.error(node, _fixed_words(binding.what, name))
        # `for i in qd.ndrange(n): i = qd.cast(i, qd.i32)`: rebound in the loop's own body, the name is a new
        # variable from here to the end of the iteration (Python's meaning; Quadrants' ndrange indices are
        # variables). Deeper down (under an `if`), where the new binding would not outlive its block, it stays
        # an error.
        binding = MISSING
    if isinstance(binding, (Var, MatVar)):
        if static:  # Quadrants' words: a variable cannot become a compile-time name
            raise fb.error(node, f"Recreating variables is not allowed: {name!r} is a variable, not a qd.static value",
                           QuadrantsCompilationError)  # fmt: skip
        store_ref(fb, binding_ref(fb, binding), value, node)  # type: ignore[arg-type]
        return
    if isinstance(binding, Alias):
        if static:
            raise fb.error(node, f"cannot bind a compile-time value to {name!r}, a reference parameter")
        store_ref(fb, binding.ref, value, node)
        return
    if is_struct_value(binding) and is_variable(binding) and not static:
        _store_struct(fb, binding, value, node)
        return
    if is_struct_value(value) and not static:
        (scope or fb.frame.scope).names[name] = new_variable(fb, value, name, node)
        return
    if isinstance(value, np.ndarray) and not static:  # Quadrants' rule: a 0-d array is its value
        if value.ndim != 0:
            raise fb.error(node, "Only 0-dimensional numpy array can be used to initialize a scalar expression "
                           f"(assigning a numpy array of shape {value.shape} to {name!r}; qd.static(...) binds it "
                           "as a compile-time object)", QuadrantsTypeError)  # fmt: skip
        value = value[()]
    depth = fb.runtime_depth - fb.folded_ifs
    deeper = scope is not None and depth > scope.depths.get(name, depth)  # under a runtime if/loop it is outside
    if isinstance(binding, VarSeq) and deeper and not static:  # `lst = [lst[1], lst[0]]` in a loop: item by item
        store_ref(fb, binding, value, node)
        return
    if deeper and not static and binding is not MISSING and value is not binding:
        raise fb.error(node, f"{name!r} is bound to {_bound_what(binding)} outside this runtime if/loop, which cannot "
                             "follow a condition or an iteration: give it a value from the start (a number, a vector, "
                             "a list of them), or choose at compile time with qd.static(...)")  # fmt: skip
    home = scope or fb.frame.scope
    if not static and seqvars.wanted(fb, name, value):  # `verts = [...]`, later `verts[1] = ...`
        home.names[name], home.depths[name] = seqvars.make(fb, name, value, node), depth
        return
    if static or not _becomes_variable(value):
        home.names[name], home.depths[name] = value, depth
        return
    m = as_matrix(fb, value, node)
    if m is not None:
        fb.define_matrix_var(name, m)
    else:
        fb.define_var(name, value, node)


def _bound_what(binding: Any) -> str:
    if isinstance(binding, VarSeq):
        return f"a {binding.kind.__name__} of {len(binding.items)} variables"
    if isinstance(binding, (list, tuple, dict)):
        return f"a Python {type(binding).__name__}"
    return "None" if binding is None else f"a compile-time {type(binding).__name__}"


def unpack(fb: FrontendBuilder, value: Any, n: int, node: ast.AST) -> list[Any]:
    m = as_matrix(fb, value, node) if not isinstance(value, (tuple, list)) else None
    if m is not None:
        value = m.unpack_values()
    if not isinstance(value, (tuple, list)):
        raise fb.error(node, f"cannot unpack {type(value).__name__} into {n} names")
    if len(value) != n:
        raise fb.error(node, f"cannot unpack {len(value)} values into {n} names")
    return list(value)


def _becomes_variable(value: Any) -> bool:
    """Assigning a runtime scalar or vector, or a Python number, to a new name creates a local variable;
    anything else (ndarrays, tuples, Python objects) binds the name to the object itself."""
    if isinstance(value, ir.Value):
        return isinstance(value.type, PrimitiveType)
    if isinstance(value, Matrix):
        return True
    return is_static_number(value)
