"""Python-scope access to fields of sparse SNode trees, and deactivating whole trees.

A sparse tree's cells are not one array in memory (pointer cells live in pools), so Python scope reads and
writes through kernels, as Quadrants does: `to_numpy` reads every index (inactive cells give zeros),
`from_numpy` and `x[idx] = v` write (so activate), `fill` writes the active cells only (a struct-for). The
kernels see an element as a flat run of `ncomp` scalars of a 1-d ndarray.

`deactivate_all(tree, node)`: from the root, the whole tree is reset by the host: its pools' chunks go back to
the system on the CPU, its arena is zeroed and carves from its start again on a device (runtime/sparse.py); a
node below the root deactivates its active cells with a kernel, which
recycles them (its pools keep their chunks, as Quadrants' `_num_dynamically_allocated` counts).
"""

# mypy: disable-error-code="valid-type"
# (the kernels' annotations are Quadrants types, and their bodies kernel-language code)
from __future__ import annotations

from functools import cache
from math import prod
from typing import Any

import numpy as np

from quadrants.lang import program


def _language() -> Any:
    """The names these kernels spell `qd.<name>`, taken from their own modules (lang does not import the package)."""
    from types import SimpleNamespace

    from quadrants import types
    from quadrants.frontend import intrinsics
    from quadrants.frontend.func import func
    from quadrants.lang.kernel import kernel
    from quadrants.lang.matrix import Vector
    from quadrants.types.annotations import template

    return SimpleNamespace(Vector=Vector, deactivate=intrinsics.deactivate, func=func, grouped=intrinsics.grouped,
                           kernel=kernel, ndrange=intrinsics.ndrange, static=intrinsics.static, template=template,
                           types=types)  # fmt: skip


@cache
def _kernels() -> Any:
    qd = _language()

    @qd.func
    def _put(x: qd.template(), idx: qd.template(), flat: qd.template(), lin: qd.template(), es: qd.template()):
        if qd.static(len(es) == 0):
            flat[lin] = x[idx]
        elif qd.static(len(es) == 1):
            for c in qd.static(range(es[0])):
                flat[lin * es[0] + c] = x[idx][c]
        else:
            for a in qd.static(range(es[0])):
                for c in qd.static(range(es[1])):
                    flat[(lin * es[0] + a) * es[1] + c] = x[idx][a, c]

    @qd.func
    def _take(x: qd.template(), idx: qd.template(), flat: qd.template(), lin: qd.template(), es: qd.template()):
        if qd.static(len(es) == 0):
            x[idx] = flat[lin]
        elif qd.static(len(es) == 1):
            for c in qd.static(range(es[0])):
                x[idx][c] = flat[lin * es[0] + c]
        else:
            for a in qd.static(range(es[0])):
                for c in qd.static(range(es[1])):
                    x[idx][a, c] = flat[(lin * es[0] + a) * es[1] + c]

    @qd.kernel
    def read_all(x: qd.template(), flat: qd.types.ndarray(), bounds: qd.template(), es: qd.template()):
        for idx in qd.grouped(qd.ndrange(*bounds)):
            lin = 0
            for k in qd.static(range(len(bounds))):
                lin = lin * (bounds[k][1] - bounds[k][0]) + (idx[k] - bounds[k][0])
            _put(x, idx, flat, lin, es)

    @qd.kernel
    def write_all(x: qd.template(), flat: qd.types.ndarray(), bounds: qd.template(), es: qd.template()):
        for idx in qd.grouped(qd.ndrange(*bounds)):
            lin = 0
            for k in qd.static(range(len(bounds))):
                lin = lin * (bounds[k][1] - bounds[k][0]) + (idx[k] - bounds[k][0])
            _take(x, idx, flat, lin, es)

    @qd.func
    def _at(at: qd.template(), nd: qd.template()):
        if qd.static(nd == 1):
            return qd.Vector([at[0]])
        elif qd.static(nd == 2):
            return qd.Vector([at[0], at[1]])
        elif qd.static(nd == 3):
            return qd.Vector([at[0], at[1], at[2]])
        else:
            return qd.Vector([at[0], at[1], at[2], at[3]])

    @qd.kernel
    def read_at(x: qd.template(), at: qd.types.ndarray(), flat: qd.types.ndarray(), nd: qd.template(),
                es: qd.template()):
        _put(x, _at(at, nd), flat, 0, es)

    @qd.kernel
    def write_at(x: qd.template(), at: qd.types.ndarray(), flat: qd.types.ndarray(), nd: qd.template(),
                 es: qd.template()):
        _take(x, _at(at, nd), flat, 0, es)

    @qd.kernel
    def read_0d(x: qd.template(), flat: qd.types.ndarray(), es: qd.template()):
        _put(x, None, flat, 0, es)

    @qd.kernel
    def write_0d(x: qd.template(), flat: qd.types.ndarray(), es: qd.template()):
        _take(x, None, flat, 0, es)

    @qd.kernel
    def fill_active(x: qd.template(), flat: qd.types.ndarray(), es: qd.template()):
        for idx in qd.grouped(x):
            _take(x, idx, flat, 0, es)

    @qd.kernel
    def deactivate_cells(node: qd.template()):
        for idx in qd.grouped(node):  # the active cells, at the node's resolution
            qd.deactivate(node, idx)

    return read_all, write_all, fill_active, deactivate_cells, read_at, write_at, read_0d, write_0d


def _bounds(f: Any) -> tuple[tuple[int, int], ...]:
    off = f.offset or (0,) * len(f.shape)
    return tuple((o, o + n) for o, n in zip(off, f.shape))


def to_numpy(f: Any) -> np.ndarray:
    if not f.shape:
        return np.asarray(get(f, ())).reshape(f.element_shape)
    flat = np.zeros(prod(f.shape) * prod(f.element_shape), f._prim.np_dtype)
    _kernels()[0](f, flat, _bounds(f), tuple(f.element_shape))
    return flat.reshape(f.shape + f.element_shape)


def from_numpy(f: Any, a: np.ndarray) -> None:
    if not f.shape:
        return set(f, (), a)
    flat = np.ascontiguousarray(a, dtype=f._prim.np_dtype).reshape(-1)
    _kernels()[1](f, flat, _bounds(f), tuple(f.element_shape))


def _at(f: Any, key: tuple[int, ...]) -> np.ndarray:
    if not 1 <= len(key) <= 4:
        raise NotImplementedError(f"Python-scope access to a {len(key)}-d field of a sparse tree (1 to 4 only)")
    off = f.offset or (0,) * len(f.shape)
    return np.array([k + o for k, o in zip(key, off)], np.int32)


def get(f: Any, key: tuple[int, ...]) -> Any:
    """The element at `key` (indices from 0, the field's offset removed): a scalar or an array."""
    flat = np.zeros(max(prod(f.element_shape), 1), f._prim.np_dtype)
    if not key:  # a 0-d field (of bits: lang/bitpacked.py)
        _kernels()[6](f, flat, tuple(f.element_shape))
    else:
        _kernels()[4](f, _at(f, key), flat, len(key), tuple(f.element_shape))
    if f._prim.is_float:  # Quadrants' Python-scope read gives a denormal as a zero of its sign
        tiny = np.finfo(flat.dtype).tiny
        flat = np.where(np.abs(flat) < tiny, np.copysign(np.zeros_like(flat), flat), flat)
    return flat[0] if not f.element_shape else flat.reshape(f.element_shape)


def _elements(f: Any, value: Any) -> np.ndarray:
    """`value` as the field's flat elements. An integer out of the dtype's range wraps, as an assignment into a
    dense field's array does and as Quadrants' Python-scope writes do (`b[None] = -64` into a 7-bit unsigned
    quant field stores 64)."""
    a = np.asarray(value).astype(f._prim.np_dtype)  # a cast, unlike np.asarray(value, dtype), wraps
    return np.broadcast_to(a, f.element_shape).reshape(-1).copy()


def set(f: Any, key: tuple[int, ...], value: Any) -> None:  # noqa: A001 - Field.__setitem__'s counterpart
    flat = _elements(f, value)
    if not key:
        _kernels()[7](f, flat, tuple(f.element_shape))
    else:
        _kernels()[5](f, _at(f, key), flat, len(key), tuple(f.element_shape))


def fill(f: Any, value: Any) -> None:
    if not f.shape:
        return set(f, (), value)
    flat = _elements(f, value)
    _kernels()[2](f, flat, tuple(f.element_shape))


def deactivate_all(tree: Any, node: Any) -> None:
    """Deactivate every cell under `node` of sparse tree `tree`."""
    if node.kind == "root":
        from quadrants.runtime import sparse as runtime

        fields = program.get().fields
        if fields.regions[tree.region].buffer is None:
            return  # never used: nothing was allocated
        buf = fields.materialize(tree.region)
        runtime.reset(fields.memory, buf, tree.base, tree.sparse.size, [p[0] for p in tree.sparse.pools],
                      tree.sparse.arena)  # fmt: skip
        return
    if node.kind == "place":
        node = node.parent()
    if node.kind == "dense":  # its cells are always active: deactivate those of its sparse children
        for child in node.children:
            if child.kind != "place":
                deactivate_all(tree, child)
        return
    _kernels()[3](node)  # its cells go to their pools' free lists, for the next activations


def release(tree: Any) -> None:
    """A destroyed tree's pool chunks go back to the system."""
    deactivate_all(tree, tree.builder.root)
