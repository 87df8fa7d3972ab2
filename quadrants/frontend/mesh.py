"""Meshes in kernels: the elements a mesh-for binds (`for v in mesh.verts:`), their attributes, ids and relations.

A mesh (lang/mesh.py) reaches a kernel as a `MeshView` (types/mesh.py): i32 index fields and one field per
attribute. Nothing mesh-specific reaches the IR: an element is compile-time data holding IR values (its patch, its
local index in the patch and the patch's offset into the index arrays), and each use is loads from the fields:

- the mesh-for (loops.py) walks the owned elements in patch order as one flat parallel range: slot r belongs to
  patch `owner[r]`, at local index `r - owned[p]`;
- `v.id` is `l2g[total[p] + l]`; attribute `v.x` is element `l2g[...]` of its field (`l2r[...]` when stored
  reordered), readable, assignable and updatable (atomically, as any field element of a parallel loop);
- `v.cells` is a relation: `.size`, `v.cells[j]` (another element of the same patch) and `for c in v.cells`;
- `qd.mesh_patch_idx()` is the innermost mesh-for's patch; `qd.mesh_local(...)` is a caching hint (no effect).

A lower-to-higher relation (vertex -> cells) has rows for owned elements only. Of an element reached through
another relation (which may be a ghost copy from a neighbouring patch) it reads as empty when that element is a
ghost, where Quadrants reads another row; a mesh-for's own element is always owned.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any

from quadrants.errors import QuadrantsSyntaxError
from quadrants.frontend.builder import FrontendBuilder
from quadrants.frontend.operators import binary
from quadrants.frontend.refs import MatrixRef, ScalarRef, load_ref
from quadrants.frontend.structs import element_ref
from quadrants.ir import nodes as ir
from quadrants.types.dtypes import i32
from quadrants.types.mesh import ELEMENT_NAMES, MeshView, RelationView, fixed_relation_size


def elements_of(v: Any) -> tuple[MeshView, int] | None:
    """(the mesh, the element order) of an element set a mesh-for may loop over (`mesh.verts`), else None."""
    get = getattr(type(v), "__qd_mesh_elements__", None)
    return get(v) if get is not None else None  # type: ignore[no-any-return]


@dataclass(eq=False)
class Element:
    mesh: MeshView
    order: int
    local: Any  # i32: its index in its patch's run of elements (owned ones first)
    patch: Any  # i32
    base: Any  # i32: the patch's offset into this element type's per-patch arrays (total_offsets[patch])
    owned: bool  # known to be owned by the patch (a mesh-for's own element); else maybe a ghost

    def __repr__(self) -> str:
        return f"<mesh {ELEMENT_NAMES[self.order]} element in a kernel>"


@dataclass(eq=False)
class Relation:
    source: Element
    to_order: int
    view: RelationView

    def __repr__(self) -> str:
        return f"<mesh relation {ELEMENT_NAMES[self.source.order]} -> {ELEMENT_NAMES[self.to_order]} in a kernel>"


def _load(fb: FrontendBuilder, field: Any, index: Any, node: ast.AST, what: str) -> ir.Value:
    """Element `index` of one of the mesh's i32 index fields (`what` names it in bounds-check messages)."""
    return load_ref(fb, element_ref(fb, field, [_i32(fb, index, node)], _site(node, what)), node)  # type: ignore[no-any-return]


def _i32(fb: FrontendBuilder, v: Any, node: ast.AST) -> ir.Value:
    return fb.ops.cast(v, i32, fb.loc(node))


def _site(node: ast.AST, what: str) -> ast.Subscript:
    """A subscript node at `node`'s place whose text names the array (element_ptrs_at reports it)."""
    sub = ast.Subscript(value=ast.Name(id=what, ctx=ast.Load()), slice=ast.Name(id="i", ctx=ast.Load()), ctx=ast.Load())
    for n in ast.walk(sub):
        ast.copy_location(n, node)
    return sub


def loop_element(fb: FrontendBuilder, mesh: MeshView, order: int, slot: Any, node: ast.AST) -> Element:
    """The element at `slot` of a mesh-for over `order`: the owned elements, patch after patch."""
    ev = mesh.elements[order]
    name = ELEMENT_NAMES[order]
    patch = _load(fb, ev.owner, slot, node, f"mesh.{name}(patch of slot)")
    local = binary(fb, "sub", _i32(fb, slot, node), _load(fb, ev.owned, patch, node, f"mesh.{name}(owned offsets)"), node)
    return Element(mesh, order, local, patch, _load(fb, ev.total, patch, node, f"mesh.{name}(total offsets)"), True)


def _index(fb: FrontendBuilder, el: Element, node: ast.AST) -> Any:
    return binary(fb, "add", el.base, el.local, node)


def attribute(fb: FrontendBuilder, el: Element, attr: str, node: ast.AST) -> Any:
    """`v.id`, `v.verts` (a relation) or an attribute's value `v.x`."""
    if attr == "id":  # the global index (before any reordering)
        return _load(fb, el.mesh.elements[el.order].l2g, _index(fb, el, node), node, "mesh(l2g)")
    if attr in ELEMENT_NAMES:
        to = ELEMENT_NAMES.index(attr)
        view = el.mesh.relations.get((el.order, to))
        if view is None:
            held = ", ".join(f"{ELEMENT_NAMES[a]}.{ELEMENT_NAMES[b]}" for a, b in sorted(el.mesh.relations)) or "none"
            raise fb.error(node, f"this mesh has no {ELEMENT_NAMES[el.order]} -> {attr} relation (its metadata "
                                 f"holds: {held})", QuadrantsSyntaxError)  # fmt: skip
        return Relation(el, to, view)
    return load_ref(fb, attribute_ref(fb, el, attr, node), node)


def attribute_ref(fb: FrontendBuilder, el: Element, attr: str, node: ast.AST) -> ScalarRef | MatrixRef:
    """The memory of attribute `v.x` of an element: to read, assign or update."""
    ev = el.mesh.elements[el.order]
    name = ELEMENT_NAMES[el.order]
    if attr not in ev.attrs:
        if attr == "id" or attr in ELEMENT_NAMES:
            raise fb.error(node, f"cannot assign to {attr!r} of a mesh element")
        raise fb.error(node, f"mesh {name} have no attribute {attr!r} (placed: {', '.join(ev.attrs) or 'none'})",
                       QuadrantsSyntaxError)  # fmt: skip
    field, reorder = ev.attrs[attr]
    index = _load(fb, ev.l2r if reorder else ev.l2g, _index(fb, el, node), node, f"mesh.{name}(l2r)" if reorder
                  else f"mesh.{name}(l2g)")  # fmt: skip
    return element_ref(fb, field, [index], _site(node, f"mesh.{name}.{attr}"))


def relation_attribute(fb: FrontendBuilder, rel: Relation, attr: str, node: ast.AST) -> Any:
    if attr != "size":
        raise fb.error(node, f"a mesh relation has no attribute {attr!r} (it has size, and [j] for a neighbour)")
    return relation_size(fb, rel, node)


def relation_size(fb: FrontendBuilder, rel: Relation, node: ast.AST) -> Any:
    """How many neighbours: a constant for a higher-to-lower relation, the CSR row's length otherwise."""
    if rel.view.fixed:
        return fixed_relation_size(rel.source.order, rel.to_order)
    start, end = _row(fb, rel, node)
    return binary(fb, "sub", end, start, node)


def _row(fb: FrontendBuilder, rel: Relation, node: ast.AST) -> tuple[Any, Any]:
    """[start, end) of the source element's row of a lower-to-higher relation, relative to the patch's values;
    empty for a ghost element (only owned elements have rows)."""
    el, view = rel.source, rel.view
    owned = el.mesh.elements[el.order].owned
    first = _load(fb, owned, el.patch, node, "mesh(owned offsets)")
    row0 = binary(fb, "add", el.patch, first, node)  # the patch's first row: rows are per owned element + 1
    k = binary(fb, "add", row0, el.local, node)
    inside = None
    if not el.owned:
        count = binary(fb, "sub", _load(fb, owned, binary(fb, "add", el.patch, 1, node), node, "mesh(owned offsets)"),
                       first, node)  # fmt: skip
        inside = binary(fb, "lt", el.local, count, node)
        k = fb.ops.select(inside, k, row0, fb.loc(node))  # a ghost reads the patch's first row, then empties it
    start = _load(fb, view.offset, k, node, "mesh relation(offset)")
    end = _load(fb, view.offset, binary(fb, "add", k, 1, node), node, "mesh relation(offset)")
    if inside is not None:
        end = fb.ops.select(inside, end, start, fb.loc(node))
    return start, end


def neighbour(fb: FrontendBuilder, rel: Relation, j: Any, node: ast.AST) -> Element:
    """`v.cells[j]`: the j-th element of the relation, in the same patch."""
    el, view, to = rel.source, rel.view, rel.to_order
    if view.fixed:
        size = fixed_relation_size(el.order, to)
        at = binary(fb, "add", binary(fb, "mul", _index(fb, el, node), size, node), j, node)
    else:
        start, _ = _row(fb, rel, node)
        at = binary(fb, "add", binary(fb, "add", _load(fb, view.patch_offset, el.patch, node, "mesh relation"
                                                       "(patch_offset)"), start, node), j, node)  # fmt: skip
    local = _load(fb, view.value, at, node, f"mesh relation {ELEMENT_NAMES[el.order]}.{ELEMENT_NAMES[to]}")
    base = _load(fb, el.mesh.elements[to].total, el.patch, node, "mesh(total offsets)")
    return Element(el.mesh, to, local, el.patch, base, owned=False)


def patch_index(fb: FrontendBuilder, node: ast.AST) -> Any:
    """`qd.mesh_patch_idx()`: the patch of the innermost mesh-for's element."""
    if not fb.mesh_patches:
        raise fb.error(node, "qd.mesh_patch_idx() is only valid inside a mesh-for loop (`for v in mesh.verts:`)")
    return fb.mesh_patches[-1]


def mesh_local(fb: FrontendBuilder, node: ast.Call, name: str, *args: Any) -> None:
    """`qd.mesh_local(attr, ...)`: Quadrants caches these attributes in a block's shared memory for the mesh-fors
    that follow; a hint, with the same results without it."""
    if not all(getattr(a, "__qd_field__", None) is not None for a in args):
        raise fb.error(node, "qd.mesh_local() takes mesh attributes or fields")
