"""Simulate a 64x64 cloth falling onto a sphere and report where the start-up time went.

    python run.py [--n 64] [--frames 60] [--json]

With the cache precompiled (`qd precompile`), the first frame only looks kernels up: no parsing, no LLVM.
"""

from __future__ import annotations

import time

T0 = time.perf_counter()

import argparse  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import sys  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def main() -> dict:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=64)
    ap.add_argument("--frames", type=int, default=60)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()

    t_import = time.perf_counter()
    import quadrants as qd

    qd.init(arch=qd.cpu)
    from cloth import kernels as K
    from cloth.model import Cloth

    t_ready = time.perf_counter()
    cloth = Cloth(args.n)
    cloth.step(wind_strength=0.002)  # the first frame calls every kernel of a step for the first time
    cloth.energy()
    cloth.vertices()
    cloth.bounds()
    K.max_speed(cloth.v)
    cloth.nudge(args.n // 2, args.n // 2, qd.math.vec3(0.0, 0.0, 0.0))
    first_frame = time.perf_counter()
    for frame in range(1, args.frames):
        cloth.step(wind_strength=0.002 if frame < args.frames // 2 else 0.0)
    qd.sync()
    done = time.perf_counter()
    kinetic, potential = cloth.energy()
    lo, hi = cloth.bounds()
    result = {
        "n": args.n,
        "frames": args.frames,
        "import_ms": (t_ready - t_import) * 1e3,
        "first_frame_ms": (first_frame - t_ready) * 1e3,
        "ready_ms": (first_frame - T0) * 1e3,
        "frame_ms": (done - first_frame) * 1e3 / max(1, args.frames - 1),
        "kinetic": kinetic,
        "potential": potential,
        "lowest": float(lo[1]),
        "max_speed": K.max_speed(cloth.v),
        "compiles": qd.stats()["compiles"],
        "fastcache_hits": qd.stats()["cache"]["fastcache_hits"],
        "llvmlite_imported": "llvmlite" in sys.modules,
    }
    if args.json:
        print(json.dumps(result))
    else:
        print(f"cloth {args.n}x{args.n}, {args.frames} frames of {cloth.substeps} substeps")
        print(f"  import quadrants + cloth: {result['import_ms']:8.1f} ms")
        print(f"  first frame (first calls): {result['first_frame_ms']:7.1f} ms   ({result['compiles']} compiles, "
              f"{result['fastcache_hits']} fastcache hits, llvmlite imported: {result['llvmlite_imported']})")
        print(f"  process start -> ready:   {result['ready_ms']:8.1f} ms")
        print(f"  later frames:             {result['frame_ms']:8.2f} ms each")
        print(f"  lowest point {result['lowest']:.3f}, kinetic {kinetic:.2e}, potential {potential:.3f}")
    return result


if __name__ == "__main__":
    main()
