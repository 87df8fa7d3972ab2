"""A fastcache kernel under `qd.init(arch=qd.python)` runs as Python and is never cached: no process of that arch
stores or loads an entry, and the entries the compiled arch stores do not change what a python-arch run does."""

from __future__ import annotations

import pytest

from tests.cache.conftest import REPORT, STORED

pytestmark = pytest.mark.slow  # every test runs its program in fresh processes

APP = "import sys\nimport quadrants as qd\n" + REPORT + '''
qd.init(arch=dict(cpu=qd.cpu, python=qd.python)[sys.argv[1]])

@qd.kernel(fastcache=True)
def fill(x: qd.types.NDArray[qd.i32, 1], v: qd.i32):
    for i in range(x.shape[0]):
        x[i] = v + i

x = qd.ndarray(qd.i32, (4,))
fill(x, 10)
report(arch=str(qd.cfg.arch), values=[int(e) for e in x.to_numpy()], tensor=type(x).__name__)
'''


def _entries(project) -> list[str]:  # type: ignore[no-untyped-def]
    return sorted(str(p.relative_to(project.cache)) for p in project.cache.rglob("*.qd")) if project.cache.exists() else []


def test_a_python_arch_kernel_is_never_stored_or_loaded(project) -> None:  # type: ignore[no-untyped-def]
    pytest.importorskip("torch")
    project.write("app.py", APP)
    first = project.run("python")
    assert first.out["arch"] == "python" and first.out["tensor"] == "PyTensor"
    assert first.out["values"] == [10, 11, 12, 13]
    assert not any(first.out["fill"]) and _entries(project) == []
    compiled = project.run("cpu")
    assert compiled.out["fill"] == STORED and compiled.out["values"] == first.out["values"]
    stored = _entries(project)
    assert stored
    again = project.run("python")
    assert not any(again.out["fill"]) and again.out["values"] == first.out["values"]
    assert _entries(project) == stored
