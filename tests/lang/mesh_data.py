"""A tetrahedral mesh of a box and its patcher metadata, made here for the mesh tests (tests/lang/test_mesh.py).

`Topology` holds every element of the mesh by global id and every relation between element orders as lists of
global ids: the oracle the kernels' results are checked against. `metadata(topology, patches)` writes what a
patcher (meshtaichi's) writes: the cells cut into `patches` runs, every element owned by one patch, each patch
also holding ghost copies of the elements its owned ones reach, local indices per patch (owned first, here in
descending global order so that local, global and reordered indices all differ), reordered indices patch by
patch, fixed-size rows for higher-to-lower relations and per-patch CSR rows for the others.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np

CELL_EDGES = ((0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3))
CELL_FACES = ((1, 2, 3), (0, 2, 3), (0, 1, 3), (0, 1, 2))
FACE_EDGES = ((0, 1), (0, 2), (1, 2))


class Topology:
    """Elements by order (0 verts, 1 edges, 2 faces, 3 cells) and `rel[(a, b)][e]`: the global ids of the order-b
    elements related to element e of order a (a fixed order for a > b; ascending ids otherwise)."""

    def __init__(self, positions: np.ndarray, tets: np.ndarray) -> None:
        self.positions = positions
        edges: dict[tuple[int, ...], int] = {}
        faces: dict[tuple[int, ...], int] = {}
        down: dict[tuple[int, int], list[list[int]]] = {(3, 0): [], (3, 1): [], (3, 2): [], (2, 0): [], (2, 1): [],
                                                        (1, 0): []}  # fmt: skip

        def edge(a: int, b: int) -> int:
            key = tuple(sorted((a, b)))
            if key not in edges:
                edges[key] = len(edges)
                down[(1, 0)].append(list(key))
            return edges[key]

        def face(vs: tuple[int, ...]) -> int:
            key = tuple(sorted(vs))
            if key not in faces:
                faces[key] = len(faces)
                down[(2, 0)].append(list(key))
                down[(2, 1)].append([edge(key[i], key[j]) for i, j in FACE_EDGES])
            return faces[key]

        for t in tets.tolist():
            down[(3, 0)].append(t)
            down[(3, 1)].append([edge(t[i], t[j]) for i, j in CELL_EDGES])
            down[(3, 2)].append([face(tuple(t[i] for i in f)) for f in CELL_FACES])
        self.num = [len(positions), len(edges), len(faces), len(tets)]
        self.rel: dict[tuple[int, int], list[list[int]]] = dict(down)
        for (a, b), rows in down.items():  # the inverse relations, ascending
            up: list[set[int]] = [set() for _ in range(self.num[b])]
            for e, row in enumerate(rows):
                for g in row:
                    up[g].add(e)
            self.rel[(b, a)] = [sorted(s) for s in up]
        # same order: vertices sharing an edge, edges sharing a vertex, faces sharing an edge, cells sharing a face
        for a, via in ((0, 1), (1, 0), (2, 1), (3, 2)):
            near = []
            for e in range(self.num[a]):
                s = {n for g in self.rel[(a, via)][e] for n in self.rel[(via, a)][g]}
                near.append(sorted(s - {e}))
            self.rel[(a, a)] = near


def box(nx: int, ny: int, nz: int) -> Topology:
    """A box of nx * ny * nz unit cubes, each cut into 6 tetrahedra around its main diagonal."""
    vid = np.arange((nx + 1) * (ny + 1) * (nz + 1)).reshape(nx + 1, ny + 1, nz + 1)
    positions = np.array([[i, j, k] for i in range(nx + 1) for j in range(ny + 1) for k in range(nz + 1)], float)
    tets = []
    for i, j, k in itertools.product(range(nx), range(ny), range(nz)):
        for perm in itertools.permutations(range(3)):
            corner = [0, 0, 0]
            path = [vid[i, j, k]]
            for axis in perm:
                corner[axis] = 1
                path.append(vid[i + corner[0], j + corner[1], k + corner[2]])
            tets.append(path)
    return Topology(positions, np.array(tets))


def owner_patches(topo: Topology, patches: int) -> list[np.ndarray]:
    """The patch owning each element, by order: cells in `patches` contiguous runs, every other element owned by
    the patch of the first cell containing it."""
    cells = np.arange(topo.num[3]) * patches // topo.num[3]
    out = [np.array([cells[topo.rel[(a, 3)][e][0]] for e in range(topo.num[a])]) for a in range(3)]
    return out + [cells]


def metadata(topo: Topology, patches: int, relations: list[tuple[int, int]] | None = None) -> dict[str, Any]:
    """The patcher's JSON dict for `topo` cut into `patches` patches, with `relations` (default: all 16)."""
    rels = sorted(topo.rel) if relations is None else relations
    owner = owner_patches(topo, patches)
    owned = [[sorted(np.flatnonzero(owner[a] == p).tolist(), reverse=True) for p in range(patches)] for a in range(4)]
    total = [[list(o) for o in owned[a]] for a in range(4)]
    changed = True
    while changed:  # the ghosts: what owned elements reach through the CSR relations, and everything held reaches down
        changed = False
        for a, b in rels:
            for p in range(patches):
                held = set(total[b][p])
                sources = owned[a][p] if a <= b else total[a][p]
                for e in sources:
                    for g in topo.rel[(a, b)][e]:
                        if g not in held:
                            held.add(g)
                            total[b][p].append(g)
                            changed = True
    for a in range(4):  # ghosts after the owned elements, ascending
        for p in range(patches):
            n = len(owned[a][p])
            total[a][p] = total[a][p][:n] + sorted(total[a][p][n:])
    local = [[{g: k for k, g in enumerate(total[a][p])} for p in range(patches)] for a in range(4)]
    elements = []
    g2r_all = []
    for a in range(4):
        r_order = [g for p in range(patches) for g in owned[a][p]]
        g2r = np.empty(topo.num[a], int)
        g2r[r_order] = np.arange(topo.num[a])
        g2r_all.append(g2r)
        l2g = [g for p in range(patches) for g in total[a][p]]
        elements.append({
            "order": a, "num": topo.num[a], "max_num_per_patch": max(len(t) for t in total[a]),
            "owned_offsets": np.cumsum([0] + [len(o) for o in owned[a]]).tolist(),
            "total_offsets": np.cumsum([0] + [len(t) for t in total[a]]).tolist(),
            "l2g_mapping": l2g, "l2r_mapping": g2r[l2g].tolist(), "g2r_mapping": g2r.tolist(),
        })  # fmt: skip
    relations_out = []
    for a, b in rels:
        entry: dict[str, Any] = {"from_order": a, "to_order": b}
        if a > b:
            entry["value"] = [local[b][p][g] for p in range(patches) for e in total[a][p] for g in topo.rel[(a, b)][e]]
        else:
            value: list[int] = []
            offset: list[int] = []
            patch_offset: list[int] = []
            for p in range(patches):
                patch_offset.append(len(value))
                row = [0]
                for e in owned[a][p]:
                    value += [local[b][p][g] for g in topo.rel[(a, b)][e]]
                    row.append(len(value) - patch_offset[-1])
                offset += row
            entry.update(value=value, offset=offset, patch_offset=patch_offset)
        relations_out.append(entry)
    return {"num_patches": patches, "elements": elements, "relations": relations_out,
            "attrs": {"x": topo.positions.reshape(-1).tolist()}}  # fmt: skip
