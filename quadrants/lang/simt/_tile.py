"""Register tiles: `qd.simt.Tile16x16` and `qd.simt.Tile32x32`, an N x N matrix spread over N lanes of a subgroup,
one row per lane in N registers (an unpacked vector member `r`), the lanes exchanging values by shuffles only.

A tile type is a `@qd.dataclass` per (N, dtype) (`_make_tile`, cached), marked `__qd_tile__` so that the frontend
turns the slice syntax around it into calls of its methods (frontend/tiles.py): `t[:] = arr[r0:r1, c0:c1]`
(`_load`), `arr[r0:r1, c0:c1] = t` (`_store`), `t -= qd.outer(a, b)` (`_ger_sub`); a 3-D array takes a batch
index first. Lane `i` owns row `r0 + i`; rows past `r1` or the array, and columns past `c1` or the array, are
left alone. `cholesky_(eps)` factors in place (the lower triangle becomes L with L L^T = A, each pivot
sqrt(max(a - l.l, eps)) with `eps` read on the pivot's own lane); `L.solve_triangular_(B)` solves X L^T = B
into B. The proxies `qd.simt.Tile16x16` / `Tile32x32` make tiles of a dtype chosen where they are used
(`Tile16x16.zeros(dtype=qd.f64)`, default: the program's default float) and refuse the CPU backend.
"""

# mypy: disable-error-code="valid-type, operator, no-any-return, attr-defined, index"
# (no `from __future__ import annotations`: the tile class's member annotation names the factory's locals)


from typing import Any

from quadrants.errors import QuadrantsSyntaxError, QuadrantsTypeError
from quadrants.frontend.func import func
from quadrants.frontend.intrinsics import cast, max, select, sqrt, static
from quadrants.frontend.tiles import ColumnSlice as _VecSliceProxy  # noqa: F401  - Quadrants' private names
from quadrants.frontend.tiles import OuterProduct as _OuterProduct  # noqa: F401
from quadrants.frontend.tiles import TileSlice as _TileSliceProxy  # noqa: F401
from quadrants.lang.simt._lanes import invocation_id, shuffle
from quadrants.types.annotations import template
from quadrants.types.compound import vector
from quadrants.types.dtypes import i32, u32
from quadrants.types.struct import StructType


class TileType(StructType):
    """The struct type of a tile (a StructType with the tile's constants: `SIZE`, `zeros`, `eye`)."""

    __qd_tile__ = True


_tile_cache: dict[tuple[int, Any], TileType] = {}


def _make_tile(N: int, dtype: Any = None) -> TileType:  # noqa: N803  - the tile's size, as written in the docs
    """The tile type of N x N values of `dtype` (f32 when None), one per (N, dtype)."""
    from quadrants.types.dtypes import f32, to_dtype

    dt = f32 if dtype is None else to_dtype(dtype)
    key = (N, dt)
    if key not in _tile_cache:
        _tile_cache[key] = _tile_class(N, dt)
    return _tile_cache[key]


def _tile_class(N: int, dtype: Any) -> TileType:  # noqa: N803, C901  - one method per operation, as a class has
    from quadrants.lang.struct import dataclass

    class _Tile:
        r: vector(N, dtype, unpacked=True)

        @func
        def _load(self, arr: template(), row_start, row_stop, col_start, col_stop):
            row, cols = _clip(arr.shape[0], arr.shape[1], row_start, row_stop, col_stop)
            if row >= 0:
                for j in static(range(N)):
                    if col_start + j < cols:
                        self.r[j] = arr[row, col_start + j]

        @func
        def _load3d(self, arr: template(), batch, row_start, row_stop, col_start, col_stop):
            row, cols = _clip(arr.shape[1], arr.shape[2], row_start, row_stop, col_stop)
            if row >= 0:
                for j in static(range(N)):
                    if col_start + j < cols:
                        self.r[j] = arr[batch, row, col_start + j]

        @func
        def _store(self, arr: template(), row_start, row_stop, col_start, col_stop):
            row, cols = _clip(arr.shape[0], arr.shape[1], row_start, row_stop, col_stop)
            if row >= 0:
                for j in static(range(N)):
                    if col_start + j < cols:
                        arr[row, col_start + j] = self.r[j]

        @func
        def _store3d(self, arr: template(), batch, row_start, row_stop, col_start, col_stop):
            row, cols = _clip(arr.shape[1], arr.shape[2], row_start, row_stop, col_stop)
            if row >= 0:
                for j in static(range(N)):
                    if col_start + j < cols:
                        arr[batch, row, col_start + j] = self.r[j]

        @func
        def _resolve_vec2d(self, arr: template(), row_start, row_stop, col):
            """This lane's element of column `col` (0 past `row_stop` or the array)."""
            row, _ = _clip(arr.shape[0], 0, row_start, row_stop, 0)
            v = cast(0, dtype)
            if row >= 0:
                v = cast(arr[row, col], dtype)
            return v

        @func
        def _resolve_vec3d(self, arr: template(), batch, row_start, row_stop, col):
            row, _ = _clip(arr.shape[1], 0, row_start, row_stop, 0)
            v = cast(0, dtype)
            if row >= 0:
                v = cast(arr[batch, row, col], dtype)
            return v

        @func
        def eye_(self):
            """The identity, in place."""
            lane = invocation_id()
            for j in static(range(N)):
                self.r[j] = select(lane == j, cast(1, dtype), cast(0, dtype))

        @func
        def _ger_sub(self, a, b):
            """self -= a b^T: this lane holds a_i; b_j comes from lane j."""
            for j in static(range(N)):
                self.r[j] = self.r[j] - cast(a, dtype) * shuffle(cast(b, dtype), u32(j))

        @func
        def _get_col(self, k):
            """Register `k` (a run-time index) of this lane's row."""
            v = cast(0, dtype)
            for j in static(range(N)):
                if k == j:
                    v = self.r[j]
            return v

        @func
        def _set_col(self, k, value):
            for j in static(range(N)):
                if k == j:
                    self.r[j] = value

        @func
        def cholesky_(self, eps):
            """In place: the lower triangle becomes L with L L^T = A (the strict upper triangle keeps A's)."""
            lane = cast(invocation_id(), i32)
            for k in static(range(N)):
                dot = cast(0, dtype)  # sum over j < k of L[lane, j] * L[k, j]
                for j in static(range(k)):
                    dot += self.r[j] * shuffle(self.r[j], u32(k))
                pivot = cast(0, dtype)
                if lane == k:
                    pivot = sqrt(max(self.r[k] - dot, cast(eps, dtype)))
                    self.r[k] = pivot
                pivot = shuffle(pivot, u32(k))
                if lane > k:
                    self.r[k] = (self.r[k] - dot) / pivot

        @func
        def _trsm(self, L: template()):
            """In place: self becomes X with X L^T = self (L lower triangular, non-singular)."""
            for c in static(range(N)):
                dot = cast(0, dtype)
                for j in static(range(c)):
                    dot += self.r[j] * shuffle(L.r[j], u32(c))
                self.r[c] = (self.r[c] - dot) / shuffle(L.r[c], u32(c))

        @func
        def solve_triangular_(self, B: template(), lower: template() = True):
            """B becomes X with X self^T = B (self lower triangular, as cholesky_ leaves it)."""
            static(_only_lower(lower, N))
            B._trsm(self)

    t = dataclass(_Tile)
    tile = TileType(t.members, t.methods, f"Tile{N}x{N}", t.python_methods)
    object.__setattr__(tile, "_unpacked_groups", t._unpacked_groups)  # `r`: registers _r0.._r{N-1}
    object.__setattr__(tile, "SIZE", N)  # (types are immutable: these are set once, here)
    object.__setattr__(tile, "zeros", tile)  # `Tile.zeros()`: a zero tile, as `Tile()`

    @func
    def eye():
        t = tile()
        t.eye_()
        return t

    object.__setattr__(tile, "eye", eye)
    return tile


@func
def _clip(rows, cols, row_start, row_stop, col_stop):
    """(this lane's row, or -1 past `row_stop` or the array's rows; the column bound, within the array's)."""
    lane = cast(invocation_id(), i32)
    row = row_start + lane
    stop = row_stop if row_stop < rows else rows
    return select(row < stop, row, -1), col_stop if col_stop < cols else cols


def _only_lower(lower: Any, n: int) -> bool:
    if not lower:
        raise QuadrantsTypeError(f"Tile{n}x{n}.solve_triangular_: only lower=True is supported")
    return True


def _tile_type(n: int, dtype: Any) -> TileType:
    """A proxy's tile type at compile time: the GPU backend's only; `dtype` None is the program's default float."""
    from quadrants.lang import program

    cfg = program.current_config()
    arch = cfg.arch if cfg is not None else None
    if arch is None or arch.name != "cuda":
        raise QuadrantsSyntaxError(f"Tile{n}x{n} requires a GPU backend (cuda; registers are spread over a subgroup's "
                                   f"lanes). Current arch is {getattr(arch, 'name', arch)}.")  # fmt: skip
    return _make_tile(n, cfg.default_fp if dtype is None else dtype)  # type: ignore[union-attr]


class _TileProxy:
    """`qd.simt.Tile16x16` / `Tile32x32`: `SIZE`, and `zeros(dtype=None)` / `eye(dtype=None)` in kernels."""

    def __init__(self, n: int) -> None:
        self.SIZE = n

        @func
        def zeros(dtype: template() = None):
            return static(_tile_type(n, dtype))()

        @func
        def eye(dtype: template() = None):
            return static(_tile_type(n, dtype)).eye()

        self.zeros, self.eye = zeros, eye

    def __repr__(self) -> str:
        return f"<qd.simt.Tile{self.SIZE}x{self.SIZE}>"

    def __qd_fingerprint__(self) -> str:
        """What a fastcache kernel that names this proxy is checked against: the proxy is code (the package's)."""
        return f"qd.simt.Tile{self.SIZE}x{self.SIZE}"


Tile16x16 = _TileProxy(16)
Tile32x32 = _TileProxy(32)
