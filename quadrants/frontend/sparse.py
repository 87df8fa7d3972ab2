"""SNode operations in kernels: struct-fors over SNode trees with sparse levels, `qd.activate`, `qd.deactivate`,
`qd.is_active`, `qd.append`, `qd.length`, `qd.rescale_index`.

A struct-for over a field or node `T` of a tree with sparse levels (or over any node) visits the active cells of
`T` only, level by level: a parallel loop over the cells of the outermost levels (as many as make
`PARALLEL_CELLS` cells, each checked with `is_active` when one of them is sparse), and under each active one a
serial loop per deeper level down to `T` over that level's cells, descending only into active ones (pointer and
bitmasked cells are checked; a dynamic node's loop runs to its length). The work is the prefix's cells plus the
cells of the active cells' children, not the index space. The loop index is the cell's index at `T`'s
resolution (one per axis used down to `T`; a field's plus its `offset=`), the index space SNode operations
take, as in Quadrants. A struct-for over a field of a dense tree stays the range-for of frontend/loops.py. The operations become `ir.SNodeOp`s on the field's handle (codegen/sparse.py).
"""

from __future__ import annotations

import ast
import contextlib
from math import prod
from typing import Any

from quadrants.frontend.builder import FrontendBuilder
from quadrants.frontend.ndarrays import ndarray_handle
from quadrants.frontend.refs import read
from quadrants.frontend.scope import bind_loop_index
from quadrants.frontend.values import Matrix, Struct, is_runtime
from quadrants.ir import nodes as ir
from quadrants.types.dtypes import i32, i64

SPARSE = ("pointer", "bitmasked", "dynamic")


def _is_snode(obj: Any) -> bool:
    return type(obj).__name__ in ("SNode", "_Root") and hasattr(obj, "kind")


def target(obj: Any) -> tuple[Any, Any] | None:
    """(node, a field placed under it) for an SNode or a field of a tree; None for anything else."""
    node = obj
    if not _is_snode(obj):
        if getattr(obj, "_members", None) is not None:  # a struct field: its members share their places
            obj = next(iter(obj._leaf_fields()))
        snode = getattr(obj, "_place", None)
        if snode is None:
            return None
        node = snode._parent
    if type(node).__name__ == "_Root":
        node = node._node
    place = node
    while place.kind != "place":
        if not place.children:
            raise NotImplementedError("an SNode with no field placed under it cannot be used in a kernel")
        place = place.children[0]
    return node, place.field


def _path(node: Any) -> list[Any]:
    out = []
    while node is not None and node.kind != "root":
        out.append(node)
        node = node._parent
    return out[::-1]


def sparse_loop_target(obj: Any) -> bool:
    """Is `for I in obj` a struct-for this module lowers: a node of any tree, or a field (struct fields
    included) of a tree with sparse levels?"""
    if _is_snode(obj):
        return True
    if getattr(obj, "_members", None) is None and getattr(obj, "_place", None) is None:
        return False
    t = target(obj)
    if t is None:
        return False
    t[1]._ready()
    return bool(t[1]._sparse)


PARALLEL_CELLS = 2048  # the parallel loop covers the outermost levels with at least this many cells together


def struct_for(fb: FrontendBuilder, node: ast.For, obj: Any, grouped: bool) -> None:
    tnode, f = target(obj)  # type: ignore[misc]
    handle = ndarray_handle(fb, f)
    loc = fb.loc(node.iter)
    field_axes = sorted(f.snode._axis_extents())
    path = _path(tnode)
    # below[k][a]: the field's cells per cell of level k along axis a (its index's multiplier at that level)
    below_t: dict[int, int] = {a: 1 for a in field_axes}
    n = f.snode._parent
    while n is not tnode and n is not None:
        for a, d in n.extents:
            below_t[a] *= d
        n = n._parent
    below = [below_t] * len(path)
    for k in range(len(path) - 2, -1, -1):
        ext = dict(path[k + 1].extents)
        below[k] = {a: below[k + 1][a] * ext.get(a, 1) for a in field_axes}
    axes = sorted({a for p in path for a, _ in p.extents})
    targets = _names(fb, node.target)
    if grouped and len(targets) != 1:
        raise fb.error(node.target, "qd.grouped(...) binds the whole index to a single name")
    if not grouped and len(targets) != len(axes):
        raise fb.error(node.target, f"this struct-for binds {len(axes)} indices, not {len(targets)}")
    config, fb.loop_config = fb.loop_config or {}, None
    serialize = config.get("serialize") or config.get("parallelize") == 1
    parallel = fb.runtime_depth == 0 and fb.parallel_id == 0 and not serialize
    # the parallel prefix: the outermost levels until they have PARALLEL_CELLS cells (or all of them)
    split, cells = 0, 1
    while split < len(path) and (split == 0 or cells < PARALLEL_CELLS):
        cells *= prod(d for _, d in path[split].extents)
        split += 1
    prefix_ext: dict[int, int] = {}
    for p in path[:split]:
        for a, d in p.extents:
            prefix_ext[a] = prefix_ext.get(a, 1) * d
    prefix_axes = sorted(prefix_ext)
    scope = fb.new_scope()
    fb.runtime_depth += 1
    saved_pid = fb.parallel_id
    opened = 0
    blocks = contextlib.ExitStack()
    try:
        outer, coords = _counted(fb, [prefix_ext[a] for a in prefix_axes], parallel, ",".join(targets), loc)
        if parallel:
            fb.next_parallel_id += 1
            fb.parallel_id = fb.next_parallel_id
        fb.loops.append("parallel" if parallel else "serial")
        opened = 1
        cell = dict(zip(prefix_axes, coords))  # the current cell's index at the resolution of the last level walked
        blocks.enter_context(fb.b.into(outer.body))
        for k in range(split):  # each sparse level of the prefix: its cell must be active
            if path[k].kind in SPARSE:
                up = _coarser(fb, cell, path[k + 1 : split], loc)
                guarded = _guard(fb, handle, k + 1, _first(fb, up, below[k], field_axes, loc), loc)
                blocks.enter_context(fb.b.into(guarded))
        for k in range(split, len(path)):  # one serial loop per deeper level, over the active cells only
            level = path[k]
            end = None
            if level.kind == "dynamic":
                end = _op(fb, "length", handle, k + 1, _first(fb, cell, below[k - 1], field_axes, loc), loc)
            fb.loops.append("serial")
            opened += 1
            inner, local = _counted(fb, [d for _, d in level.extents], False, "", loc, end=end)
            blocks.enter_context(fb.b.into(inner.body))
            cell = dict(cell)
            for (a, d), c in zip(level.extents, local):
                cell[a] = fb.ops.binary("add", _mul(fb, cell[a], d, loc), c, loc) if a in cell else c
            if level.kind in ("pointer", "bitmasked"):
                guarded = _guard(fb, handle, k + 1, _first(fb, cell, below[k], field_axes, loc), loc)
                blocks.enter_context(fb.b.into(guarded))
        offset = (f.offset or ()) if not _is_snode(obj) else ()
        user = [cell[a] for a in axes]
        user = [fb.ops.binary("add", v, o, loc) if o else v for v, o in zip(user, offset or [0] * len(user))]
        user = [_i32(fb, v, loc) for v in user]
        bind_loop_index(scope, targets, user, grouped)
        fb.stmts(node.body)
    finally:
        blocks.close()
        for _ in range(opened):
            fb.loops.pop()
        fb.parallel_id = saved_pid
        fb.runtime_depth -= 1
        fb.pop_scope(scope)


def _coarser(fb: FrontendBuilder, cell: dict[int, Any], finer: list[Any], loc: Any) -> dict[int, Any]:
    """`cell`'s index at the resolution of the level above the levels `finer` (their extents divided out)."""
    div: dict[int, int] = {}
    for p in finer:
        for a, d in p.extents:
            div[a] = div.get(a, 1) * d
    return {a: fb.ops.binary("floordiv", v, div[a], loc) if div.get(a, 1) != 1 else v for a, v in cell.items()}


def _first(fb: FrontendBuilder, cell: dict[int, Any], below: dict[int, int], axes: list[int], loc: Any) -> list[Any]:
    """The field's index of the first element of the cell `cell` (indices at its level's resolution)."""
    return [_mul(fb, cell[a], below[a], loc) if a in cell else 0 for a in axes]


def _names(fb: FrontendBuilder, t: ast.expr) -> list[str]:
    if isinstance(t, ast.Name):
        return [t.id]
    if isinstance(t, (ast.Tuple, ast.List)) and all(isinstance(e, ast.Name) for e in t.elts):
        return [e.id for e in t.elts]  # type: ignore[attr-defined]
    raise fb.error(t, "loop targets must be names")


def _i32(fb: FrontendBuilder, v: Any, loc: Any) -> Any:
    if not is_runtime(v):
        with fb.b.at(loc):
            return fb.b.const(int(v), i32)
    return fb.ops.cast(v, i32, loc)


def _mul(fb: FrontendBuilder, v: Any, k: int, loc: Any) -> Any:
    return v if k == 1 else fb.ops.binary("mul", v, k, loc)


def _counted(fb: FrontendBuilder, extents: list[int], parallel: bool, name: str, loc: Any,
             end: ir.Value | None = None) -> tuple[ir.RangeFor, list[Any]]:  # fmt: skip
    """A loop over the row-major cells of `extents` (or to `end`, a 1-d dynamic length): the loop and the
    coordinates, decoded at the top of its body."""
    total = prod(extents)
    t = i64 if total >= 2**31 else i32
    with fb.b.at(loc):
        begin = fb.b.const(0, t)
        stop = fb.ops.cast(end, t, loc) if end is not None else fb.b.const(total, t)
    loop = fb.b.emit(ir.RangeFor(begin=begin, end=stop, parallel=parallel, type=t, name=name))
    coords: list[Any] = []
    with fb.b.into(loop.body):
        rest: Any = loop
        for k in range(len(extents) - 1, -1, -1):
            if k == 0:
                coords.append(rest)
            else:
                coords.append(fb.ops.binary("mod", rest, extents[k], loc))
                rest = fb.ops.binary("floordiv", rest, extents[k], loc)
    coords.reverse()
    return loop, coords


def _values(fb: FrontendBuilder, indices: list[Any], loc: Any) -> tuple[ir.Value, ...]:
    return tuple(_i32(fb, v, loc) for v in indices)


def _op(fb: FrontendBuilder, op: str, handle: ir.Value, depth: int, indices: list[Any], loc: Any,
        values: tuple[ir.Value, ...] = (), places: tuple[int, ...] = ()) -> ir.Value:  # fmt: skip
    site = -1
    if op in ALLOCATING_OPS:  # its pool may have no cell left: an error naming this call
        site = len(fb.kernel.sites)
        fb.kernel.sites.append(fb.site("sparse_pool", loc, f"qd.{op}"))
    with fb.b.at(loc):
        return fb.b.emit(ir.SNodeOp(op=op, arr=handle, depth=depth, indices=_values(fb, indices, loc), values=values,
                                    places=places, site=site, type=i32))  # fmt: skip


ALLOCATING_OPS = ("activate", "append")


def _guard(fb: FrontendBuilder, handle: ir.Value, depth: int, indices: list[Any], loc: Any) -> ir.Block:
    active = _op(fb, "is_active", handle, depth, indices, loc)
    cond = fb.ops.binary("ne", active, 0, loc)
    with fb.b.at(loc):
        branch = fb.b.emit(ir.If(cond=cond))
    return branch.then


# ---- qd.activate and friends ----------------------------------------------------------------------------


def _flat_index(value: Any) -> list[Any]:
    if isinstance(value, Matrix):
        return list(value.elements)
    if isinstance(value, (list, tuple)):
        out: list[Any] = []
        for v in value:
            out.extend(_flat_index(v))
        return out
    return [value]


def _resolve(fb: FrontendBuilder, node: ast.Call, obj: Any, index: Any) -> tuple[Any, Any, int, list[Any]]:
    """(node, its field, depth of the node on the field's sparse path (0: a dense tree), the field's indices)."""
    t = target(obj)
    if t is None:
        raise fb.error(node, f"qd.{getattr(node.func, 'attr', 'activate')}() takes an SNode (x.snode.parent(), a "
                       f"node of qd.root) or a field placed in a tree, not {type(obj).__name__}")  # fmt: skip
    snode, f = t
    f._ready()
    ind = _flat_index(index)
    field_ext = f.snode._axis_extents()
    axes = sorted(field_ext)
    node_ext = snode._axis_extents() if snode.kind != "root" else {}
    node_axes = sorted(node_ext)
    if snode.kind == "dynamic" and len(ind) == len(node_axes) - 1:  # the list's parent cell: no list index
        node_axes = [a for a in node_axes if a != snode.extents[0][0]]
    if len(ind) != len(node_axes):
        raise fb.error(node, f"{len(ind)} indices for a node indexed by {len(node_axes)}")
    # the node's own index space (as Quadrants' SNode operations take it) to the field's: times the extent below
    given = dict(zip(node_axes, ind))
    loc = fb.loc(node)
    full = [_mul(fb, given[a], field_ext[a] // node_ext[a], loc) if a in given else 0 for a in axes]
    depth = len(_path(snode)) if f._sparse else 0
    return snode, f, depth, full


def snode_call(fb: FrontendBuilder, node: ast.Call, name: str, *args: Any) -> Any:
    """`qd.activate(node, I)`, `qd.deactivate(node, I)`, `qd.is_active(node, I)`, `qd.length(node, I)`,
    `qd.append(node, I, value)`."""
    want = 3 if name == "append" else 2
    if len(args) != want:
        raise fb.error(node, f"qd.{name}() takes {want} arguments")
    loc = fb.loc(node)
    snode, f, depth, index = _resolve(fb, node, args[0], args[1])
    kind = snode.kind
    if name in ("append", "length") and kind != "dynamic":
        raise fb.error(node, f"qd.{name}() needs a dynamic SNode, not a {kind} one")
    if depth == 0:  # a dense tree: every cell is active
        if name in ("activate", "deactivate"):
            return None
        with fb.b.at(loc):
            return fb.b.const(1 if name == "is_active" else prod(d for _, d in snode.extents), i32)
    handle = ndarray_handle(fb, f)
    if name != "append":
        result = _op(fb, name, handle, depth, index, loc)
        return result if name in ("is_active", "length") else None
    places, values = _append_values(fb, node, snode, handle, args[2], loc)
    return _op(fb, "append", handle, depth, index, loc, values, places)


def _append_values(fb: FrontendBuilder, node: ast.Call, snode: Any, handle: ir.Value, value: Any,
                   loc: Any) -> tuple[tuple[int, ...], tuple[ir.Value, ...]]:  # fmt: skip
    """The scalars `qd.append` stores and their byte offsets in the new cell: the fields placed in the dynamic
    node's cell, in order, take `value` (one field) or its items (several)."""
    fields = [c.field for c in snode.children if c.kind == "place"]
    if isinstance(value, Struct):  # a struct's leaf members, in the order its field placed them
        value = _struct_leaves(fb, value)
    items = [value] if len(fields) == 1 else list(value) if isinstance(value, (list, tuple)) else [value]
    if len(items) != len(fields):
        raise fb.error(node, f"qd.append(): {len(fields)} field(s) in the node's cell, {len(items)} value(s)")
    places: list[int] = []
    values: list[ir.Value] = []
    for fld, item in zip(fields, items):
        _, leaf = fld._levels
        scalars = _flat_index(item)
        n = prod(fld.element_shape)
        if len(scalars) == 1 and n > 1:
            scalars = scalars * n
        if len(scalars) != n:
            raise fb.error(node, f"qd.append(): {n} component(s) expected, got {len(scalars)}")
        for c, s in enumerate(scalars):
            places.append(leaf + c * fld._prim.itemsize)
            values.append(fb.ops.cast(fb.ops.value(s, loc), fld._prim, loc))
    return tuple(places), tuple(values)


LIST_METHODS = ("append", "length", "deactivate")
NOT_A_LIST = object()


def list_method(fb: FrontendBuilder, node: ast.Call) -> Any:
    """`x[I].append(v)`, `x[I].length()`, `x[I].deactivate()`: `I` indexes the cell holding the list of a
    field placed in a dynamic node (all its indices but the list's; `x.append(v)` for a 1-d field). NOT_A_LIST
    for any other call."""
    assert isinstance(node.func, ast.Attribute)
    sub = node.func.value
    base = fb.expr(sub.value if isinstance(sub, ast.Subscript) else sub)
    if getattr(base, "_members", None) is not None:  # a struct field: its members' list
        base = next(iter(base._leaf_fields()))
    snode = getattr(base, "_place", None)
    parent = snode._parent if snode is not None else None
    if parent is None or parent.kind != "dynamic":
        return NOT_A_LIST
    raw = fb.expr(sub.slice) if isinstance(sub, ast.Subscript) else None
    index = [] if raw is None or raw == () else _flat_index(raw)
    if len(index) != len(base.shape) - 1:
        return NOT_A_LIST
    args = [fb.expr(a) for a in node.args]
    return snode_call(fb, node, node.func.attr, parent, index, *args)


def _struct_leaves(fb: FrontendBuilder, value: Struct) -> list[Any]:
    out: list[Any] = []
    value.note_read()
    for m in value.members.values():
        m = read(fb, m)
        out.extend(_struct_leaves(fb, m) if isinstance(m, Struct) else [m])
    return out


def rescale_index(fb: FrontendBuilder, node: ast.Call, name: str, a: Any, b: Any, index: Any) -> Any:
    """`qd.rescale_index(a, b, I)`: `I` of `a`'s index space moved into `b`'s (divided or multiplied by the
    ratio of their shapes, per axis)."""
    loc = fb.loc(node)
    sa, sb = _shape_of(fb, node, a), _shape_of(fb, node, b)
    ind = _flat_index(index)
    if len(ind) != len(sa) or len(sb) != len(sa):
        raise fb.error(node, f"qd.rescale_index(): shapes {sa} and {sb} for {len(ind)} indices")
    out = []
    for v, na, nb in zip(ind, sa, sb):
        if na >= nb:
            out.append(fb.ops.binary("floordiv", v, na // nb, loc) if na // nb != 1 else v)
        else:
            out.append(fb.ops.binary("mul", v, nb // na, loc))
    return Matrix((len(out),), out)


def _shape_of(fb: FrontendBuilder, node: ast.Call, obj: Any) -> tuple[int, ...]:
    if _is_snode(obj):
        return tuple(obj.shape)
    shape = getattr(obj, "shape", None)
    if shape is None:
        raise fb.error(node, f"qd.rescale_index(): {type(obj).__name__} has no shape")
    return tuple(shape)
