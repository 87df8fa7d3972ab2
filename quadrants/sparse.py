"""`qd.sparse`: Quadrants' helpers over sparse SNode trees: `grid` (a struct field on a bitmasked level) and
`usage` (the fraction of its cells that are active)."""

# mypy: disable-error-code="valid-type"
# (the kernel's annotations are Quadrants types). No names beyond grid and usage (`dir(qd.sparse)`, as in
# Quadrants): no `from __future__ import annotations`, the imports under leading underscores.
from functools import cache as _cache
from math import prod as _prod
from typing import Any as _Any


def grid(members: dict[str, _Any], shape: _Any) -> _Any:
    """A 2-d or 3-d struct field of `members` placed on one bitmasked level of `shape` (cells activate when
    written)."""
    import quadrants as qd

    shape = tuple(int(s) for s in shape)
    if len(shape) not in (2, 3):
        raise ValueError(f"qd.sparse.grid makes 2-d and 3-d grids, not {len(shape)}-d ones")
    x = qd.Struct.field(members)
    qd.root.bitmasked(qd.ij if len(shape) == 2 else qd.ijk, shape).place(x)
    return x


@_cache
def _count() -> _Any:
    import quadrants as qd

    @qd.kernel
    def count(node: qd.template()) -> qd.i32:
        n = 0
        for _ in qd.grouped(node):
            n += 1
        return n

    return count


def usage(x: _Any) -> float:
    """Active cells of the grid `x` over all its cells, in [0, 1]."""
    return float(_count()(x.parent())) / _prod(x.shape)
