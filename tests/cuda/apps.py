"""Helpers of the CUDA tests: a program run twice in fresh processes to check fastcache on a CUDA device (the GPU
or its emulator), and a kernel compiled for the fleet's GPU architectures (PTX, and cubins where ptxas is)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

FLEET = ("sm_80", "sm_90", "sm_120")  # the GPU architectures the tests compile for


def gpu_images(kernel: Any) -> Any:
    """The kernel's last specialization compiled for the GPU (PTX and, with ptxas, cubins) for FLEET."""
    import dataclasses

    from quadrants.backends.cuda import compile_cuda
    from quadrants.codegen import nvptx
    from quadrants.lang import program

    c = next(iter(kernel._launchers.values())).compiled
    config = dataclasses.replace(program.get().config, cuda_emulate=False)
    return compile_cuda(c.frontend, c.ir_text, c.abi.symbol, config, FLEET, cubin=nvptx.ptxas_path() is not None)

FASTCACHE_APP = """
import json, sys
import numpy as np
import quadrants as qd
qd.init({init})

@qd.kernel(fastcache=True)
def k(x: qd.types.NDArray[qd.f32, 1]) -> qd.f32:
    s = 0.0
    for i in range(x.shape[0]):
        s += qd.sqrt(x[i])
    return s

r = k(np.full(1000, 4.0, np.float32))
o = k._primal.src_ll_cache_observations
print(json.dumps({{"r": r, "loaded": o.cache_loaded, "stored": o.cache_stored, "compiles": qd.stats()["compiles"],
                  "llvmlite": "llvmlite" in sys.modules}}))
"""


def run_twice(folder: Path, init: str, app: str = FASTCACHE_APP) -> list[dict[str, Any]]:
    """Write the app (`FASTCACHE_APP`'s shape: its last line of output is a JSON report) with `qd.init(<init>)`,
    run it twice on one fresh cache, return each run's report."""
    (folder / "app.py").write_text(textwrap.dedent(app.format(init=init)))
    env = {k: v for k, v in os.environ.items() if not k.startswith("QD_")}
    env.update({"QD_CACHE_DIR": str(folder / "cache"), "QD_LOG_LEVEL": "warn"})
    runs = []
    for _ in range(2):
        proc = subprocess.run([sys.executable, "app.py"], cwd=folder, env=env, capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr
        runs.append(json.loads(proc.stdout.strip().splitlines()[-1]))
    return runs
