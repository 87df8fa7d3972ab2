"""Graph kernels through fastcache across processes: a hit runs no frontend, so the do-while levels and the
checkpoint labels (IntEnum members included) come from the cache entry; the decorator's flags are in the key."""

from __future__ import annotations

import pytest

from tests.cache.conftest import LOADED, REPORT, STORED

pytestmark = pytest.mark.slow  # every test runs its program in fresh processes

APP = "import os\nfrom enum import IntEnum\nimport numpy as np\nimport quadrants as qd\n" + REPORT + '''
qd.init(arch=qd.cpu)

class Stage(IntEnum):
    LOAD = 10
    SIM = 20

@qd.data_oriented
class Sim:
    def __init__(self):
        self.x = qd.ndarray(qd.i32, (4,))
        self.flag = qd.ndarray(qd.i32, ())
        self.outer = qd.ndarray(qd.i32, ())
        self.inner = qd.ndarray(qd.i32, ())

    @qd.kernel(graph=True, checkpoints=True, fastcache=True)
    def step(self):
        while qd.graph.do_while(self.outer):
            for _ in range(1):
                self.inner[()] = 2
            while qd.graph.do_while(self.inner):
                with qd.checkpoint(Stage.LOAD, yield_on=self.flag):
                    for i in range(self.x.shape[0]):
                        self.x[i] += 1
                for _ in range(1):
                    self.inner[()] -= 1
            for _ in range(1):
                self.outer[()] -= 1

sim = Sim()
step = type(sim).step
sim.outer.from_numpy(np.array(3, np.int32))
sim.flag.from_numpy(np.array(1, np.int32))
first = sim.step()
sim.flag.from_numpy(np.array(0, np.int32))
second = sim.step.resume(from_checkpoint=Stage.LOAD)
p = step._primal
report(first=[first.yielded, repr(first.checkpoint), type(first.checkpoint).__name__], second=second.yielded,
       x=sim.x.to_numpy().tolist(), outer=int(sim.outer.to_numpy()),
       labels=[repr(x) for x in p.checkpoint_user_labels_by_cp_id], yield_on=p.checkpoint_yield_on_args,
       levels=[[lv.cond_arg_name, lv.parent_id] for lv in p.graph_do_while_levels])
'''


def test_levels_and_labels_come_back_from_the_cache(project) -> None:
    project.write("app.py", APP)
    runs = [project.run(), project.run()]
    assert runs[0].out["step"] == STORED and runs[1].out["step"] == LOADED
    for run in runs:
        out = run.out
        # the first launch yields in its first pass; the resume runs the stage again and the loops to the end
        assert out["first"] == [True, "<Stage.LOAD: 10>", "Stage"] and out["second"] is False
        assert out["x"] == [1 + 6] * 4 and out["outer"] == 0
        # stages in source order: `inner = 2`, LOAD, `inner -= 1`, `outer -= 1` (for-loops are stages of their own)
        assert out["labels"] == ["None", "<Stage.LOAD: 10>", "None", "None"]
        assert out["yield_on"] == [None, "self.flag", None, None]
        assert out["levels"] == [["self.outer", -1], ["self.inner", 0]]


def test_the_decorator_flags_are_in_the_key(project) -> None:
    """The same source under another `checkpoints=` (read from the environment, so the text is the same) is
    another kernel: it must not load the first one's code (which takes a hidden argument)."""
    project.write("app.py", "import os\nimport numpy as np\nimport quadrants as qd\n" + REPORT + '''
qd.init(arch=qd.cpu)
CP = os.environ["CP"] == "1"

@qd.kernel(graph=True, checkpoints=CP, fastcache=True)
def k(x: qd.types.NDArray[qd.i32, 1]):
    for i in range(x.shape[0]):
        x[i] += 1

a = qd.ndarray(qd.i32, (3,))
out = k(a)
report(out=repr(out), x=a.to_numpy().tolist())
''')
    with_cp, without = project.run(env={"CP": "1"}), project.run(env={"CP": "0"})
    assert with_cp.out["k"] == STORED and without.out["k"] == STORED
    assert without.out["x"] == [1, 1, 1] and without.out["out"] == "None"
    assert project.run(env={"CP": "1"}).out["k"] == LOADED
