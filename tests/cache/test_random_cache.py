"""`qd.random()` kernels through the caches: the seed is passed at launch, so one entry serves every seed, and a
kernel loaded in a fresh process draws exactly what the freshly compiled one drew."""

from __future__ import annotations

import pytest

from tests.cache.conftest import LOADED, REPORT, STORED

pytestmark = pytest.mark.slow  # every test runs its program in fresh processes

APP = "import sys\nimport numpy as np\nimport quadrants as qd\n" + REPORT + '''
arch = dict(cpu=dict(arch=qd.cpu), emulated=dict(arch=qd.cuda, cuda_emulate=True))[sys.argv[1]]
qd.init(random_seed=int(sys.argv[2]), **arch)

@qd.kernel(fastcache=True)
def fill(x: qd.types.NDArray[qd.f32, 1]) -> qd.u64:
    for i in range(x.shape[0]):
        x[i] = qd.random()
    return qd.random(qd.u64)

x = np.zeros(1000, np.float32)
r0 = fill(x)
first = x.tolist()
r1 = fill(x)
report(first=first, second=x.tolist(), r=[r0, r1])
'''


@pytest.mark.parametrize("arch", ["cpu", "emulated"])
def test_a_cached_kernel_draws_what_the_compiled_one_drew_for_every_seed(project, arch: str) -> None:
    project.write("app.py", APP)
    compiled = project.run(arch, "7")
    loaded = project.run(arch, "7")
    other_seed = project.run(arch, "8")
    assert compiled.out["fill"] == STORED
    assert loaded.out["fill"] == LOADED and other_seed.out["fill"] == LOADED  # the seed is not in any key
    for name in ("first", "second", "r"):
        assert loaded.out[name] == compiled.out[name]
    assert compiled.out["first"] != compiled.out["second"] and compiled.out["r"][0] != compiled.out["r"][1]
    assert other_seed.out["first"] != compiled.out["first"] and other_seed.out["r"] != compiled.out["r"]
    # and without any cache, the same numbers
    fresh = project.run(arch, "7", env={"QD_OFFLINE_CACHE": "0"})
    assert fresh.out["first"] == compiled.out["first"] and fresh.out["r"] == compiled.out["r"]
