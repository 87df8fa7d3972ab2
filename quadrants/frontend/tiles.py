"""Register tiles in kernels (`qd.simt.Tile16x16` / `Tile32x32`: quadrants/lang/simt/_tile.py): the syntax around
a tile, turned into calls of its kernel-language methods.

- `arr[r0:r1, c0:c1]` / `arr[b, r0:r1, c0:c1]` of an ndarray, field or shared array is a `TileSlice`, and
  `arr[r0:r1, c]` / `arr[b, r0:r1, c]` a `ColumnSlice`: compile-time objects holding the evaluated bounds, valid
  only in tile operations (both start and stop required, no step, no negative constant);
- `t[:] = <TileSlice>` calls `t._load(...)` (`_load3d` with a batch index), `<TileSlice target> = t` calls
  `t._store(...)`;
- `t -= qd.outer(a, b)` calls `t._ger_sub(a, b)`, a `ColumnSlice` operand first read one element per lane
  (`t._resolve_vec2d(...)`).

A tile is a struct whose type is marked `__qd_tile__`; the calls are built as AST over temporary names bound to
the evaluated operands, so the tile's own funcs do the work.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any, NoReturn

from quadrants.errors import QuadrantsSyntaxError, QuadrantsTypeError
from quadrants.frontend.builder import FrontendBuilder
from quadrants.frontend.ndarrays import is_ndarray, ndarray_handle
from quadrants.frontend.scope import Fixed
from quadrants.frontend.values import Struct, is_runtime

_USES = "tile[:] = arr[r0:r1, c0:c1], arr[r0:r1, c0:c1] = tile, qd.outer(...)"


class _Deferred:
    """A tile operand that is not a value: using it as one is a TypeError saying so."""

    _description = "tile operand"

    def _misuse(self, what: str = "used") -> NoReturn:
        raise TypeError(f"{self._description} was {what}, but it is only valid in tile operations ({_USES})")

    def __add__(self, other: Any) -> NoReturn:
        self._misuse("added")

    def __radd__(self, other: Any) -> NoReturn:
        self._misuse("added")

    def __sub__(self, other: Any) -> NoReturn:
        self._misuse("subtracted")

    def __rsub__(self, other: Any) -> NoReturn:
        self._misuse("subtracted")

    def __mul__(self, other: Any) -> NoReturn:
        self._misuse("multiplied")

    def __rmul__(self, other: Any) -> NoReturn:
        self._misuse("multiplied")

    def __getitem__(self, key: Any) -> NoReturn:
        self._misuse("subscripted")

    def __repr__(self) -> str:
        return f"<{self._description} - not a value; use it in tile operations ({_USES})>"


@dataclass(eq=False, repr=False)
class TileSlice(_Deferred):
    """`arr[r0:r1, c0:c1]` (with `batch`: `arr[batch, r0:r1, c0:c1]`)."""

    arr: Any
    row_start: Any
    row_stop: Any
    col_start: Any
    col_stop: Any
    batch: Any = None
    _description = "array slice (arr[r0:r1, c0:c1])"


@dataclass(eq=False, repr=False)
class ColumnSlice(_Deferred):
    """`arr[r0:r1, col]` (with `batch`: `arr[batch, r0:r1, col]`): one element per lane, for `qd.outer`."""

    arr: Any
    row_start: Any
    row_stop: Any
    col: Any
    batch: Any = None
    _description = "column slice (arr[r0:r1, col])"


@dataclass(eq=False)
class OuterProduct:
    """`qd.outer(a, b)`: `a b^T`, deferred: only `tile -= qd.outer(a, b)` uses it."""

    a: Any
    b: Any

    def __add__(self, other: Any) -> NoReturn:
        raise TypeError("qd.outer(a, b) does not support composition; apply each update separately (t -= qd.outer(a, "
                        "b); t -= qd.outer(c, d))")  # fmt: skip

    __radd__ = __add__
    __sub__ = __add__
    __rsub__ = __add__


def is_tile(v: Any) -> bool:
    return isinstance(v, Struct) and getattr(v.cls, "__qd_tile__", False)


def has_slices(node: ast.Subscript) -> bool:
    items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
    return any(isinstance(e, ast.Slice) for e in items)


def array_slice(fb: FrontendBuilder, base: Any, node: ast.Subscript) -> TileSlice | ColumnSlice:
    """The tile slice `node` (a subscript with slices) of ndarray / field / shared array `base`."""
    items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
    kinds = [isinstance(e, ast.Slice) for e in items]
    ndim = ndarray_handle(fb, base).type.ndim  # type: ignore[union-attr]
    shapes = {(2, (True, True)), (3, (False, True, True)), (2, (True, False)), (3, (False, True, False))}
    if (ndim, tuple(kinds)) not in shapes:
        raise fb.error(node, "a tile slice of a 2-D array is arr[r0:r1, c0:c1] or arr[r0:r1, col], of a 3-D array "
                             "arr[b, r0:r1, c0:c1] or arr[b, r0:r1, col] (the batch index first)",
                       QuadrantsSyntaxError)  # fmt: skip
    batch = fb.expr(items[0]) if ndim == 3 else None
    rest = items[1:] if ndim == 3 else items
    r0, r1 = _bounds(fb, rest[0], "row")  # type: ignore[arg-type]
    if isinstance(rest[1], ast.Slice):
        c0, c1 = _bounds(fb, rest[1], "col")
        return TileSlice(base, r0, r1, c0, c1, batch)
    return ColumnSlice(base, r0, r1, fb.expr(rest[1]), batch)


def _bounds(fb: FrontendBuilder, s: ast.Slice, what: str) -> tuple[Any, Any]:
    if s.lower is None or s.upper is None:
        raise fb.error(s, f"Tile {what} slice: both start and stop indices are required (write a:b)",
                       QuadrantsSyntaxError)  # fmt: skip
    if s.step is not None:
        raise fb.error(s, f"Tile {what} slice: a step is not supported", QuadrantsSyntaxError)
    out = (fb.expr(s.lower), fb.expr(s.upper))
    if any(not is_runtime(v) and isinstance(v, int) and v < 0 for v in out):
        raise fb.error(s, f"Negative indices are not supported in a tile {what} slice (they do not count from the "
                          "end here)", QuadrantsSyntaxError)  # fmt: skip
    return out


def _call(fb: FrontendBuilder, owner: ast.expr | Any, method: str, args: list[Any], node: ast.AST) -> Any:
    """`owner.method(*args)` through the frontend: `owner` an AST expression (the user's tile variable, which the
    method may change) or a value; the operands are bound to temporary names."""
    scope = fb.new_scope()
    try:

        def bind(key: str, v: Any) -> ast.Name:
            name = f"__qd_tile_{key}"
            scope.names[name] = Fixed(v, "tile operand") if is_runtime(v) else v
            return ast.Name(id=name, ctx=ast.Load())

        target: ast.expr = owner if isinstance(owner, ast.expr) else bind("self", owner)
        names: list[ast.expr] = [bind(str(k), v) for k, v in enumerate(args)]
        call = ast.Call(func=ast.Attribute(value=target, attr=method, ctx=ast.Load()), args=names, keywords=[])
        for n in (call, call.func, *names, *([] if isinstance(owner, ast.expr) else [target])):
            ast.copy_location(n, node)
        return fb.expr(call)
    finally:
        fb.pop_scope(scope)


def _slice_operands(sl: TileSlice) -> tuple[str, list[Any]]:
    three = sl.batch is not None
    bounds = [sl.row_start, sl.row_stop, sl.col_start, sl.col_stop]
    return ("3d" if three else ""), [sl.arr, *([sl.batch] if three else []), *bounds]


def load(fb: FrontendBuilder, target: ast.expr, value: Any, node: ast.AST) -> None:
    """`t[:] = arr[r0:r1, c0:c1]` (`target` is `t`)."""
    if not isinstance(value, TileSlice):
        raise fb.error(node, f"a tile can only be loaded from an array slice (tile[:] = arr[r0:r1, c0:c1]), not "
                             f"{type(value).__name__}")  # fmt: skip
    suffix, args = _slice_operands(value)
    _call(fb, target, f"_load{suffix}", args, node)


def store(fb: FrontendBuilder, sl: TileSlice | ColumnSlice, value: Any, node: ast.AST) -> None:
    """`arr[r0:r1, c0:c1] = t`."""
    if not is_tile(value):
        raise fb.error(node, "an array slice can only be assigned a tile (arr[r0:r1, c0:c1] = tile)")
    if not isinstance(sl, TileSlice):
        raise fb.error(node, "a tile is stored to arr[r0:r1, c0:c1], not to a column slice")
    suffix, args = _slice_operands(sl)
    _call(fb, value, f"_store{suffix}", args, node)


def names_tile(fb: FrontendBuilder, target: ast.expr) -> bool:
    """Whether an augmented assignment's target is a name bound to a tile."""
    return isinstance(target, ast.Name) and is_tile(fb.frame.scope.find(target.id)[1])


def augassign(fb: FrontendBuilder, target: ast.expr, op: str, value: Any, node: ast.AST) -> None:
    """`t -= qd.outer(a, b)`: `t._ger_sub(a, b)`, column slices read one element per lane first; any other
    augmented assignment of a tile is an error."""
    if not isinstance(value, OuterProduct):
        raise fb.error(node, f"unsupported augmented assignment with a tile ({type(value).__name__}): a tile takes only "
                             "t -= qd.outer(a, b)", QuadrantsTypeError)  # fmt: skip
    if op != "sub":
        raise fb.error(node, f"unsupported augmented assignment op {op!r} with qd.outer(a, b): a tile takes it only "
                             "through -= (t -= qd.outer(a, b))", QuadrantsTypeError)  # fmt: skip
    tile = fb.expr(target)
    if not is_tile(tile):
        raise fb.error(node, "qd.outer(a, b) updates a tile (t -= qd.outer(a, b)); this target is not one",
                       QuadrantsTypeError)  # fmt: skip

    def element(v: Any) -> Any:
        if not isinstance(v, ColumnSlice):
            return v
        three = v.batch is not None
        args = [v.arr, *([v.batch] if three else []), v.row_start, v.row_stop, v.col]
        return _call(fb, tile, f"_resolve_vec{'3d' if three else '2d'}", args, node)

    a = element(value.a)
    b = a if value.b is value.a else element(value.b)
    _call(fb, target, "_ger_sub", [a, b], node)


def outer(fb: FrontendBuilder, node: ast.Call, name: str, a: Any, b: Any) -> OuterProduct:
    """`qd.outer(a, b)` in a kernel."""
    if is_ndarray(a) or is_ndarray(b):
        raise fb.error(node, "qd.outer takes one value per lane or a column slice arr[r0:r1, col], not an array")
    return OuterProduct(a, b)
