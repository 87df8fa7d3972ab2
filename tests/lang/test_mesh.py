"""Meshes (lang/mesh.py, frontend/mesh.py) on the session's backend: mesh-fors over every element type, ids,
attributes (reordered or not, scalar or vector), all 16 relations, nested relations, `qd.mesh_patch_idx()`, and
the errors. The metadata comes from tests/lang/mesh_data.py: a tetrahedral box cut into several patches with
ghosts, so local, global and reordered indices all differ; the oracle is the same mesh's global connectivity, and
every result must not depend on how the mesh was cut into patches."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest

import quadrants as qd
from tests.conftest import qd_init
from tests.helpers import define
from tests.lang import mesh_data

NAMES = ("verts", "edges", "faces", "cells")
TOPO = mesh_data.box(3, 2, 2)


@pytest.fixture(autouse=True)
def _init() -> None:
    qd_init()


def _build(patches: int, places: dict[str, dict[str, Any]], reorder: bool = False, **meta_kw: Any) -> Any:
    builder = qd.lang.mesh._TetMesh()
    for name, members in places.items():
        getattr(builder, name).place(members, reorder=reorder)
    return builder.build(qd.Mesh.generate_meta(mesh_data.metadata(TOPO, patches, **meta_kw)))


@pytest.mark.parametrize("patches", [1, 4])
@pytest.mark.parametrize("reorder", [False, True])
def test_a_mesh_for_visits_every_element_once_and_knows_its_global_id(patches: int, reorder: bool) -> None:
    m = _build(patches, {n: {"hits": qd.i32, "gid": qd.i32} for n in NAMES}, reorder=reorder)

    @qd.kernel
    def visit():
        for v in m.verts:
            v.hits += 1
            v.gid = v.id
        for e in m.edges:
            e.hits += 1
            e.gid = e.id
        for f in m.faces:
            f.hits += 1
            f.gid = f.id
        for c in m.cells:
            c.hits += 1
            c.gid = c.id

    visit()
    visit()
    for order, name in enumerate(NAMES):
        es = getattr(m, name)
        assert len(es) == TOPO.num[order]
        gid = np.array([es.gid[g] for g in range(len(es))])  # Python-scope [g]: the global index, reordered or not
        np.testing.assert_array_equal(gid, np.arange(TOPO.num[order]))
        np.testing.assert_array_equal(es.hits.to_numpy(), 2)


@pytest.mark.parametrize("patches", [1, 5])
@pytest.mark.parametrize("source", range(4))
def test_every_relation_gives_the_neighbours_of_the_global_mesh(patches: int, source: int) -> None:
    """For each target order: the row's size, the sum of the neighbours' ids weighted by their position (the order
    of a fixed-size row matters: `c.verts[0]` is the tet's first vertex) and that sum through `for n in rel`."""
    members = {f"{k}{b}": qd.i32 for b in range(4) for k in ("n", "w", "s")}
    m = _build(patches, {NAMES[source]: members}, reorder=True)
    body = "\n".join(f"""
                e.n{b} = e.{NAMES[b]}.size
                for j in range(e.{NAMES[b]}.size):
                    e.w{b} += (j + 1) * e.{NAMES[b]}[j].id
                for x in e.{NAMES[b]}:
                    e.s{b} += x.id""" for b in range(4))
    ns = define(f"""
        @qd.kernel
        def relate():
            for e in m.{NAMES[source]}:{body}
    """, m=m)
    ns["relate"]()
    es = getattr(m, NAMES[source])
    for b in range(4):
        rows = TOPO.rel[(source, b)]
        got = {k: np.array([getattr(es, f"{k}{b}")[g] for g in range(len(es))]) for k in "nws"}
        np.testing.assert_array_equal(got["n"], [len(r) for r in rows], err_msg=f"{NAMES[source]}.{NAMES[b]}.size")
        np.testing.assert_array_equal(got["w"], [sum((j + 1) * g for j, g in enumerate(r)) for r in rows])
        np.testing.assert_array_equal(got["s"], [sum(r) for r in rows])


@pytest.mark.parametrize("patches", [1, 3])
def test_relations_of_relations_reach_ghost_elements_of_the_patch(patches: int) -> None:
    """`v.cells[i].edges[j]`: cells around a vertex may be ghosts of its patch; their fixed rows are there too."""
    m = _build(patches, {"verts": {"t": qd.i32}, "edges": {"x": qd.i32}})

    @qd.kernel
    def fill():
        for e in m.edges:
            e.x = e.id * 3 + 1

    @qd.kernel
    def gather():
        for v in m.verts:
            for i in range(v.cells.size):
                c = v.cells[i]
                for j in range(c.edges.size):
                    v.t += c.edges[j].x

    fill()
    gather()
    want = [sum(3 * e + 1 for c in TOPO.rel[(0, 3)][v] for e in TOPO.rel[(3, 1)][c]) for v in range(TOPO.num[0])]
    np.testing.assert_array_equal(m.verts.t.to_numpy(), want)


def test_a_ghost_elements_lower_to_higher_relation_reads_empty() -> None:
    """Only owned elements have CSR rows (Quadrants reads another element's row for a ghost; here it is empty)."""
    patches = 3
    m = _build(patches, {"verts": {"t": qd.i32}})

    @qd.kernel
    def count():
        for v in m.verts:
            for c in v.cells:
                v.t += c.cells.size

    count()
    owner = mesh_data.owner_patches(TOPO, patches)
    want = [sum(len(TOPO.rel[(3, 3)][c]) for c in TOPO.rel[(0, 3)][v] if owner[3][c] == owner[0][v])
            for v in range(TOPO.num[0])]  # fmt: skip
    assert any(owner[3][c] != owner[0][v] for v in range(TOPO.num[0]) for c in TOPO.rel[(0, 3)][v])  # ghosts exist
    np.testing.assert_array_equal(m.verts.t.to_numpy(), want)


@pytest.mark.parametrize("patches", [1, 4])
def test_the_patch_index_is_the_owning_patch(patches: int) -> None:
    m = _build(patches, {"faces": {"p": qd.i32}, "verts": {"p": qd.i32}})

    @qd.kernel
    def mark():
        for f in m.faces:
            f.p = qd.mesh_patch_idx()
            for v in f.verts:  # a nested relation loop is still in its mesh-for's patch
                qd.atomic_max(v.p, qd.mesh_patch_idx())

    mark()
    owner = mesh_data.owner_patches(TOPO, patches)
    np.testing.assert_array_equal(m.faces.p.to_numpy(), owner[2])
    want = [max(owner[2][f] for f in TOPO.rel[(0, 2)][v]) for v in range(TOPO.num[0])]
    np.testing.assert_array_equal(m.verts.p.to_numpy(), want)


def test_parallel_updates_of_shared_neighbours_are_atomic() -> None:
    """Every face adds to its three vertices from parallel threads: the counts are each vertex's faces."""
    m = _build(4, {"verts": {"a": qd.i32, "area": qd.f32}})

    @qd.kernel
    def scatter(times: qd.i32):
        for _ in range(times):
            for f in m.faces:
                for k in qd.static(range(3)):
                    f.verts[k].a += 1
                    f.verts[k].area += 0.5

    scatter(1)
    scatter(3)
    counts = np.array([len(r) for r in TOPO.rel[(0, 2)]])
    np.testing.assert_array_equal(m.verts.a.to_numpy(), 4 * counts)
    np.testing.assert_allclose(m.verts.area.to_numpy(), 2.0 * counts)


def test_a_reordered_vector_attribute_is_stored_in_patch_order() -> None:
    """Python-scope `[g]` takes a global index; `to_numpy()` / `from_numpy()` see the storage (patch) order, as in
    Quadrants; kernels reach the element's own entry either way."""
    meta = mesh_data.metadata(TOPO, 4)
    g2r = np.array(meta["elements"][0]["g2r_mapping"])
    assert not np.array_equal(g2r, np.arange(len(g2r)))
    builder = qd.lang.mesh._TetMesh()
    builder.verts.place({"x": qd.math.vec3}, reorder=True)
    builder.verts.place({"y": qd.math.vec3})
    m = builder.build(qd.Mesh.generate_meta(meta))
    pos = TOPO.positions.astype(np.float32)
    stored = np.empty_like(pos)
    stored[g2r] = pos
    m.verts.x.from_numpy(stored)

    @qd.kernel
    def copy():
        for v in m.verts:
            v.y = v.x * 2.0 + v.id

    copy()
    np.testing.assert_allclose(m.verts.y.to_numpy(), pos * 2 + np.arange(len(pos))[:, None])
    np.testing.assert_allclose(m.verts.x[5].to_numpy(), pos[5])
    m.verts.x[5] = [7, 8, 9]
    assert m.verts.x.to_numpy()[g2r[5]].tolist() == [7, 8, 9]
    np.testing.assert_allclose(m.get_position_as_numpy(), TOPO.positions)


def test_two_meshes_from_one_metadata_and_a_mesh_placed_after_it_was_built() -> None:
    meta = qd.Mesh.generate_meta(mesh_data.metadata(TOPO, 2))
    builder = qd.lang.mesh._TetMesh()
    builder.cells.place({"v": qd.f32})
    a, b = builder.build(meta), builder.build(meta)
    c = qd.Mesh._create_instance(meta)
    c.cells.place({"w": qd.f32}, reorder=True)
    a.cells.v.from_numpy(np.arange(TOPO.num[3], dtype=np.float32))

    @qd.kernel
    def move():
        for x in a.cells:
            b.cells.v[x.id] = x.v + 1
        for x in c.cells:
            x.w = b.cells.v[x.id] * 2

    move()
    np.testing.assert_allclose(b.cells.v.to_numpy(), np.arange(TOPO.num[3]) + 1)
    np.testing.assert_allclose([c.cells.w[g] for g in range(TOPO.num[3])], 2 * (np.arange(TOPO.num[3]) + 1))
    np.testing.assert_array_equal(a.cells.v.to_numpy(), np.arange(TOPO.num[3]))  # a's own field


def test_a_triangle_mesh_without_cells() -> None:
    """A surface: the faces of one tetrahedron; a metadata without cells (and only the relations it lists)."""
    tet = mesh_data.Topology(np.eye(4, 3), np.array([[0, 1, 2, 3]]))
    meta = mesh_data.metadata(tet, 1, relations=[(2, 0), (0, 2), (0, 0)])
    meta["elements"] = [e for e in meta["elements"] if e["order"] != 3]
    builder = qd.lang.mesh._TriMesh()
    builder.verts.place({"deg": qd.i32, "ring": qd.i32})
    m = builder.build(qd.Mesh.generate_meta(meta))
    assert len(m.cells) == 0 and len(m.faces) == 4

    @qd.kernel
    def degrees():
        for v in m.verts:
            v.deg = v.faces.size
            v.ring = v.verts.size

    degrees()
    np.testing.assert_array_equal(m.verts.deg.to_numpy(), 3)
    np.testing.assert_array_equal(m.verts.ring.to_numpy(), 3)


def test_mesh_local_is_a_hint_with_the_same_results() -> None:
    m = _build(3, {"verts": {"a": qd.i32}})
    ext = qd.field(qd.i32, shape=len(m.verts))

    @qd.kernel
    def k(cache: qd.template()):
        if qd.static(cache):
            qd.mesh_local(ext, m.verts.a)
        for f in m.faces:
            s = f.verts[0].id + f.verts[1].id + f.verts[2].id
            for i in range(3):
                f.verts[i].a += s
                ext[f.verts[i].id] += s

    k(False)
    first = m.verts.a.to_numpy().copy()
    m.verts.a.fill(0)
    k(True)
    np.testing.assert_array_equal(m.verts.a.to_numpy(), first)
    np.testing.assert_array_equal(ext.to_numpy(), 2 * first)


# ---- errors -----------------------------------------------------------------------------------------------------


def test_reserved_and_repeated_attribute_names_are_refused() -> None:
    builder = qd.lang.mesh._TetMesh()
    with pytest.raises(qd.QuadrantsSyntaxError, match="'cells' cannot use as attribute name"):
        builder.verts.place({"cells": qd.f32})
    builder.verts.place({"a": qd.f32})
    with pytest.raises(qd.QuadrantsSyntaxError, match="'a' has already use as attribute name"):
        builder.verts.place({"a": qd.i32})
    with pytest.raises(qd.QuadrantsSyntaxError, match="struct types are not supported"):
        builder.edges.place({"s": qd.types.struct(a=qd.f32)})


def _kernel_error(m: Any, body: str) -> str:
    ns = define(f"""
        @qd.kernel
        def bad():
            for v in m.verts:
                {body}
    """, m=m)
    with pytest.raises(qd.QuadrantsError) as e:
        ns["bad"]()
    return str(e.value)


def test_kernel_errors_name_the_line_and_what_is_wrong() -> None:
    m = _build(1, {"verts": {"a": qd.f32}}, relations=[(0, 1), (1, 0)])
    msg = _kernel_error(m, "v.b = 1.0")
    assert "no attribute 'b'" in msg and "placed: a" in msg and "v.b = 1.0" in msg
    assert "no verts -> cells relation" in _kernel_error(m, "v.a = v.cells.size")
    assert "cannot assign to 'id'" in _kernel_error(m, "v.id = 3")
    assert "no attribute 'length'" in _kernel_error(m, "v.a = v.edges.length")
    ns = define("""
        @qd.kernel
        def outside():
            x = qd.mesh_patch_idx()
    """)
    with pytest.raises(qd.QuadrantsError, match="only valid inside a mesh-for"):
        ns["outside"]()
    with pytest.raises(qd.QuadrantsSyntaxError, match="can only be used inside a kernel"):
        qd.mesh_patch_idx()


@pytest.mark.parametrize("spoil, words", [
    (lambda d: d["elements"][0]["l2g_mapping"].__setitem__(3, 10_000), "l2g_mapping: an index is outside"),
    (lambda d: d["elements"][1].__setitem__("num", 7), "the patches own 139 elements, but num is 7"),
    (lambda d: d["elements"][2]["owned_offsets"].reverse(), "owned_offsets must be"),
    (lambda d: d["relations"][0]["value"].append(1), "holds 2 values per element"),
    (lambda d: d["relations"][1]["value"].__setitem__(0, 999), "not a local index of its patch"),
    (lambda d: d["relations"][2].pop("offset"), "missing the list 'offset'"),
    (lambda d: d.pop("num_patches"), "missing 'num_patches'"),
    (lambda d: d["elements"][0].__setitem__("order", 4), "order must be an element order 0..3"),
])  # fmt: skip
def test_malformed_metadata_is_refused_with_the_reason(tmp_path: Any, spoil: Any, words: str) -> None:
    data = mesh_data.metadata(TOPO, 2, relations=[(1, 0), (3, 2), (0, 3)])
    spoil(data)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data))
    with pytest.raises(ValueError, match=words) as e:
        qd.Mesh.load_meta(str(path))
    assert str(path) in str(e.value)


def test_an_attribute_placed_with_needs_grad_differentiates_through_relations() -> None:
    """loss = sum over cells of their vertices' x**2: d loss / d x_v = 2 x_v * (cells around v). The companion of a
    reordered attribute is the field's own `.grad`, in storage order (as Quadrants' proxy hands it out)."""
    builder = qd.lang.mesh._TetMesh()
    builder.verts.place({"x": qd.f32}, needs_grad=True, reorder=True)
    meta = mesh_data.metadata(TOPO, 3)
    g2r = np.array(meta["elements"][0]["g2r_mapping"])
    m = builder.build(qd.Mesh.generate_meta(meta))
    loss = qd.field(qd.f32, shape=(), needs_grad=True)
    x = np.linspace(-1, 2, TOPO.num[0]).astype(np.float32)
    for g in range(TOPO.num[0]):
        m.verts.x[g] = x[g]

    @qd.kernel
    def energy():
        for c in m.cells:
            for v in c.verts:
                loss[None] += v.x**2

    energy()
    loss.grad[None] = 1
    energy.grad()
    cells = np.array([len(r) for r in TOPO.rel[(0, 3)]])
    np.testing.assert_allclose(loss[None], (x**2 * cells).sum(), rtol=1e-5)
    np.testing.assert_allclose(m.verts.x.grad.to_numpy()[g2r], 2 * x * cells, rtol=1e-5)
