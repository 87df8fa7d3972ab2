"""Launch cost of a CUDA kernel's two argument paths: plain kernel parameters, and the device buffer a task
takes when its arguments pass the 4 KiB launch parameter space (runtime/abi.py `cuda_packs_args`).

    python benchmarks/cuda_args.py [--members 100] [--calls 300] [--gpu]

The same kernel (a dataclass of `members` 2-d ndarrays, 24 bytes of parameters each) is timed both ways: as
compiled (100 members: 2.4 KiB, plain parameters) and with the bound lowered so that it packs. Without `--gpu`
it runs on the CUDA emulator, which measures the host side of a launch (marshalling, and for the buffer the
packing, its copy and the sync that guards its reuse), not the GPU's. Prints one JSON line.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np


def _module(members: int, folder: Path):  # type: ignore[no-untyped-def]
    body = " + ".join(f"p.a{k}[i, 1]" for k in range(members))
    path = folder / f"cuda_args_{members}.py"
    path.write_text(f"""import dataclasses
import quadrants as qd
Big = dataclasses.make_dataclass("Big", [(f"a{{k}}", qd.types.NDArray[qd.f32, 2]) for k in range({members})],
                                 frozen=True)
@qd.kernel
def total(p: Big, out: qd.types.NDArray[qd.f32, 1]):
    for i in range(out.shape[0]):
        out[i] = {body}
""")
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[path.stem] = mod
    spec.loader.exec_module(mod)
    return mod


def measure(members: int, calls: int, packed: bool, gpu: bool) -> float:
    import quadrants as qd
    from quadrants.runtime import abi

    abi.CUDA_PARAM_BYTES = 64 if packed else 4096  # read by codegen and the launcher alike
    qd.init(arch=qd.cuda, cuda_emulate=not gpu, offline_cache=False, log_level="warn")
    with tempfile.TemporaryDirectory() as tmp:
        mod = _module(members, Path(tmp))
        arrays = {f"a{k}": qd.ndarray(qd.f32, (3, 2)) for k in range(members)}
        p, out = mod.Big(**arrays), qd.ndarray(qd.f32, 3)
        mod.total(p, out)  # compile
        qd.sync()
        t0 = time.perf_counter()
        for _ in range(calls):
            mod.total(p, out)
        qd.sync()
        per_call = (time.perf_counter() - t0) / calls
        assert np.all(out.to_numpy() == 0.0)
    return per_call


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--members", type=int, default=100)
    ap.add_argument("--calls", type=int, default=300)
    ap.add_argument("--gpu", action="store_true", help="on a real GPU instead of the emulator")
    args = ap.parse_args()
    direct = measure(args.members, args.calls, False, args.gpu)
    packed = measure(args.members, args.calls, True, args.gpu)
    print(json.dumps({"device": "gpu" if args.gpu else "emulated", "members": args.members,
                      "param_bytes": 16 + 24 * args.members + 16, "direct_us": round(direct * 1e6, 1),
                      "buffer_us": round(packed * 1e6, 1)}))  # fmt: skip


if __name__ == "__main__":
    main()
