"""Loops: `range`, `qd.ndrange`, `qd.grouped`, loops over an ndarray's index space, `qd.static` unrolling, and
`while`.

A `for` at the kernel's top level (through static ifs, static fors and inlined funcs, as in Quadrants) becomes a
parallel `RangeFor`; every other loop is serial. Multi-dimensional loops are flattened to one range whose
index is split back into coordinates at the top of the body.
"""

from __future__ import annotations

import ast
import builtins
import copy
from collections.abc import Callable
from typing import Any, NamedTuple

from quadrants._logging import warn
from quadrants.errors import QuadrantsSyntaxError, QuadrantsTypeError
from quadrants.frontend import mesh, sparse
from quadrants.frontend.arguments import call_args
from quadrants.frontend.builder import FrontendBuilder, StaticJump
from quadrants.frontend.intrinsic_calls import Grouped
from quadrants.frontend.intrinsics import GroupedNdRange, _NdRange
from quadrants.frontend.lvalues import assign
from quadrants.frontend.ndarrays import index_domain, is_field, is_ndarray, ndarray_attribute, ndarray_handle
from quadrants.frontend.operators import binary
from quadrants.frontend.refs import read
from quadrants.frontend.scope import Alias, Fixed, MatVar, Scope, bind_loop_index
from quadrants.frontend.static_eval import is_static_call, static_eval
from quadrants.frontend.structs import is_struct_field
from quadrants.frontend.values import Matrix, is_runtime
from quadrants.frontend.vectors import as_matrix
from quadrants.ir import nodes as ir
from quadrants.types.dtypes import PrimitiveType, i32, i64


def transform_for(fb: FrontendBuilder, node: ast.For) -> None:
    if node.orelse:
        raise fb.error(node, "for ... else is not supported in kernels")
    chosen = node.iter
    while isinstance(chosen, ast.IfExp) and is_static_call(fb, chosen.test):  # `A if qd.static(c) else B`
        chosen = chosen.body if fb.expr(chosen.test) else chosen.orelse
    if chosen is not node.iter:
        node = copy.copy(node)  # the chosen iterable, without changing the user's AST
        node.iter = chosen
    it_node = node.iter
    if isinstance(it_node, ast.Call):
        fn = fb.expr(it_node.func)
        if fn is builtins.range:
            args, kwargs = call_args(fb, it_node)
            if kwargs or not 1 <= len(args) <= 2:
                raise fb.error(node, f"Range should have 1 or 2 arguments, found {len(args) + len(kwargs)}: "
                                        "range(a, b, step) is not supported in kernels; use range(n) or range(a, b)")  # fmt: skip
            _check_fresh_targets(fb, node.target)
            begin, end = (0, args[0]) if len(args) == 1 else args
            range_loop(fb, node, [(begin, end)], grouped=False, python_range=True)
            return
        if getattr(fn, "__qd_intrinsic__", None) == "static":
            static_for(fb, node)
            return
    it = fb.expr(it_node)
    grouped = isinstance(it, (Grouped, GroupedNdRange))  # the latter: a grouped ndrange made at compile time
    if grouped:
        it = it.inner
    if is_field(it):  # a struct-for
        _check_fresh_targets(fb, node.target)
    if sparse.sparse_loop_target(it):  # active cells only, level by level
        sparse.struct_for(fb, node, it, grouped)
        return
    if mesh.elements_of(it) is not None:
        mesh_for(fb, node, it)
        return
    if isinstance(it, mesh.Relation):
        relation_for(fb, node, it)
        return
    bounds = _domain(fb, it, it_node)
    axes = it.axes if isinstance(it, _NdRange) else None
    if not bounds:
        _empty_index_loop(fb, node)
    elif axes is not None:  # visit in `axes` order (the flattened dimensions), bind the canonical indices
        range_loop(fb, node, [bounds[a] for a in axes], grouped, axes)
    else:
        range_loop(fb, node, bounds, grouped)


def _domain(fb: FrontendBuilder, it: Any, it_node: ast.expr) -> list[tuple[Any, Any]]:
    """The index space a `for` walks: (begin, end) per dimension of an ndrange, ndarray or field."""
    if isinstance(it, _NdRange):
        return list(it.bounds)
    if is_ndarray(it):
        handle = ndarray_handle(fb, it)
        return index_domain(fb, handle, ndarray_attribute(fb, handle, "shape", it_node))
    if is_struct_field(it):
        offset = it.offset or (0,) * len(it.shape)
        return [(o, o + s) for o, s in zip(offset, it.shape)]
    raise fb.error(
        it_node,
        f"cannot loop over {type(it).__name__} in a kernel; use range(), qd.ndrange(), qd.grouped() or qd.static()",
    )


_FILL_FIELD, _FILL_VALUE, _FILL_INDEX = "__qd_fill_field", "__qd_fill_value", "__qd_fill_index"


def fill_field(fb: FrontendBuilder, field: Any, node: ast.Call) -> None:
    """`x.fill(v)` of a field inside a kernel or func: a loop over the field storing `v` in every element, run
    at every launch, as in Quadrants (the Python-scope `Field.fill` would run once, while the kernel compiles).
    `v` is evaluated once, before the loop; the loop is parallel at the kernel's top level like any other."""
    if len(node.args) != 1 or node.keywords:
        raise fb.error(node, "fill() takes one value")
    value = fb.expr(node.args[0])
    elem_shape = field.__qd_field__()[4]
    if elem_shape and not isinstance(value, (Matrix, list, tuple)):
        n = 1
        for s in elem_shape:
            n *= s
        value = Matrix(tuple(elem_shape), [value] * n)  # a scalar fills every component, as in Quadrants
    scope = fb.new_scope()
    try:
        scope.names[_FILL_FIELD] = field
        scope.names[_FILL_VALUE] = Fixed(value, "fill value") if is_runtime(value) else value
        loop = _fill_ast(node)
        if sparse.sparse_loop_target(field):  # the active cells, as Quadrants' fill does
            sparse.struct_for(fb, loop, field, grouped=True)
            return
        bounds = _domain(fb, field, node.func)
        if not bounds:
            _empty_index_loop(fb, loop)
        else:
            range_loop(fb, loop, bounds, grouped=True)
    finally:
        fb.pop_scope(scope)


def _fill_ast(node: ast.Call) -> ast.For:
    """`for I in F: F[I] = v` over the names `fill_field` binds, located at the `fill` call (errors inside
    point at it)."""
    def name(n: str, ctx: ast.expr_context) -> ast.Name:
        return ast.Name(id=n, ctx=ctx)

    store = ast.Assign(
        targets=[ast.Subscript(value=name(_FILL_FIELD, ast.Load()), slice=name(_FILL_INDEX, ast.Load()),
                               ctx=ast.Store())],
        value=name(_FILL_VALUE, ast.Load()),
    )  # fmt: skip
    loop = ast.For(target=name(_FILL_INDEX, ast.Store()), iter=name(_FILL_FIELD, ast.Load()), body=[store],
                   orelse=[])  # fmt: skip
    for n in ast.walk(loop):
        ast.copy_location(n, node)
    return loop


def _empty_index_loop(fb: FrontendBuilder, node: ast.For) -> None:
    """`for I in qd.grouped(qd.ndrange())`: one iteration, whose index is empty (`x[I]` of a 0-d field or
    ndarray), as in Quadrants."""
    if node.orelse:
        raise fb.error(node, "for ... else is not supported in kernels")
    scope = fb.new_scope()
    try:
        assign(fb, node.target, (), node, static=True)
        fb.stmts(node.body)
    finally:
        fb.pop_scope(scope)


# ---- runtime loops -------------------------------------------------------------------------------------------


def _bound(fb: FrontendBuilder, v: Any, node: ast.AST) -> Any:
    """A loop bound: a Python int, or an integer IR value (not yet cast to the loop's type)."""
    if not is_runtime(v):
        if isinstance(v, float) and v != int(v):
            raise fb.error(node, "loop bounds must be integers: every argument of ndrange should be an "
                             "integer scalar or a tuple/list of (int, int)", QuadrantsTypeError)  # fmt: skip
        return int(v)
    val = fb.ops.value(v, fb.loc(node))
    assert isinstance(val.type, PrimitiveType)
    if val.type.is_float:
        raise fb.error(node, f"loop bounds must be integers, not {val.type}: every argument of ndrange should be "
                         "an integer scalar or a tuple/list of (int, int)", QuadrantsTypeError)  # fmt: skip
    return val


def _as_index(fb: FrontendBuilder, v: Any, t: PrimitiveType, loc: Any) -> Any:
    """A bound as a value of the index type `t` (Python ints stay Python ints: they fold)."""
    return v if not is_runtime(v) else fb.ops.cast(v, t, loc)


def _index_value(fb: FrontendBuilder, v: Any, t: PrimitiveType, loc: Any) -> ir.Value:
    """An IR value of the index type `t`."""
    if is_runtime(v):
        return fb.ops.cast(v, t, loc)
    with fb.b.at(loc):
        return fb.b.const(int(v), t)


class _FlatRange(NamedTuple):
    """A loop's bounds flattened to one range `begin..end` of type `flat_type` (`extents`: per dimension, for
    a multi-dimensional loop, in the flat type)."""

    begins: list[Any]  # per dimension, a Python int or a value of its index type
    dim_types: list[PrimitiveType]
    extents: list[Any]
    flat_type: PrimitiveType
    begin: ir.Value
    end: ir.Value


def _flatten(fb: FrontendBuilder, it_node: ast.expr, bounds: list[tuple[Any, Any]]) -> _FlatRange:
    loc = fb.loc(it_node)
    raw = [(_bound(fb, b, it_node), _bound(fb, e, it_node)) for b, e in bounds]
    # Indices are i32 as in Quadrants, unless a bound is 64-bit (or a constant beyond i32): then i64, so a
    # loop over more than 2**31 elements runs them all. The flat index of a multi-dimensional loop is i64
    # unless its extents are constants whose product fits in i32.
    dim_types = [i64 if _wide(b) or _wide(e) else i32 for b, e in raw]
    begins = [_as_index(fb, b, t, loc) for (b, _), t in zip(raw, dim_types)]
    ends = [_as_index(fb, e, t, loc) for (_, e), t in zip(raw, dim_types)]
    if len(bounds) == 1:
        flat_t = dim_types[0]
        begin, end = _index_value(fb, begins[0], flat_t, loc), _index_value(fb, ends[0], flat_t, loc)
        return _FlatRange(begins, dim_types, [], flat_t, begin, end)
    extents: list[Any] = []
    for b0, e0 in zip(begins, ends):
        extents.append(binary(fb, "max", binary(fb, "sub", e0, b0, it_node) if b0 != 0 else e0, 0, it_node))
    flat_t = i64 if any(is_runtime(e) for e in extents) or _product(extents) >= 2**31 else i32
    extents = [_as_index(fb, e, flat_t, loc) for e in extents]
    total: Any = None
    for ext in extents:  # in the flat type: the product of i32 extents may not fit in i32
        total = ext if total is None else binary(fb, "mul", total, ext, it_node)
    begin, end = _index_value(fb, 0, flat_t, loc), _index_value(fb, total, flat_t, loc)
    return _FlatRange(begins, dim_types, extents, flat_t, begin, end)


def range_loop(fb: FrontendBuilder, node: ast.For, bounds: list[tuple[Any, Any]], grouped: bool,
               axes: tuple[int, ...] | None = None, python_range: bool = False,
               bind: Callable[[Scope, list[Any]], None] | None = None) -> None:  # fmt: skip
    """`bounds` in visit order (outermost first); `axes[p]`: the canonical axis of level p (None: the same);
    `python_range`: written as `range(...)` (`ir.RangeFor.python_range`); `bind(scope, coords)`: binds the
    loop's target instead of the coordinates (a mesh-for's element), at the top of the body."""
    it_node = node.iter
    loc = fb.loc(it_node)
    flat = _flatten(fb, it_node, bounds)
    targets = _target_names(fb, node.target)
    if grouped and len(targets) != 1:
        raise fb.error(node.target, "qd.grouped(...) binds the whole index to a single name")
    if not grouped and len(targets) != len(bounds):
        raise fb.error(node.target, "Ndrange for loop with number of the loop variables not equal to the "
                         f"dimension of the ndrange is not supported ({len(bounds)} dimension(s), "
                         f"{len(targets)} name(s))")  # fmt: skip

    config, fb.loop_config = fb.loop_config or {}, None
    if config.get("name") is not None and any(kind != "static" for kind in fb.loops):
        warn(f"{loc.short()}: qd.loop_config(name={config['name']!r}) is ignored: this loop is nested inside another "
             "for-loop (only top-level loops are named)", tag="frontend")  # fmt: skip
    serialize = config.get("serialize") or config.get("parallelize") == 1
    # at the top level, or under compile-time `if`s only (statements.transform_if folds them)
    parallel = fb.runtime_depth == fb.folded_ifs and fb.parallel_id == 0 and not serialize
    ext_values = tuple(_index_value(fb, e, flat.flat_type, loc) for e in flat.extents)
    loop = fb.b.emit(
        ir.RangeFor(
            begin=flat.begin,
            end=flat.end,
            parallel=parallel,
            type=flat.flat_type,
            name=",".join(targets),
            extents=ext_values,
            block_dim=int(config.get("block_dim") or 0) if parallel else 0,
            python_range=python_range,
        )
    )
    scope = fb.new_scope()
    fb.runtime_depth += 1
    fb.loops.append(("parallel-folded" if fb.folded_ifs else "parallel") if parallel else "serial")
    saved_pid = fb.parallel_id
    if parallel:
        fb.next_parallel_id += 1
        fb.parallel_id = fb.next_parallel_id
    try:
        with fb.b.into(loop.body):
            coords = [loop] if len(bounds) == 1 else _coords(fb, loop, flat.begins, flat.dim_types, it_node)
            if axes is not None:
                coords = [coords[axes.index(k)] for k in range(len(coords))]
            if bind is not None:
                bind(scope, coords)
            else:
                bind_loop_index(scope, targets, coords, grouped)
            fb.stmts(node.body)
    finally:
        fb.parallel_id = saved_pid
        if fb.loops.pop() == "parallel-broken":  # a `break` under a folded compile-time `if`: serial
            loop.parallel, loop.block_dim = False, 0
        fb.runtime_depth -= 1
        fb.pop_scope(scope)


def _coords(
    fb: FrontendBuilder, loop: ir.RangeFor, begins: list[Any], types: list[PrimitiveType], node: ast.AST
) -> list[Any]:
    coords: list[Any] = []
    for k, b0 in enumerate(begins):
        c = fb.b.emit(ir.LoopCoord(loop=loop, dim=k, type=types[k]))
        coords.append(binary(fb, "add", c, b0, node) if (is_runtime(b0) or b0) else c)
    return coords


# ---- mesh-fors -------------------------------------------------------------------------------------------------


def mesh_for(fb: FrontendBuilder, node: ast.For, it: Any) -> None:
    """`for v in mesh.verts:` a range over the element type's owned elements, patch after patch (parallel at
    the kernel's top level), binding `v` to the element (frontend/mesh.py)."""
    view, order = mesh.elements_of(it)  # type: ignore[misc]
    target = _one_target(fb, node, "Mesh for")
    if order not in view.elements:
        raise fb.error(node.iter, f"this mesh's metadata has no {mesh.ELEMENT_NAMES[order]} to loop over")
    mark = len(fb.mesh_patches)

    def bind(scope: Scope, coords: list[Any]) -> None:
        el = mesh.loop_element(fb, view, order, coords[0], node.iter)
        fb.mesh_patches.append(el.patch)
        scope.names[target] = Fixed(el, "mesh element")

    try:
        range_loop(fb, node, [(0, view.elements[order].num)], grouped=False, bind=bind)
    finally:
        del fb.mesh_patches[mark:]


def relation_for(fb: FrontendBuilder, node: ast.For, rel: mesh.Relation) -> None:
    """`for c in v.cells:` a serial loop over the relation's neighbours of one element."""
    target = _one_target(fb, node, "Nested-mesh for")
    size = mesh.relation_size(fb, rel, node.iter)

    def bind(scope: Scope, coords: list[Any]) -> None:
        scope.names[target] = Fixed(mesh.neighbour(fb, rel, coords[0], node.iter), "mesh element")

    range_loop(fb, node, [(0, size)], grouped=False, bind=bind)


def _one_target(fb: FrontendBuilder, node: ast.For, what: str) -> str:
    targets = _target_names(fb, node.target)
    if len(targets) != 1:
        raise fb.error(node.target, f"{what} should have 1 loop target, found {len(targets)}", QuadrantsSyntaxError)
    return targets[0]


# ---- compile-time unrolling ----------------------------------------------------------------------------------


def static_for(fb: FrontendBuilder, node: ast.For) -> None:
    call = node.iter
    assert isinstance(call, ast.Call)
    if len(call.args) != 1:
        raise fb.error(call, "for ... in qd.static(...) takes one iterable")
    arg = call.args[0]
    if isinstance(arg, ast.Call) and getattr(fb.expr(arg.func), "__qd_intrinsic__", None) == "static":
        raise fb.error(arg, "qd.static(qd.static(...)) is not supported: qd.static cannot be nested")
    bound = fb.frame.scope.find(arg.id)[1] if isinstance(arg, ast.Name) else None
    if isinstance(bound, (MatVar, Fixed, Alias)):  # unrolling over the elements of a runtime vector
        m = as_matrix(fb, read(fb, bound), arg)
        if m is None:
            raise fb.error(arg, "qd.static(...) needs a compile-time iterable or a vector")
        items = m.unpack_values()
    else:
        try:
            items = list(static_eval(fb, arg))
        except NotImplementedError as e:  # e.g. a Python-scope struct for over a field, unrolled
            raise fb.error(arg, f"qd.static(...) cannot unroll this: {e}") from None
    if len(items) > fb.options.unrolling_limit:
        warn(
            f"{fb.loc(call).short()}: qd.static loop unrolls {len(items)} iterations "
            f"(unrolling_limit={fb.options.unrolling_limit})",
            tag="frontend",
        )
    fb.loops.append("static")
    fb.static_loop_depths.append(fb.runtime_depth)
    try:
        for item in items:
            scope = fb.new_scope()
            try:
                assign(fb, node.target, item, node, static=True)
                fb.stmts(node.body)
            except StaticJump as jump:
                if jump.word == "break":
                    break
            finally:
                fb.pop_scope(scope)
            if fb.frame.terminated:
                break
    finally:
        fb.loops.pop()
        fb.static_loop_depths.pop()


# ---- while ---------------------------------------------------------------------------------------------------


def transform_while(fb: FrontendBuilder, node: ast.While) -> None:
    if node.orelse:
        raise fb.error(node, "while ... else is not supported in kernels")
    loop = fb.b.emit(ir.While())
    scope = fb.new_scope()
    fb.runtime_depth += 1
    fb.loops.append("while")
    try:
        with fb.b.into(loop.body):
            cond = fb.expr(node.test)
            if is_runtime(cond):
                c = fb.ops.unary("lnot", fb.ops.cond(cond, fb.loc(node.test)), fb.loc(node.test))
                stop = fb.b.emit(ir.If(cond=c))
                stop.then.stmts.append(ir.Break(loc=fb.b.loc))
            elif not cond:
                fb.b.emit(ir.Break())
            fb.stmts(node.body)
    finally:
        fb.loops.pop()
        fb.runtime_depth -= 1
        fb.pop_scope(scope)


def _check_fresh_targets(fb: FrontendBuilder, target: ast.expr) -> None:
    """A range-for's or struct-for's index names a new variable: one the function already has (an argument,
    a local, an enclosing loop's index) is Quadrants' error, as in `i = 0` then `for i in range(n)`."""
    for name in _target_names(fb, target):
        if fb.frame.scope.find(name)[0] is not None:
            raise fb.error(target, f"Variable '{name}' is already declared in the outer scope and cannot be used "
                                   "as loop variable")  # fmt: skip


def _target_names(fb: FrontendBuilder, target: ast.expr) -> list[str]:
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, (ast.Tuple, ast.List)) and all(isinstance(e, ast.Name) for e in target.elts):
        return [e.id for e in target.elts]  # type: ignore[attr-defined]
    raise fb.error(target, "loop targets must be names")


def _wide(bound: Any) -> bool:
    """A loop bound that needs a 64-bit index: a 64-bit (or u32) integer value, or a constant beyond i32."""
    if isinstance(bound, int):
        return not -(2**31) <= bound < 2**31
    t = bound.type
    return t.bits == 64 or (t.bits == 32 and t.kind == "uint")


def _product(values: list[int]) -> int:
    out = 1
    for v in values:
        out *= v
    return out
