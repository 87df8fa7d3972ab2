"""Steps per second of Genesis' solver scenes (solvers.py), this package side by side with real Quadrants 0.5.2.

    python solver_bench.py [--scenes sf_smoke,mpm_elastic,...] [--steps 60] [--out results]

Each scene runs once per system in a fresh process, the two systems one after the other (so both see the same
machine load), from /tmp with each system's caches in a new folder; the clock starts after the first step (its
compiles), so this compares stepping, not start-up (bench.py measures that). Writes OUT/solvers.md and
OUT/solvers.json. The venvs: OURS and REAL, as for bench.py.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
OURS = os.environ.get("OURS", "/work/venv-gs-ours")
REAL = os.environ.get("REAL", "/work/venv-gs-real")
DEFAULT = "sf_smoke,mpm_elastic,pbd_cloth,pbd_particles,sph_wcsph,fem_implicit,rigid_mpm,tool"


def run(venv: str, scene: str, steps: int) -> dict:
    with tempfile.TemporaryDirectory(prefix="qd-solver-bench-") as cache:
        env = {k: v for k, v in os.environ.items() if not k.startswith("QD_")}
        env.update(HOME=cache, XDG_CACHE_HOME=os.path.join(cache, ".cache"), QD_CACHE_DIR=os.path.join(cache, "qd"))
        proc = subprocess.run([os.path.join(venv, "bin", "python"), os.path.join(HERE, "solvers.py"), scene,
                               "--steps", str(steps)], cwd="/tmp", env=env, capture_output=True, text=True,
                              timeout=1800)  # fmt: skip
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith('{"scene"')]
    if proc.returncode != 0 or not lines:
        return {"error": (proc.stdout + proc.stderr)[-400:]}
    return dict(json.loads(lines[-1])["times"])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scenes", default=DEFAULT)
    ap.add_argument("--steps", type=int, default=60)
    ap.add_argument("--out", default=os.path.join(HERE, "results"))
    args = ap.parse_args()
    results = {}
    for scene in args.scenes.split(","):
        results[scene] = {"ours": run(OURS, scene, args.steps), "real": run(REAL, scene, args.steps)}
        print(scene, json.dumps(results[scene]), flush=True)
    lines = [f"Command: `python examples/genesis/solver_bench.py --scenes {args.scenes} --steps {args.steps}` "
             f"({os.cpu_count()} CPUs, CPU backend; one run per scene and system, clock after the first step).",
             "", "| scene | steps/s ours | steps/s 0.5.2 | ours / 0.5.2 | first step ours (s) | first step 0.5.2 (s) |",
             "|---|---|---|---|---|---|"]  # fmt: skip
    for scene, r in results.items():
        a, b = r["ours"].get("steps_per_s"), r["real"].get("steps_per_s")
        ratio = f"{a / b:.2f}x" if a and b else "–"
        lines.append(f"| {scene} | {a or 'error'} | {b or 'error'} | {ratio} | {r['ours'].get('first_step_s', '–')} | "
                     f"{r['real'].get('first_step_s', '–')} |")
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "solvers.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    with open(os.path.join(args.out, "solvers.json"), "w") as f:
        json.dump(results, f, indent=1)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
