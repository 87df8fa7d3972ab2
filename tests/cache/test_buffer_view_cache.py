"""A BufferView parameter and a SparseMatrixBuilder parameter in fastcache kernels, across processes: the view's
offset and size and the builder's arrays are runtime arguments (another offset, another capacity: the same
entry), and the kernel loaded from the cache writes what the compiled one did."""

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
def fill(v: qd.BufferView[qd.i32], base: qd.i32):
    for i in range(v.size):
        v[i] = base + i

@qd.kernel(fastcache=True)
def stencil(A: qd.types.sparse_matrix_builder(), n: qd.i32):
    for i in range(n):
        A[i, i] += 2.0
        if i > 0:
            A[i, i - 1] -= 1.0

off, n = int(sys.argv[1]), int(sys.argv[2])
a = qd.ndarray(qd.i32, 16)
fill(a[off:off + 4], 100)
b = qd.linalg.SparseMatrixBuilder(n, n, max_num_triplets=2 * n)
stencil(b, n)
report(a=a.to_numpy().tolist(), A=b.build().to_numpy().tolist())
"""
)


def test_views_and_builders_in_fastcache_kernels_load_in_a_new_process(project) -> None:
    import numpy as np

    pytest.importorskip("scipy")
    project.write("app.py", APP)
    compiled = project.run("2", "3")
    loaded = project.run("9", "5")  # other offset, other matrix size: the same entries
    assert compiled.out["fill"] == STORED and compiled.out["stencil"] == STORED
    assert loaded.out["fill"] == LOADED and loaded.out["stencil"] == LOADED
    for run, off, n in ((compiled, 2, 3), (loaded, 9, 5)):
        want = np.zeros(16, int)
        want[off:off + 4] = [100, 101, 102, 103]
        assert run.out["a"] == want.tolist()
        assert run.out["A"] == (2 * np.eye(n) - np.eye(n, k=-1)).tolist()
