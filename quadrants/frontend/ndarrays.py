"""Ndarrays and fields in kernels: their IR handles, attributes (`shape`, `dtype`, `ndim`) and element pointers.

An ndarray argument is an IR value of `NdType`; a field is a Python object whose `__qd_field__()` names a region
and offset, baked into the kernel as one `GlobalNd` handle per field (inserted after the arguments). Indexing
makes one `ExtPtr` per scalar of the element, with a bounds-check site.

A `qd.tensor(layout=)` array or field keeps its axes in storage order (its `NdType.layout`); kernels index and
read `shape` canonically, and this module maps canonical indices to physical ones (physical axis p takes
canonical index `layout[p]`), so no later stage knows about layouts.
"""

from __future__ import annotations

import ast
from typing import Any

import numpy as np

from quadrants.errors import MissingGradientError, QuadrantsCompilationError, QuadrantsSyntaxError, QuadrantsTypeError
from quadrants.frontend.builder import FrontendBuilder
from quadrants.frontend.operators import py_value
from quadrants.frontend.ops import is_static_number
from quadrants.frontend.values import Matrix, is_runtime
from quadrants.ir import nodes as ir
from quadrants.types.dtypes import PrimitiveType, i32


def is_field(v: Any) -> bool:
    return getattr(v, "__qd_field__", None) is not None


def is_ndarray(v: Any) -> bool:
    return (isinstance(v, ir.Value) and isinstance(v.type, ir.NdType)) or is_field(v)


def ndarray_handle(fb: FrontendBuilder, v: Any) -> ir.Value:
    """The IR handle of an ndarray argument, or of a field (a region offset baked into the kernel)."""
    if isinstance(v, ir.Value):
        return v
    region, offset, dtype, shape, elem_shape = v.__qd_field__()
    levels, leaf = getattr(v, "_levels", ((), 0))  # a sparse tree's fields share its base: their paths differ
    bits = getattr(v, "_bits", None)  # the fields of a qd.BitpackedFields share their words: their bits differ
    split = getattr(v, "_parts", None)  # a matrix field whose components are placed apart
    key = (region, offset, leaf, levels, bits, id(v) if split is not None else None)
    handle = fb.fields_used.get(key)
    if handle is None:
        from quadrants.runtime.ndarray import nd_type

        layout = tuple(getattr(v, "_qd_layout", None) or ())
        handle = ir.GlobalNd(region=region, offset=offset, shape=tuple(shape), terms=getattr(v, "_terms", ()),
                             levels=levels, leaf=leaf, bits=bits,
                             type=nd_type(dtype, len(shape), tuple(elem_shape), layout))  # fmt: skip
        fb.globals_block.stmts.insert(fb.global_insert_pos, handle)
        fb.global_insert_pos += 1
        fb.fields_used[key] = handle
        if split is not None:  # its elements' scalars are its components' elements
            fb.components[id(handle)] = tuple(ndarray_handle(fb, c) for c in split)
        offset = getattr(v, "offset", ())
        if offset:
            fb.field_offsets[id(handle)] = tuple(offset)
        grad = getattr(v, "grad", None)
        if fb.options.autodiff == "reverse" and is_field(grad) and dtype.is_float:
            fb.kernel.grads[handle] = ndarray_handle(fb, grad)  # what the adjoint pass accumulates into
        dual = getattr(v, "dual", None)
        if fb.options.autodiff == "forward" and is_field(dual) and dtype.is_float:
            fb.kernel.duals[handle] = ndarray_handle(fb, dual)  # what the dual pass carries tangents in
        bit = getattr(v, "_checkbit", None)  # made by a validating Tape (lang/tape.py)
        if fb.options.autodiff == "validation" and is_field(bit):
            fb.kernel.checkbits[handle] = ndarray_handle(fb, bit)
    return handle


def index_domain(fb: FrontendBuilder, arr: ir.Value, shape: Any) -> list[tuple[Any, Any]]:
    """The (begin, end) of each index of `arr`: a field declared with `offset=` starts at its offset."""
    offset = fb.field_offsets.get(id(arr), (0,) * len(shape))
    return [(o, fb.ops.binary("add", o, s, None) if isinstance(s, ir.Value) else o + s) for o, s in zip(offset, shape)]


def ndarray_attribute(fb: FrontendBuilder, arr: ir.Value, attr: str, node: ast.AST) -> Any:
    t = arr.type
    assert isinstance(t, ir.NdType)
    if attr == "shape":
        dims = _inverse(t.layout) if t.layout else tuple(range(t.ndim))  # canonical axis k is stored at dims[k]
        if isinstance(arr, ir.GlobalNd):
            return tuple(arr.shape[d] for d in dims)  # fields have compile-time shapes
        return tuple(fb.b.emit(ir.NdShape(arr=arr, dim=d, type=i32)) for d in dims)
    if attr == "dtype":
        return t.dtype
    if attr == "ndim":
        return t.ndim
    if attr == "grad":
        grad = fb.kernel.grads.get(arr)
        if grad is None:
            raise fb.error(node, "this ndarray has no gradient: allocate it with `needs_grad=True`", MissingGradientError)
        return grad
    raise fb.error(node, f"ndarrays have no attribute {attr!r} inside kernels")


def numpy_constant(fb: FrontendBuilder, base: np.ndarray, index: Any, node: ast.Subscript) -> Any:
    """`A[1]` of a numpy array reached as a Python object (captured, or a small data_oriented member): a
    compile-time value when every index is one, as in Quadrants; a runtime index is an error."""
    parts = index if isinstance(index, tuple) else (index,)
    if any(is_runtime(p) for p in parts):
        raise fb.error(
            node,
            f"{ast.unparse(node.value)!r} is a numpy array compiled into the kernel: only compile-time indices "
            "read it; pass it as a kernel argument to index it at run time",
            QuadrantsCompilationError,
        )
    try:
        value = base[index]
    except (IndexError, TypeError) as e:
        raise fb.error(node, f"{type(e).__name__}: {e}", QuadrantsCompilationError) from None
    return value.item() if isinstance(value, np.generic) else value


def reject_captured_array(fb: FrontendBuilder, base: Any, node: ast.Subscript) -> None:
    """An ndarray reached as a Python object rather than a kernel argument: an error, as in Quadrants, with or
    without fastcache."""
    if getattr(base, "_desc", None) is not None:
        raise fb.error(
            node,
            f"{ast.unparse(node.value)!r} is an ndarray captured from outside the kernel; pass it as a kernel "
            "argument (ndarrays are runtime arguments, never compiled in)",
            QuadrantsCompilationError,
        )


def element_ptrs(fb: FrontendBuilder, arr: ir.Value, node: ast.Subscript) -> list[ir.ExtPtr]:
    """Pointers to the scalars of element `arr[indices]` (one, or one per vector/matrix component)."""
    return element_ptrs_at(fb, arr, element_indices(fb, node), node)


def element_indices(fb: FrontendBuilder, node: ast.Subscript) -> list[ir.Value]:
    """The subscript's indices as i32 values (evaluated once: a struct field element indexes every member)."""
    loc = fb.loc(node)
    values = []
    for i in _indices(fb, node):
        if is_static_number(i) and not isinstance(i, (int, bool)) and float(i) != int(i):
            raise QuadrantsTypeError("ndarray indices must be integers", loc)
        v = fb.ops.value(int(i) if is_static_number(i) else i, loc)
        assert isinstance(v.type, PrimitiveType)
        if v.type.is_float:
            raise QuadrantsTypeError(f"ndarray indices must be integers, not {v.type}", loc)
        values.append(fb.b.cast(v, i32))
    return values


def element_ptrs_at(fb: FrontendBuilder, arr: ir.Value, values: list[ir.Value], node: ast.Subscript) -> list[ir.ExtPtr]:
    """`element_ptrs` for indices already evaluated."""
    t = arr.type
    assert isinstance(t, ir.NdType)
    loc = fb.loc(node)
    if len(values) != t.ndim:
        raise QuadrantsSyntaxError(f"this ndarray has {t.ndim} dimension(s) but is indexed with {len(values)}", loc)
    if id(arr) in fb.field_offsets:  # a field with `offset=`: its first element is at the offset
        values = [fb.ops.binary("sub", v, o, loc) if o else v for v, o in zip(values, fb.field_offsets[id(arr)])]
    if t.layout:  # canonical indices to storage order
        values = [values[a] for a in t.layout]
    if id(arr) in fb.clamped:
        values = _clamped(fb, arr, values, loc)
    site = len(fb.kernel.sites)
    fb.kernel.sites.append(fb.site("bounds", loc, ast.unparse(node.value)))
    elems = [()] if not t.elem_shape else list(_element_indices(t.elem_shape))
    comps = fb.components.get(id(arr))
    if comps is not None:  # each component is a field of its own (lang/component_fields.py)
        return [fb.b.emit(ir.ExtPtr(arr=c, indices=tuple(values), elem=(), site=site, type=ir.PtrType(t.dtype)))
                for c in comps]  # fmt: skip
    if fb.stop_grads:
        arr = _stopped(fb, arr)
    return [
        fb.b.emit(ir.ExtPtr(arr=arr, indices=tuple(values), elem=e, site=site, type=ir.PtrType(t.dtype))) for e in elems
    ]


def stop_grad(fb: FrontendBuilder, node: ast.Call, name: str, x: Any) -> None:
    """`qd.stop_grad(x)`: in this block and the blocks nested in it, loads of field `x` contribute nothing to
    `x.grad` (as in Quadrants; a primal or dual kernel ignores it). The adjoint's element pointers there go
    through an alias handle of the same memory that has no gradient."""
    if not is_field(x):
        raise fb.error(node, "qd.stop_grad() takes a field")
    if fb.options.autodiff != "reverse":
        return None
    handle = ndarray_handle(fb, x)
    if not isinstance(handle, ir.GlobalNd) or handle not in fb.kernel.grads:
        return None
    alias = ir.GlobalNd(region=handle.region, offset=handle.offset, shape=handle.shape, terms=handle.terms,
                        type=handle.type)  # fmt: skip
    fb.globals_block.stmts.insert(fb.global_insert_pos, alias)
    fb.global_insert_pos += 1
    if id(handle) in fb.field_offsets:
        fb.field_offsets[id(alias)] = fb.field_offsets[id(handle)]
    fb.stop_grads.setdefault(id(fb.b.block), {})[handle] = alias
    return None


def _stopped(fb: FrontendBuilder, arr: ir.Value) -> ir.Value:
    for block in reversed(fb.b.blocks):
        alias = fb.stop_grads.get(id(block), {}).get(arr)
        if alias is not None:
            return alias
    return arr


def _clamped(fb: FrontendBuilder, arr: ir.Value, values: list[ir.Value], loc: Any) -> list[ir.Value]:
    """`boundary="clamp"`: each index moved into [0, shape - 1], as Quadrants does."""
    out = []
    for d, v in enumerate(values):
        last = fb.ops.binary("sub", fb.b.emit(ir.NdShape(arr=arr, dim=d, type=i32)), 1, loc)
        out.append(fb.ops.binary("min", fb.ops.binary("max", v, 0, loc), last, loc))
    return out


def _indices(fb: FrontendBuilder, node: ast.Subscript) -> list[Any]:
    raw = fb.expr(node.slice)
    if raw is None:
        return []  # x[None]: the element of a 0-dimensional field
    items = list(raw) if isinstance(raw, (tuple, list)) else [raw]
    out: list[Any] = []
    while items:
        it = items.pop(0)
        if isinstance(it, (tuple, list)):  # `grid[f, I, i_b]` with `I = (i, j, k)`: flattened, as in Quadrants
            items[:0] = list(it)
        elif isinstance(it, Matrix):
            out.extend(it.elements)
        elif hasattr(it, "__qd_matrix__"):  # a Python-scope vector: a `qd.static(qd.grouped(...))` index
            out.extend(it.__qd_matrix__()[1])
        else:
            out.append(py_value(it))
    return out


def _inverse(layout: tuple[int, ...]) -> tuple[int, ...]:
    inv = [0] * len(layout)
    for p, a in enumerate(layout):
        inv[a] = p
    return tuple(inv)


def _element_indices(shape: tuple[int, ...]) -> list[tuple[int, ...]]:
    if len(shape) == 1:
        return [(i,) for i in range(shape[0])]
    return [(i, j) for i in range(shape[0]) for j in range(shape[1])]
