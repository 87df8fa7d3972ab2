"""A kernel over SNode-tree fields: the tree's layout is in the offline key (the IR text holds each field's
address terms), so two layouts of the same source never share a cache entry, across processes."""

from __future__ import annotations

import pytest

from tests.cache.conftest import REPORT, Project

APP = (
    """
import sys
import quadrants as qd

qd.init(arch=qd.cpu, offline_cache=True)
f = qd.field(qd.i32)
g = qd.field(qd.i32) if sys.argv[1] != "alone" else None  # a field placed nowhere is an error at launch
if sys.argv[1] == "alone":
    qd.root.dense(qd.i, 8).place(f)
elif sys.argv[1] == "aos":
    qd.root.dense(qd.i, 8).place(g, f)  # f is the second member of each cell: stride 8, offset 4
elif sys.argv[1] == "pointer":
    qd.root.pointer(qd.i, 2).dense(qd.i, 4).place(g, f)  # a sparse tree: its levels are in the key too
else:
    qd.root.dense(qd.i, 2).dense(qd.i, 4).place(g, f)

@qd.kernel
def k():
    for i in range(8):  # (a struct-for would visit no cell of the sparse tree: none is active yet)
        f[i] = i + 1
"""
    + REPORT
    + """
k()
report(f=f.to_numpy().tolist(), g=g.to_numpy().tolist() if sys.argv[1] != "alone" else [],
       offline=qd.stats()["cache"].get("offline_hits", 0))
"""
)


@pytest.mark.slow
def test_two_layouts_never_share_an_entry(project: Project) -> None:
    project.write("app.py", APP)
    want = list(range(1, 9))
    first = project.run("alone").out
    assert first["f"] == want and first["offline"] == 0
    again = project.run("alone").out
    assert again["f"] == want and again["offline"] == 1  # the entry is there and is used
    for layout in ("aos", "nested", "pointer"):
        out = project.run(layout).out
        assert out["offline"] == 0, layout  # a new layout compiles its own code
        assert out["f"] == want and out["g"] == [0] * 8, layout  # and writes f's own cells only
        # (a sparse tree's to_numpy() is a kernel too: one per field read, each an entry of its own)
        assert project.run(layout).out["offline"] == (3 if layout == "pointer" else 1), layout
