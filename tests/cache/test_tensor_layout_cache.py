"""A `qd.tensor(layout=)` ndarray in a fastcache kernel, across processes: the layout is part of the entry's key
(another layout is another entry), and a kernel loaded from the cache indexes as the compiled one did."""

from __future__ import annotations

import pytest

from tests.cache.conftest import LOADED, REPORT, STORED

pytestmark = pytest.mark.slow  # every test runs its program in fresh processes

APP = (
    "import sys\nimport numpy as np\nimport quadrants as qd\n"
    + REPORT
    + """
qd.init(arch=qd.cpu)

@qd.kernel(fastcache=True)
def fill(x: qd.Tensor):
    for i, j in qd.ndrange(x.shape[0], x.shape[1]):
        x[i, j] = i * 10 + j

layout = tuple(int(c) for c in sys.argv[1])
t = qd.tensor(qd.i32, shape=(3, 4), layout=layout)
fill(t)
report(canonical=t.to_numpy().tolist(), storage=t._unwrap()._arr.reshape(-1).tolist())
"""
)


def test_a_layout_tensor_in_a_fastcache_kernel_loads_in_a_new_process(project) -> None:
    import numpy as np

    project.write("app.py", APP)
    compiled = project.run("10")
    loaded = project.run("10")
    other = project.run("01")
    assert compiled.out["fill"] == STORED and loaded.out["fill"] == LOADED
    assert other.out["fill"] == STORED  # the identity layout is another entry
    canonical = np.add.outer(np.arange(3) * 10, np.arange(4))
    for run in (compiled, loaded, other):
        assert run.out["canonical"] == canonical.tolist()
    assert loaded.out["storage"] == canonical.T.reshape(-1).tolist()
    assert other.out["storage"] == canonical.reshape(-1).tolist()
