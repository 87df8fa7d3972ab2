"""Genesis start-up and stepping, this package side by side with real Quadrants 0.5.2 in one run.

    python bench.py [--scenes box,franka] [--runs 3] [--steps 300] [--out results]

For each scene and system, fresh processes of `scenes.py` (from /tmp, so no `quadrants/` folder shadows the
installed one):
- cold: every cache empty (HOME / XDG_CACHE_HOME / QD_CACHE_DIR in a new folder), one run;
- warm: the same caches after that run (each system's own best: real Quadrants' offline cache and fastcache,
  ours' fastcache), median of `--runs`;
- precompiled (ours): a new cache filled by `qd precompile qd.toml` only (no run before), median of `--runs`.
It reports the seconds from `import genesis` to the first step done, the seconds spent inside quadrants up to
then (ours: `qd.stats()`: import, qd.init, the kernels' first calls), steps per second after the first step,
and whether the precompiled run compiled anything. Writes OUT/genesis.md (a table), OUT/genesis.json and
OUT/genesis.png (a bar chart, where matplotlib is installed).

The venvs: OURS (default /work/venv-gs-ours) and REAL (default /work/venv-gs-real), see README.md.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
OURS = os.environ.get("OURS", "/work/venv-gs-ours")
REAL = os.environ.get("REAL", "/work/venv-gs-real")


def scene(venv: str, name: str, steps: int, cache: str) -> dict:
    """One fresh process of scenes.py with all of its caches under `cache`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("QD_")}
    env.update(HOME=cache, XDG_CACHE_HOME=os.path.join(cache, ".cache"), QD_CACHE_DIR=os.path.join(cache, "qd"))
    proc = subprocess.run([os.path.join(venv, "bin", "python"), os.path.join(HERE, "scenes.py"), name, "--steps",
                           str(steps)], cwd="/tmp", env=env, capture_output=True, text=True, timeout=900)  # fmt: skip
    if proc.returncode != 0:
        raise RuntimeError(f"{venv} {name}: exit {proc.returncode}\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def precompile(cache: str) -> float:
    env = {k: v for k, v in os.environ.items() if not k.startswith("QD_")}
    env.update(HOME=cache, XDG_CACHE_HOME=os.path.join(cache, ".cache"))
    t0 = time.perf_counter()
    proc = subprocess.run([os.path.join(OURS, "bin", "qd"), "precompile", "-m", os.path.join(HERE, "qd.toml"),
                           "--cache-dir", os.path.join(cache, "qd"), "--json"], cwd="/tmp", env=env,
                          capture_output=True, text=True, timeout=1800)  # fmt: skip
    if proc.returncode != 0:
        raise RuntimeError(f"qd precompile failed ({proc.returncode}):\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
    return time.perf_counter() - t0


def row(runs: list[dict]) -> dict:
    first = [r["times"]["import_to_first_step_s"] for r in runs]
    sps = [r["times"]["steps_per_s"] for r in runs]
    q = [r["quadrants"]["seconds_to_first_step"] for r in runs if "quadrants" in r]
    compiles = [r["quadrants"]["compiles"] for r in runs if "quadrants" in r]
    return {"first_step_s": statistics.median(first), "steps_per_s": statistics.median(sps),
            "quadrants_s": statistics.median(q) if q else None, "compiles": max(compiles) if compiles else None,
            "runs": len(runs)}  # fmt: skip


def bench_scene(name: str, runs: int, steps: int) -> dict:
    out: dict = {}
    with tempfile.TemporaryDirectory() as real_c, tempfile.TemporaryDirectory() as ours_c, \
            tempfile.TemporaryDirectory() as pre_c:  # fmt: skip
        # interleaved, so that load on the shared machine falls on both systems alike
        cold_real, cold_ours = scene(REAL, name, steps, real_c), scene(OURS, name, steps, ours_c)
        warm_real, warm_ours = [], []
        for _ in range(runs):
            warm_real.append(scene(REAL, name, steps, real_c))
            warm_ours.append(scene(OURS, name, steps, ours_c))
        out["precompile_s"] = round(precompile(pre_c), 1)
        pre = [scene(OURS, name, steps, pre_c) for _ in range(runs)]
        out["real cold"], out["real warm"] = row([cold_real]), row(warm_real)
        out["ours cold"], out["ours warm"], out["ours precompiled"] = row([cold_ours]), row(warm_ours), row(pre)
        out["precompiled_codegen_loaded"] = sorted({m for r in pre for m in r["quadrants"]["codegen_loaded"]})
    return out


def table(results: dict, args: argparse.Namespace) -> str:
    lines = [f"Command: `python examples/genesis/bench.py --scenes {args.scenes} --runs {args.runs} --steps "
             f"{args.steps}` ({time.strftime('%Y-%m-%d')}, {os.cpu_count()} CPUs, CPU backend; medians of "
             f"{args.runs} runs for warm and precompiled, one cold run).", "",
             "| scene | system | import → first step (s) | inside quadrants (s) | steps/s | compiles |",
             "|---|---|---|---|---|---|"]  # fmt: skip
    for name, r in results.items():
        for system in ("real cold", "real warm", "ours cold", "ours warm", "ours precompiled"):
            x = r[system]
            q = "" if x["quadrants_s"] is None else f"{x['quadrants_s']:.3f}"
            c = "" if x["compiles"] is None else str(x["compiles"])
            lines.append(f"| {name} | {system} | {x['first_step_s']:.2f} | {q} | {x['steps_per_s']:.0f} | {c} |")
    lines += ["", "| scene | precompiled / real warm (target ≤ 0.5) | quadrants share, precompiled (target ≤ 0.2 s) "
              "| Genesis' own start | real Quadrants' share, warm (est.) | steps/s ours / real, warm (target ≥ 1) "
              "| qd precompile (s) |", "|---|---|---|---|---|---|---|"]  # fmt: skip
    for name, r in results.items():
        pre, warm = r["ours precompiled"], r["real warm"]
        ratio = pre["first_step_s"] / warm["first_step_s"]
        own = pre["first_step_s"] - pre["quadrants_s"]  # the same Genesis code runs on both systems
        sps = r["ours warm"]["steps_per_s"] / warm["steps_per_s"]
        lines.append(f"| {name} | {ratio:.2f} | {pre['quadrants_s']:.3f} | {own:.2f} | "
                     f"{warm['first_step_s'] - own:.2f} | {sps:.2f} | {r['precompile_s']} |")
    lines += ["", "Genesis' own start is our precompiled time less the seconds inside quadrants; real Quadrants' share "
              "is its warm time less that (an estimate: it assumes Genesis' own work costs the same on both)."]
    return "\n".join(lines) + "\n"


def plot(results: dict, path: str) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return
    systems = ["real cold", "real warm", "ours cold", "ours warm", "ours precompiled"]
    fig, axes = plt.subplots(1, len(results), figsize=(5 * len(results), 3.5), squeeze=False)
    for ax, (name, r) in zip(axes[0], results.items()):
        ax.bar(range(len(systems)), [r[s]["first_step_s"] for s in systems],
               color=["#b55", "#d99", "#558", "#88b", "#5a5"])  # fmt: skip
        ax.set_xticks(range(len(systems)), [s.replace(" ", "\n") for s in systems], fontsize=8)
        ax.set_title(f"Genesis '{name}': import → first step (s)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scenes", default="box,franka")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--out", default=os.path.join(HERE, "results"))
    args = ap.parse_args()
    for venv in (OURS, REAL):
        if not os.path.exists(os.path.join(venv, "bin", "python")):
            sys.exit(f"no venv at {venv}: see examples/genesis/README.md (set OURS / REAL)")
    results = {}
    for name in args.scenes.split(","):
        print(f"{name} ...", file=sys.stderr, flush=True)
        results[name] = bench_scene(name, args.runs, args.steps)
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "genesis.json"), "w") as f:
        json.dump(results, f, indent=1)
    text = table(results, args)
    with open(os.path.join(args.out, "genesis.md"), "w") as f:
        f.write(text)
    plot(results, os.path.join(args.out, "genesis.png"))
    print(text)


if __name__ == "__main__":
    main()
