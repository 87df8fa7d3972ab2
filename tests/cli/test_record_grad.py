"""`qd record` writes the `.grad` (and FwdMode) calls of a differentiable program as kernels of their own
(`mod:k.grad`, `mod:k.dual`, arrays that have a `.grad` spelled `ndarray[f32, 1, grad]`), and `qd precompile`
compiles them from the manifest: the precompiled start of the program, gradients included, compiles nothing."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from quadrants.aot import manifest, typespec
from tests.cli.test_precompile import Proj

pytestmark = pytest.mark.slow  # `qd record`, `qd precompile` and the program run in subprocesses

KERNELS = """
import dataclasses
import quadrants as qd

@dataclasses.dataclass
class State:
    pos: qd.types.NDArray[qd.f32, 1]
    scale: qd.types.NDArray[qd.f32, 1]

@qd.kernel(fastcache=True)
def spring(s: State, loss: qd.types.NDArray[qd.f32, 0]) -> None:
    for i in range(s.pos.shape[0]):
        loss[None] += s.scale[i] * s.pos[i] * s.pos[i]

@qd.kernel(fastcache=True)
def cube(x: qd.types.NDArray[qd.f32, 1], loss: qd.types.NDArray[qd.f32, 0]) -> None:
    for i in range(x.shape[0]):
        loss[None] += x[i] * x[i] * x[i]

@qd.kernel  # reads fields: not fastcache, precompiled into the offline cache
def square(n: qd.i32) -> None:
    for i in range(n):
        y[i] = a[i] * a[i]

a = qd.field(qd.f32, shape=4, needs_dual=True)
y = qd.field(qd.f32, shape=4, needs_dual=True)
"""

MAIN = """
import json
import numpy as np
import quadrants as qd
qd.init(arch=qd.cpu)
from app import kernels as K

x = qd.ndarray(qd.f32, (4,), needs_grad=True)
loss = qd.ndarray(qd.f32, (), needs_grad=True)
x.from_numpy(np.arange(4, dtype=np.float32))
with qd.ad.Tape(loss=loss):
    K.cube(x, loss)
state = K.State(qd.ndarray(qd.f32, (4,), needs_grad=True), qd.ndarray(qd.f32, (4,)))  # scale has no .grad
state.pos.from_numpy(np.arange(4, dtype=np.float32))
state.scale.fill(0.5)
loss2 = qd.ndarray(qd.f32, (), needs_grad=True)
with qd.ad.Tape(loss=loss2):
    K.spring(state, loss2)
K.a.from_numpy(np.arange(4, dtype=np.float32))
with qd.ad.FwdMode(loss=K.y, param=K.a, seed=[1.0] * 4):
    K.square(4)
print(json.dumps({"x_grad": x.grad.to_numpy().tolist(), "y_dual": K.y.dual.to_numpy().tolist(),
                  "pos_grad": state.pos.grad.to_numpy().tolist(),
                  "compiles": qd.stats()["compiles"]}))
"""


def test_grad_and_dual_calls_are_recorded_then_precompiled(tmp_path: Path) -> None:
    proj = Proj(tmp_path / "proj")
    proj.write("app/__init__.py", "")
    proj.write("app/kernels.py", KERNELS)
    proj.write("main.py", MAIN)
    (proj.root / "qd.toml").write_text('cache_dir = "build/cache"\nmodules = []\n')
    rec = proj.qd("record", "-o", "qd.toml", "--", sys.executable, "main.py", env={"QD_CACHE_DIR": str(tmp_path / "c0")})
    assert rec.returncode == 0, rec.stderr
    m = manifest.load(str(proj.root / "qd.toml"))
    entries = {k.name: k for k in m.kernels}
    # `square` ran only inside FwdMode: its dual kernel alone is recorded
    assert set(entries) == {"app.kernels:cube", "app.kernels:cube.grad", "app.kernels:square.dual",
                            "app.kernels:spring", "app.kernels:spring.grad"}  # fmt: skip
    grad_sig = {k: v.raw for k, v in entries["app.kernels:cube.grad"].signatures[0].params.items()}
    assert grad_sig == {"x": "ndarray[f32, 1, grad]", "loss": "ndarray[f32, 0, grad]"}

    # an adjoint's object members say which have a .grad
    assert any(getattr(o.members.get("pos"), "grad", False) and not getattr(o.members.get("scale"), "grad", True)
               for o in m.objects.values()), m.objects  # fmt: skip

    rc, report = proj.precompile()
    assert rc == 0 and report["failed"] == 0 and report["compiled"] == 5, report
    out = proj.main()
    assert out["x_grad"] == [3.0 * i * i for i in range(4)]
    assert out["y_dual"] == [2.0 * i for i in range(4)]
    assert out["pos_grad"] == [1.0 * i for i in range(4)]  # d/dp 0.5 p^2
    assert out["compiles"] == 0, out  # the adjoint and the dual kernel came from the precompiled cache


def test_the_grad_marker_of_a_type() -> None:
    t = typespec.parse("torch[f64, 2, grad]")
    assert t.grad and t.text() == "torch[f64, 2, grad]" and t.example().requires_grad
    assert typespec.parse("ndarray[vec3, 1, grad]").example().grad is not None
    with pytest.raises(typespec.TypeSpecError, match="numpy array has no .grad"):
        typespec.parse("numpy[f32, 1, grad]")
    with pytest.raises(typespec.TypeSpecError, match="only arrays of real numbers"):
        typespec.parse("ndarray[i32, 1, grad]")
    assert json.dumps(typespec.parse("ndarray[f32, 1]").text()) == '"ndarray[f32, 1]"'
