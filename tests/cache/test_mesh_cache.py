"""A kernel over a mesh, across processes: its code comes from the offline cache the second time with the same
results, and a mesh cut into other patches (other index arrays, other sizes) never reuses it wrongly. (Meshes
are fields, which fastcache refuses: FASTCACHE.md, "Why qd.field disables fastcache".)"""

from __future__ import annotations

import json

import numpy as np
import pytest

from tests.cache.conftest import REPORT, Project
from tests.lang import mesh_data

APP = (
    """
import sys
import quadrants as qd

qd.init(arch=qd.cpu, offline_cache=True)
builder = qd.lang.mesh._TetMesh()
builder.verts.place({"t": qd.i32}, reorder=True)
m = builder.build(qd.Mesh.load_meta(sys.argv[1]))

@qd.kernel
def k():
    for v in m.verts:
        for c in v.cells:
            for e in c.edges:
                v.t += e.id + qd.mesh_patch_idx() * 0
"""
    + REPORT
    + """
k()
report(t=[int(m.verts.t[g]) for g in range(len(m.verts))], offline=qd.stats()["cache"].get("offline_hits", 0))
"""
)


@pytest.mark.slow
def test_a_mesh_kernel_loads_from_the_offline_cache_and_another_cut_compiles_its_own(project: Project) -> None:
    topo = mesh_data.box(2, 2, 1)
    want = [sum(e for c in topo.rel[(0, 3)][v] for e in topo.rel[(3, 1)][c]) for v in range(topo.num[0])]
    project.write("app.py", APP)
    for patches in (1, 3):
        (project.root / f"mesh{patches}.json").write_text(json.dumps(mesh_data.metadata(topo, patches)))
    first = project.run("mesh1.json").out
    assert first["t"] == want and first["offline"] == 0
    again = project.run("mesh1.json").out
    assert again["t"] == want and again["offline"] >= 1
    other = project.run("mesh3.json").out  # other index arrays: sizes in the code differ, so its own entry
    assert other["t"] == want and other["offline"] == 0
    assert np.array_equal(project.run("mesh3.json").out["t"], want)
