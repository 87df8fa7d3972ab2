"""Mesh topology names and the kernel's view of a mesh (lang/mesh.py builds it, frontend/mesh.py reads it).

A mesh (Quadrants' MeshTaichi) has four element types, by order: vertices 0, edges 1, faces 2, cells 3. Its
metadata (a patcher's JSON) splits the elements into patches. Each element is *owned* by one patch; a patch also
holds *ghost* copies of the elements its owned ones touch. Inside patch p, an element has a local index l into
the patch's run of `total` elements (owned ones first, at `l < owned count`):

- `l2g[total[p] + l]`: its global index (what `v.id` returns); `l2r[total[p] + l]`: its index in reordered
  storage (owned elements patch by patch); `g2r[g]`: global to reordered.
- A relation from order a to order b holds patch-local indices of the b elements. From higher to lower order
  (cell -> vertices) it is fixed-size: `value[(total_a[p] + l) * size + j]`, size = a + 1 (cell -> edges: 6).
  Otherwise it is a CSR per patch, for owned elements only: `k = p + owned_a[p] + l`, neighbours
  `value[patch_offset[p] + offset[k] + j]` for `j < offset[k + 1] - offset[k]`.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any

ELEMENT_NAMES = ("verts", "edges", "faces", "cells")  # by order: the attribute names of a mesh and an element


class MeshTopology(enum.IntEnum):
    Triangle = 3
    Tetrahedron = 4


class MeshElementType(enum.IntEnum):
    Vertex = 0
    Edge = 1
    Face = 2
    Cell = 3


class MeshRelationType(enum.IntEnum):
    VV, VE, VF, VC, EV, EE, EF, EC, FV, FE, FF, FC, CV, CE, CF, CC = range(16)


class ConvType(enum.IntEnum):
    l2g = 0
    l2r = 1
    g2r = 2


def element_order(t: MeshElementType) -> int:
    return int(t)


def element_type_name(t: MeshElementType) -> str:
    return ELEMENT_NAMES[int(t)]


def relation_by_orders(from_order: int, to_order: int) -> MeshRelationType:
    return MeshRelationType(from_order * 4 + to_order)


def from_end_element_order(rel: MeshRelationType) -> int:
    return int(rel) // 4


def to_end_element_order(rel: MeshRelationType) -> int:
    return int(rel) % 4


def inverse_relation(rel: MeshRelationType) -> MeshRelationType:
    return relation_by_orders(to_end_element_order(rel), from_end_element_order(rel))


def fixed_relation_size(from_order: int, to_order: int) -> int:
    """Neighbours per element of a higher-to-lower relation: a simplex of order a has a + 1 vertices, a + 1
    facets, and a tetrahedron 6 edges."""
    return 6 if (from_order, to_order) == (3, 1) else from_order + 1


# ---- the kernel's view ----------------------------------------------------------------------------------------


@dataclass(eq=False)
class ElementView:
    """One element type of a built mesh: its index fields (i32 fields of the program) and attributes."""

    order: int
    num: int  # elements in all (each owned by one patch)
    owned: Any  # owned_offsets, num_patches + 1
    total: Any  # total_offsets, num_patches + 1
    l2g: Any
    l2r: Any
    owner: Any  # for each slot r of the owned elements in patch order: the patch that owns it (mesh-for's index)
    attrs: dict[str, tuple[Any, bool]] = field(default_factory=dict)  # name -> (its field, stored reordered)


@dataclass(eq=False)
class RelationView:
    from_order: int
    to_order: int
    value: Any
    offset: Any = None  # the CSR of a lower-to-higher (or same-order) relation
    patch_offset: Any = None

    @property
    def fixed(self) -> bool:
        return self.from_order > self.to_order


@dataclass(eq=False)
class MeshView:
    num_patches: int
    elements: dict[int, ElementView]
    relations: dict[tuple[int, int], RelationView]
