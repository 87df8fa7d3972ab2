"""Steps per second of Genesis' solver scenes (solvers.py), this package side by side with real Quadrants 0.5.2.

    python solver_bench.py [--scenes sf_smoke,mpm_elastic,...] [--steps 60] [--rounds 3] [--out results]

Each scene runs ROUNDS times per system, each run a fresh process, the systems alternating (ours, 0.5.2, ours, ...:
both see the same machine load; this 2-core VM's speed changes for seconds at a time), from /tmp with each run's
caches in a new folder. Steps/s is clocked after the first step (its compiles): stepping, not start-up; the cold
start is the process's import-to-first-step-done time with empty caches (bench.py measures warm starts). Each
figure is the median of its runs. Writes OUT/solvers.md and OUT/solvers.json. The venvs: OURS and REAL, as for
bench.py.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
OURS = os.environ.get("OURS", "/work/venv-gs-ours")
REAL = os.environ.get("REAL", "/work/venv-gs-real")
# every scene of solvers.py
DEFAULT = (
    "mpm_elastic,mpm_liquid,mpm_sand,mpm_snow,sph_wcsph,sph_dfsph,pbd_cloth,pbd_elastic,pbd_liquid,pbd_particles,"
    "fem_explicit,fem_implicit,fem_sap,sf_smoke,tool,rigid_mpm,rigid_sph,rigid_pbd,rigid_fem,diff_push"
)


# this package's runs as tests/examples/test_genesis_solvers.py makes them: the differentiable push's coupler loops
# over the rigid geoms carry a local, which reverse mode takes only with the adstack here (ARCHITECTURE.md,
# "Deliberate semantics"); 0.5.2 runs it without (and fails with it)
SCENE_ENV = {"diff_push": {"QD_AD_STACK_EXPERIMENTAL_ENABLED": "1"}}


def run(venv: str, scene: str, steps: int) -> dict:
    with tempfile.TemporaryDirectory(prefix="qd-solver-bench-") as cache:
        env = {k: v for k, v in os.environ.items() if not k.startswith("QD_")}
        env.update(HOME=cache, XDG_CACHE_HOME=os.path.join(cache, ".cache"), QD_CACHE_DIR=os.path.join(cache, "qd"),
                   **(SCENE_ENV.get(scene, {}) if venv == OURS else {}))  # fmt: skip
        proc = subprocess.run([os.path.join(venv, "bin", "python"), os.path.join(HERE, "solvers.py"), scene,
                               "--steps", str(steps)], cwd="/tmp", env=env, capture_output=True, text=True,
                              timeout=1800)  # fmt: skip
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith('{"scene"')]
    if proc.returncode != 0 or not lines:
        return {"error": (proc.stdout + proc.stderr)[-400:]}
    times = json.loads(lines[-1])["times"]
    return {**times, "cold_start_s": round(times["import_to_build_s"] + times["first_step_s"], 3)}


def median_run(runs: list[dict]) -> dict:
    """The median of each figure over the runs that succeeded (an error where none did), and the runs themselves."""
    good = [r for r in runs if "error" not in r]
    if not good:
        return runs[-1]
    keys = ("import_to_build_s", "first_step_s", "cold_start_s", "steps_per_s")
    return {**{k: round(statistics.median(r[k] for r in good), 3) for k in keys}, "runs": runs}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scenes", default=DEFAULT)
    ap.add_argument("--steps", type=int, default=60)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--out", default=os.path.join(HERE, "results"))
    args = ap.parse_args()
    results = {}
    for scene in args.scenes.split(","):
        runs: dict[str, list[dict]] = {"ours": [], "real": []}
        for _ in range(args.rounds):
            for system, venv in (("ours", OURS), ("real", REAL)):
                runs[system].append(run(venv, scene, args.steps))
        results[scene] = {system: median_run(r) for system, r in runs.items()}
        print(scene, json.dumps(results[scene]), flush=True)
    lines = [f"Command: `python examples/genesis/solver_bench.py --scenes {args.scenes} --steps {args.steps} "
             f"--rounds {args.rounds}` ({os.cpu_count()} CPUs, CPU backend; medians of {args.rounds} alternating runs "
             "per scene and system; steps/s clocked after the first step; cold start = import to first step done, "
             "empty caches).",
             "", "| scene | steps/s ours | steps/s 0.5.2 | ours / 0.5.2 | cold start ours (s) | cold start 0.5.2 (s) "
             "| ours / 0.5.2 |", "|---|---|---|---|---|---|---|"]  # fmt: skip
    for scene, r in results.items():
        a, b = r["ours"].get("steps_per_s"), r["real"].get("steps_per_s")
        ca, cb = r["ours"].get("cold_start_s"), r["real"].get("cold_start_s")
        ratio = f"{a / b:.2f}x" if a and b else "–"
        cold = f"{ca / cb:.2f}x" if ca and cb else "–"
        lines.append(f"| {scene} | {a or 'error'} | {b or 'error'} | {ratio} | {ca or '–'} | {cb or '–'} | {cold} |")
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "solvers.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    with open(os.path.join(args.out, "solvers.json"), "w") as f:
        json.dump(results, f, indent=1)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
