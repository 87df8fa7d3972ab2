"""`qd.BufferView` values in kernels (runtime/buffer_view.py): a window `[offset, offset + size)` of a 1-D ndarray.

A view is compile-time data holding IR values: the ndarray's handle and its offset and size (runtime i32
arguments of a view parameter, or any integer values for one made in the kernel). Nothing reaches the IR but
the arithmetic: `v[i]` is the ndarray element `arr[offset + i]` (read, assigned, updated, or a vector/matrix
element indexed further), `v.size` / `v.offset` are the values, and `v.subview(o, n)`, `v[a:b]` and
`BufferView(arr, o, n)` make new views. A func parameter annotated `BufferView[...]` takes the view itself.

In debug mode each of these is checked, as in Quadrants: an index outside `[0, size)`, a subview outside its
parent and a view outside its ndarray stop the kernel with a QuadrantsAssertionError naming the values, the
kernel and the chain of funcs it happened in (a "formatted" check site; Quadrants' `tid=` is its CPU worker's
number, which this runtime does not give a kernel, so it is reported as `n/a`).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any

from quadrants.errors import QuadrantsSyntaxError, QuadrantsTypeError
from quadrants.frontend.builder import FrontendBuilder
from quadrants.frontend.ndarrays import element_ptrs_at
from quadrants.frontend.ops import is_static_number
from quadrants.frontend.refs import MatrixRef, ScalarRef
from quadrants.frontend.values import Matrix, is_runtime
from quadrants.ir import nodes as ir
from quadrants.types.dtypes import PrimitiveType, i32


@dataclass(eq=False)
class View:
    arr: ir.Value  # the 1-D ndarray's handle
    offset: Any  # an i32 IR value or a Python int
    size: Any

    def __repr__(self) -> str:
        return "<BufferView in a kernel>"


def bind(arr: ir.Value, offset: Any, size: Any) -> View:
    """A view parameter's three runtime arguments, as the view the kernel's code sees."""
    return View(arr, offset, size)


def attribute(fb: FrontendBuilder, v: View, attr: str, node: ast.AST) -> Any:
    if attr == "size":
        return v.size
    if attr == "offset":
        return v.offset
    if attr == "shape":
        return (v.size,)
    raise fb.error(node, f"a BufferView has no attribute {attr!r} in a kernel (it has size, offset, shape, subview)")


def method(fb: FrontendBuilder, v: View, attr: str, args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> View:
    if attr != "subview":
        raise fb.error(node, f"a BufferView has no method {attr!r} in a kernel (it has subview(offset, size))")
    offset, size = _two_ints(fb, "subview", args, kwargs, node)
    _check_window(fb, offset, size, v.size, _subview_message(fb), node)
    return View(v.arr, _add(fb, v.offset, offset, node), size)


def construct(fb: FrontendBuilder, node: ast.Call, name: str, *args: Any, **kwargs: Any) -> View:
    """`BufferView(arr, offset, size)` in a kernel, `arr` a 1-D ndarray parameter."""
    if args and isinstance(args[0], View):
        raise fb.error(node, "Cannot nest BufferView(view, ...); use view.subview(offset, size) instead")
    arr = args[0] if args else kwargs.pop("arr", None)
    t = getattr(arr, "type", None)
    if not isinstance(arr, ir.Value) or not isinstance(t, ir.NdType):
        raise fb.error(node, "BufferView(arr, offset, size) in a kernel takes an ndarray parameter", QuadrantsTypeError)
    if t.ndim != 1:
        raise fb.error(node, f"BufferView requires a 1D ndarray, got a {t.ndim}-dimensional one", QuadrantsTypeError)
    offset, size = _two_ints(fb, "BufferView", list(args[1:]), kwargs, node)
    length = fb.b.emit(ir.NdShape(arr=arr, dim=0, type=i32))
    _check_window(fb, offset, size, length, "BufferView construction out of range: offset=%d, size=%d, ndarray "
                  "length=%d.", node)  # fmt: skip
    return View(arr, offset, size)


def subscript(fb: FrontendBuilder, v: View, node: ast.Subscript) -> Any:
    """`v[i]` read (a scalar, or a vector/matrix element), or `v[a:b]` (a narrower view)."""
    if isinstance(node.slice, ast.Slice):
        return _slice(fb, v, node.slice, node)
    loads = [fb.b.load(p) for p in _ptrs(fb, v, node)]
    elem_shape = _nd(v).elem_shape
    return loads[0] if not elem_shape else Matrix(elem_shape, loads)


def element_ref(fb: FrontendBuilder, v: View, node: ast.Subscript) -> ScalarRef | MatrixRef:
    """`v[i]` as an assignment target."""
    if isinstance(node.slice, ast.Slice):
        raise fb.error(node, "a BufferView slice cannot be assigned to; assign its elements")
    refs = [ScalarRef(p, _nd(v).dtype, shared=True) for p in _ptrs(fb, v, node)]
    elem_shape = _nd(v).elem_shape
    return refs[0] if not elem_shape else MatrixRef(elem_shape, list(refs))


def _nd(v: View) -> ir.NdType:
    t = v.arr.type
    assert isinstance(t, ir.NdType)
    return t


def _ptrs(fb: FrontendBuilder, v: View, node: ast.Subscript) -> list[ir.ExtPtr]:
    index = fb.expr(node.slice)
    if isinstance(index, tuple):
        raise fb.error(node, f"a BufferView is 1-D: index it with one integer, not {len(index)}")
    i = _int(fb, index, "a BufferView index", node)
    if fb.options.debug:
        loc = fb.loc(node)
        kernel, stack = _callstack(fb)
        msg = (f"BufferView Out Of Range: kernel[{kernel}] tid=n/a, got index %d (offset=%d, size=%d).\n"
               f"Callstack:\n{stack}")  # fmt: skip
        conds = [fb.ops.binary("ge", i, 0, loc), fb.ops.binary("lt", i, v.size, loc)]
        _assert(fb, conds, msg, (i, v.offset, v.size), node)
    return element_ptrs_at(fb, v.arr, [_as_i32(fb, _add(fb, v.offset, i, node), node)], node)


def _slice(fb: FrontendBuilder, v: View, s: ast.Slice, node: ast.AST) -> View:
    if s.step is not None:
        raise fb.error(node, "BufferView slicing does not support an explicit step (only v[a:b])", QuadrantsSyntaxError)
    lo = 0 if s.lower is None else _bound(fb, v, fb.expr(s.lower), node)
    hi = v.size if s.upper is None else _bound(fb, v, fb.expr(s.upper), node)
    return View(v.arr, _add(fb, v.offset, lo, node), _sub(fb, hi, lo, node))


def _bound(fb: FrontendBuilder, v: View, b: Any, node: ast.AST) -> Any:
    """A slice bound; a negative constant counts from the view's end, as in Python."""
    b = _int(fb, b, "a BufferView slice bound", node)
    return _add(fb, v.size, b, node) if isinstance(b, int) and b < 0 else b


def _two_ints(fb: FrontendBuilder, what: str, args: list[Any], kwargs: dict[str, Any], node: ast.AST) -> tuple[Any, Any]:
    given = list(args)
    for k in ("offset", "size")[len(given):]:
        if k in kwargs:
            given.append(kwargs.pop(k))
    if len(given) != 2 or kwargs:
        raise fb.error(node, f"{what} takes (offset, size)")
    return _int(fb, given[0], f"{what}'s offset", node), _int(fb, given[1], f"{what}'s size", node)


def _int(fb: FrontendBuilder, x: Any, what: str, node: ast.AST) -> Any:
    if is_static_number(x) and float(x) == int(x):
        return int(x)
    t = getattr(x, "type", None)
    if is_runtime(x) and isinstance(t, PrimitiveType) and t.is_integral:
        return x
    raise fb.error(node, f"{what} must be an integer", QuadrantsTypeError)


def _add(fb: FrontendBuilder, a: Any, b: Any, node: ast.AST) -> Any:
    if isinstance(a, int) and isinstance(b, int):
        return a + b
    if isinstance(b, int) and b == 0:
        return a
    return _as_i32(fb, fb.ops.binary("add", a, b, fb.loc(node)), node)


def _sub(fb: FrontendBuilder, a: Any, b: Any, node: ast.AST) -> Any:
    if isinstance(a, int) and isinstance(b, int):
        return a - b
    if isinstance(b, int) and b == 0:
        return a
    return _as_i32(fb, fb.ops.binary("sub", a, b, fb.loc(node)), node)


def _as_i32(fb: FrontendBuilder, x: Any, node: ast.AST) -> ir.Value:
    v = fb.ops.value(x, fb.loc(node))
    return v if v.type is i32 else fb.b.cast(v, i32)


# ---- debug-mode checks --------------------------------------------------------------------------------


def _check_window(fb: FrontendBuilder, offset: Any, size: Any, length: Any, msg: str, node: ast.AST) -> None:
    """Debug mode: `[offset, offset + size)` must lie in `[0, length)`."""
    if not fb.options.debug:
        return
    loc = fb.loc(node)
    conds = [fb.ops.binary("ge", offset, 0, loc), fb.ops.binary("ge", size, 0, loc),
             fb.ops.binary("le", _add(fb, offset, size, node), length, loc)]  # fmt: skip
    _assert(fb, conds, msg, (offset, size, length), node)


def _subview_message(fb: FrontendBuilder) -> str:
    kernel, stack = _callstack(fb)
    return (f"BufferView subview Out Of Range: kernel[{kernel}] tid=n/a, subview offset=%d, subview size=%d, "
            f"parent size=%d.\nCallstack:\n{stack}")  # fmt: skip


def _assert(fb: FrontendBuilder, conds: list[ir.Value], msg: str, values: tuple[Any, Any, Any], node: ast.AST) -> None:
    """One check site for all of `conds`; a failure reports the three values into `msg`'s `%d`s."""
    loc = fb.loc(node)
    site = len(fb.kernel.sites)
    fb.kernel.sites.append(fb.site("formatted", loc, msg))
    index, a, b = (_as_i32(fb, x, node) for x in values)
    for c in conds:
        fb.b.emit(ir.Assert(cond=fb.ops.cond(c, loc), site=site, index=index, extra=(a, b)))


def _callstack(fb: FrontendBuilder) -> tuple[str, str]:
    """The kernel's name, and the kernel and the funcs inlined down to here, one per line, indented by depth:
    `name (file:line of its def)`."""
    frames = []
    for fr in fb.frames:
        loc = fr.source.loc(fr.source.tree)
        frames.append(f"{fr.source.fn.__name__} ({loc.filename}:{loc.lineno})")
    stack = "\n".join("  " * depth + f for depth, f in enumerate(frames))
    return fb.frames[0].source.fn.__name__, stack
