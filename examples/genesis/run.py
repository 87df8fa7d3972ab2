"""The Genesis image's command: a scene of scenes.py (the Franka arm by default) for N steps, then what it cost.

    python run.py [--scene franka] [--steps 200] [--backend cpu|gpu|gpu-emulated] [--json]

With `--json` the last line is one JSON object in the form `make docker-check` (tools/docker_check.py) reads:
`compiles`, `fastcache_hits`, `offline_hits` (this package's `qd.stats()`), `llvmlite_imported` (true in every
Genesis process: Genesis imports numba, which imports llvmlite), `compiler_loaded` (quadrants' own compiler
modules loaded: none when every kernel came from the cache), timings (`*_ms`: `ready_ms` is process start to
the first step done), and the physics: each entity's position and quaternion and the Franka's joint positions,
rounded to 6 decimals (float32 state; on one thread a warm and a cold run give the same bits).
"""

from __future__ import annotations

import time

T0 = time.perf_counter()

import argparse  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import sys  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
DIGITS = 6


def _rounded(values) -> list:
    return [round(float(v), DIGITS) for v in values]


def main() -> dict:
    ap = argparse.ArgumentParser()
    ap.add_argument("--scene", default="franka")
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--backend", default="cpu", help="cpu, gpu (an NVIDIA GPU) or gpu-emulated (scenes.py)")
    args = ap.parse_args()

    import scenes

    dt = scenes.SCENES[args.scene][2]
    entities, t_built, t_first, t_end, _ = scenes.run_scene(args.scene, args.steps, backend=args.backend)

    import quadrants as qd

    stats = qd.stats()
    result: dict = {"scene": args.scene, "steps": args.steps}
    for name, e in entities.items():
        result[f"{name}_pos"] = _rounded(e.get_pos().tolist())
        result[f"{name}_quat"] = _rounded(e.get_quat().tolist())
        if hasattr(e, "get_qpos") and args.scene == "franka":
            result[f"{name}_qpos"] = _rounded(e.get_qpos().tolist())
    result.update({
        "build_ms": (t_built - T0) * 1e3,
        "ready_ms": (t_first - T0) * 1e3,
        "step_ms": (t_end - t_first) * 1e3 / max(1, args.steps - 1),
        "quadrants_ms": (stats["stage_seconds"].get("import", 0) + stats["stage_seconds"].get("init", 0)
                         + stats["stage_seconds"].get("prepare", 0)) * 1e3,
        "compiles": stats["compiles"],
        "fastcache_hits": stats["cache"]["fastcache_hits"],
        "offline_hits": stats["cache"]["offline_hits"],
        "llvmlite_imported": "llvmlite" in sys.modules,
        "compiler_loaded": sorted(m for m in sys.modules if m.startswith("quadrants.codegen")),
    })  # fmt: skip
    if args.json:
        print(json.dumps(result))
    else:
        print(f"genesis {args.scene}, {args.steps} steps of {dt} s")
        print(f"  process start -> scene built:   {result['build_ms']:8.0f} ms")
        print(f"  process start -> first step:    {result['ready_ms']:8.0f} ms   (in quadrants: "
              f"{result['quadrants_ms']:.0f} ms; {result['compiles']} compiles, {result['fastcache_hits']} "
              f"fastcache + {result['offline_hits']} offline-cache hits, quadrants' compiler modules loaded: "
              f"{', '.join(result['compiler_loaded']) or 'none'})")  # fmt: skip
        print(f"  later steps:                    {result['step_ms']:8.3f} ms each")
        for key, value in result.items():
            if key.endswith(("_pos", "_quat", "_qpos")):
                print(f"  {key}: {value}")
    return result


if __name__ == "__main__":
    main()
