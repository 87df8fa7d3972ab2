"""`make bench`: run every workload under this project, numpy, Numba and real Quadrants 1.3.3 (each peer in
its own venv, created on first use), side by side in one run; write results/bench.md and results/bench.png.

    python benchmarks/run.py [--only saxpy,sum,...] [--skip-peers] [--startup-kernels 200 | 0 to skip]
                             [--fleet-kernels 200 | 0 to skip]

The start-up part runs startup.py for this project and real Quadrants on the same generated module; the fleet
part runs fleet.py (runners sharing one redis-server) where redis-server and redis-py are installed.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RESULTS = HERE / "results"
PEERS = {
    "numba": (ROOT / ".venv-numba", ["numba", "numpy"], "bench_numba.py"),
    "quadrants-1.3.3": (ROOT / ".venv-quadrants", ["quadrants==1.3.3"], "bench_qd.py"),
}
# atomics-bound workloads whose times swing 2x with this shared machine's state (on every system alike; the speed
# of one process changes for seconds at a time, a 2-core VM's cores sharing cache lines or not): run in rounds
# alternating between the systems, each system's figure the median of every timed call of all its rounds
ALTERNATED, ROUNDS = ("p2g_sparse", "diffmpm"), 7
BYTES = {"saxpy": 3 * 4 * (1 << 24), "sum": 4 * (1 << 24), "stencil": 2 * 4 * 4096 * 4096}


def ensure_venv(path: Path, packages: list[str]) -> Path:
    py = path / "bin" / "python"
    stamp = path / ".installed"
    if not stamp.exists() or stamp.read_text() != " ".join(packages):
        subprocess.run([sys.executable, "-m", "venv", str(path)], check=True)
        subprocess.run([str(py), "-m", "pip", "install", "--quiet", *packages], check=True)
        stamp.write_text(" ".join(packages))
    return py


def run_json(py: Path, script: str, only: str, env: dict[str, str] | None = None) -> dict[str, float]:
    cmd = [str(py), str(HERE / script)] + (["--only", only] if only and script != "bench_numpy.py" else [])
    proc = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, **(env or {})}, timeout=1800)
    if proc.returncode != 0:
        print(f"[bench] {script} under {py} failed:\n{proc.stderr[-2000:]}", file=sys.stderr)
        return {}
    return json.loads(proc.stdout.strip().splitlines()[-1])  # floats, and `<workload>_samples` lists


def run_startup(py: Path, n: int, repeat: int, precompile: bool = False) -> dict[str, dict[str, float]]:
    """Cold / warm offline-only / warm fastcache (/ precompiled) fresh processes on a generated module."""
    with tempfile.TemporaryDirectory(prefix="qd-startup-") as work:
        cmd = [sys.executable, str(HERE / "startup.py"), "run", "--python", str(py), "--workdir", work,
               "-n", str(n), "--repeat", str(repeat)] + (["--precompile"] if precompile else [])  # fmt: skip
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=3600)
    if proc.returncode != 0:
        print(f"[bench] start-up benchmark under {py} failed:\n{proc.stderr[-2000:]}", file=sys.stderr)
        return {}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", default="")
    ap.add_argument("--skip-peers", action="store_true")
    ap.add_argument("--startup-kernels", type=int, default=200)
    ap.add_argument("--startup-repeat", type=int, default=5)
    ap.add_argument("--fleet-kernels", type=int, default=200)
    args = ap.parse_args()
    RESULTS.mkdir(exist_ok=True)
    cols: dict[str, dict[str, float]] = {}
    startup: dict[str, dict[str, dict[str, float]]] = {}
    t0 = time.time()
    cols["quadrants (this)"] = run_json(Path(sys.executable), "bench_qd.py", args.only)
    cols["numpy"] = run_json(Path(sys.executable), "bench_numpy.py", args.only)
    if args.startup_kernels:
        startup["quadrants (this)"] = run_startup(
            Path(sys.executable), args.startup_kernels, args.startup_repeat, precompile=True
        )
    pythons = {"quadrants (this)": (Path(sys.executable), "bench_qd.py")}
    if not args.skip_peers:
        for name, (venv, pkgs, script) in PEERS.items():
            try:
                py = ensure_venv(venv, pkgs)
            except subprocess.CalledProcessError as e:
                print(f"[bench] could not set up {name}: {e}", file=sys.stderr)
                continue
            cols[name] = run_json(py, script, args.only, {"QD_OFFLINE_CACHE": "0"})
            pythons[name] = (py, script)
            if args.startup_kernels and name.startswith("quadrants"):
                startup[name] = run_startup(py, args.startup_kernels, args.startup_repeat)
    alternate_rounds(cols, pythons, args.only)
    for col in cols.values():  # the per-call samples are the rounds' business; the report has figures
        for k in [k for k in col if k.endswith("_samples")]:
            col.pop(k)
    fleet = run_fleet(args.fleet_kernels) if args.fleet_kernels else {}
    write_report(cols, {k: v for k, v in startup.items() if v}, time.time() - t0, fleet)
    return 0


def alternate_rounds(cols: dict[str, dict[str, float]], pythons: dict[str, tuple[Path, str]], only: str) -> None:
    """Run the ALTERNATED workloads ROUNDS - 1 more times, one system after the other in each round, and keep
    each system's median over every timed call of its rounds (its first round is the main run's; a workload
    that reports no samples counts its round's median)."""
    names = [w for w in ALTERNATED if not only or w in only.split(",")]
    systems = [s for s in pythons if any(w in cols.get(s, {}) for w in names)]

    def calls(got: dict[str, Any], w: str) -> list[float]:
        return list(got.get(w + "_samples") or [got[w]])

    samples = {s: {w: calls(cols[s], w) for w in names if w in cols[s]} for s in systems}
    rounds = {s: 1 for s in systems}
    for _ in range(ROUNDS - 1):
        for s in systems:
            py, script = pythons[s]
            got = run_json(py, script, ",".join(names), {"QD_OFFLINE_CACHE": "0"})
            rounds[s] += 1
            for w, runs in samples[s].items():
                if w in got:
                    runs.extend(calls(got, w))
    for s, by in samples.items():
        for w, runs in by.items():
            cols[s][w] = statistics.median(runs)
            cols[s][w + "_rounds"] = float(rounds[s])


def run_fleet(n: int) -> dict[str, Any]:
    import shutil

    try:
        import redis  # noqa: F401
    except ImportError:
        print("[bench] redis-py missing: no fleet benchmark", file=sys.stderr)
        return {}
    if shutil.which("redis-server") is None:
        print("[bench] redis-server missing: no fleet benchmark", file=sys.stderr)
        return {}
    proc = subprocess.run([sys.executable, str(HERE / "fleet.py"), "-n", str(n)], capture_output=True, text=True,
                          timeout=3600)  # fmt: skip
    if proc.returncode != 0:
        print(f"[bench] fleet benchmark failed:\n{proc.stderr[-2000:]}", file=sys.stderr)
        return {}
    return dict(json.loads(proc.stdout))


def fleet_lines(f: dict[str, Any]) -> list[str]:
    walls = f["shard_walls_s"]
    return [
        "",
        f"## Fleet: {f['n']} kernels, runners with separate local caches sharing one Redis",
        "",
        "benchmarks/fleet.py; each runner is a fresh process (import, `qd.init`, every kernel called once).",
        "",
        f"- local precompiled start (the baseline): ready in {f['local_precompiled_ready_ms']:.0f} ms",
        f"- (a) fresh runner, empty local cache, warm remote: ready in {f['fresh_runner_ready_ms']:.0f} ms "
        f"({f['ratio_fresh_to_local']:.2f}x the baseline; target <= 2x), {f['fresh_runner_compiles']} compiles "
        f"({'met' if f['target_met'] else 'NOT met'}); 4 fresh runners at once: "
        + ", ".join(f"{v:.0f}" for v in f["fleet_of_4_at_once_ready_ms"]) + " ms",
        f"- (b) one `qd precompile` (1 worker): {f['precompile_one_s']:.1f} s; {f['shards']} shards of 1 worker "
        f"each: {max(walls):.1f} s for the slowest (one machine each: the fleet's time; "
        + ", ".join(f"{w:.1f}" for w in walls) + f" s), {f['shards_at_once_here_s']:.1f} s all at once on this "
        f"{f['cores']}-core machine; then the run without --shard (pulls {f['bundle_run_pulled']}, compiles "
        f"{f['bundle_run_compiled']}, links the bundle): {f['bundle_run_s']:.1f} s",
        f"- (c) bytes per kernel: {f['fresh_runner_bytes_pulled_per_kernel'] / 1024:.1f} KiB pulled by a fresh runner; "
        f"{f['remote_stored_bytes_per_kernel'] / 1024:.1f} KiB stored on the remote (artifact, fast entry, the "
        "bundle's share, the runtime library's)",
    ]


ROWS = [
    ("saxpy", "saxpy, 16M f32 (ms)"),
    ("sum", "sum of 16M f32 by `s[0] += a[i]` (ms)"),
    ("stencil", "5-point stencil 4096² f32 (ms)"),
    ("nbody", "n-body all pairs, 4096 bodies (ms)"),
    ("nbody_vec3", "n-body, vec3 ndarrays, 4096 bodies (ms)"),
    ("struct", "struct field update, 1M particles, struct argument (ms)"),
    ("random", "fill 4M f32 with qd.random() (ms)"),
    ("launch", "launch, 1 element, 3 ndarray args (µs)"),
    ("launch_args", "launch, 1 element, a numpy array, an i32 and an f32 (µs)"),
    ("compile", "cold compile + first call, simple kernel (ms)"),
    ("p2g_sparse", "sparse P2G, 1M particles into a pointer grid, + struct-for over active cells (ms)"),
    ("diffmpm", "differentiable 2D MPM, 8192 particles, 32 substeps forward + backward (ms)"),
]


def fmt(key: str, v: float | None) -> str:
    if v is None:
        return "–"
    if key.startswith("launch"):
        return f"{v * 1e6:.2f}"
    return f"{v * 1e3:.2f}"


STARTUP_ROWS = [
    # (label, mode, value in ms from a startup.py result)
    ("cold: first calls of all kernels (ms)", "cold", lambda r: r["first_calls"] * 1e3),
    (
        "warm, offline cache only: first call, mean per kernel (ms)",
        "offline",
        lambda r: r["first_calls"] / r["n"] * 1e3,
    ),
    ("warm, fastcache: first call, mean per kernel (ms)", "fastcache", lambda r: r["first_calls"] / r["n"] * 1e3),
    ("warm, fastcache: first call, median kernel (ms)", "fastcache", lambda r: r["median_call"] * 1e3),
    ("warm, fastcache: `import quadrants` (ms)", "fastcache", lambda r: r["import"] * 1e3),
    ("warm, fastcache: ready (import + init + all first calls) (ms)", "fastcache", lambda r: r["ready"] * 1e3),
    ("`qd precompile` of the module, 2 workers (s)", "precompile_s", lambda r: r["wall"]),
    (
        "precompiled, first start: first call, mean per kernel (ms)",
        "precompiled",
        lambda r: r["first_calls"] / r["n"] * 1e3,
    ),
    (
        "precompiled, first start: ready (import + init + all first calls) (ms)",
        "precompiled",
        lambda r: r["ready"] * 1e3,
    ),
]


def startup_lines(startup: dict[str, dict[str, dict[str, float]]]) -> list[str]:
    names = list(startup)
    n = next(iter(startup.values()))["fastcache"]["n"]
    lines = [
        "",
        f"## Start-up: {n} distinct fastcache kernels in a fresh process",
        "",
        "Each run is a new process: import, `qd.init`, import the generated module, call every kernel once "
        "(benchmarks/startup.py). Warm runs: median of the repeats.",
        "",
        "| measure | " + " | ".join(names) + " | Quadrants 1.3.3 / this |",
        "|---" * (len(names) + 2) + "|",
    ]
    ours, ref = startup.get("quadrants (this)"), startup.get("quadrants-1.3.3")
    for label, mode, get in STARTUP_ROWS:
        row = [label] + [f"{get(startup[name][mode]):.3g}" if mode in startup[name] else "–" for name in names]
        both = ours and ref and mode in ours and mode in ref
        row.append(f"{get(ref[mode]) / get(ours[mode]):.1f}x" if both else "–")  # type: ignore[index]
        lines.append("| " + " | ".join(row) + " |")
    if ours:
        per = ours["fastcache"]["first_calls"] / ours["fastcache"]["n"] * 1e3
        ratio = ours["offline"]["first_calls"] / ours["fastcache"]["first_calls"]
        lines += [
            "",
            f"- target ≤ 0.3 ms per kernel at first call on a warm fastcache: {per:.3f} ms "
            f"({'met' if per <= 0.3 else 'NOT met'})",
            f"- target ≥ 10x faster than warm offline cache only: {ratio:.1f}x ({'met' if ratio >= 10 else 'NOT met'})",
            f"- LLVM (llvmlite.binding) imported on the warm fastcache run: {ours['fastcache']['llvmlite_imported']}",
        ]
        if "precompiled" in ours:
            ready = ours["precompiled"]["ready"] * 1e3
            lines.append(f"- target: precompiled, process start to all {n} kernels called once ≤ 150 ms: {ready:.0f} ms "
                         f"({'met' if ready <= 150 else 'NOT met'}); real Quadrants' best (warm fastcache): "
                         + (f"{ref['fastcache']['ready'] * 1e3:.0f} ms" if ref else "–"))  # fmt: skip
        lines.append("- real Quadrants has no precompile step: its best start is the warm fastcache one")
    return lines


def field_lines(cols: dict[str, dict[str, float]]) -> list[str]:
    """The checks beside the SNode and autodiff timings: each system's deposited mass, the pointer grid's memory
    against its active cells' bytes, and the diffmpm gradient of this project against real Quadrants'."""
    ours, real = cols.get("quadrants (this)", {}), cols.get("quadrants-1.3.3", {})
    lines = []
    rounds = int(ours.get("p2g_sparse_rounds", ours.get("diffmpm_rounds", 1)))
    if rounds > 1:
        lines.append(f"- sparse P2G and diffmpm are atomics-bound, and their times swing up to 2x with this shared "
                     f"machine's state on every system: each figure is the median of every timed call of {rounds} "
                     "rounds run one system after the other")
    if "p2g_sparse_mass_err" in ours:
        errs = ", ".join(f"{n} {c['p2g_sparse_mass_err']:.1e}" for n, c in cols.items() if "p2g_sparse_mass_err" in c)
        lines.append(f"- sparse P2G: |deposited mass - particles| / particles: {errs}")
    if "sparse_memory_bytes" in ours:
        active, slots = ours["sparse_memory_active_bytes"], ours["sparse_memory_slot_bytes"]
        grown = ", ".join(f"{n} {c['sparse_memory_bytes'] / 2**20:.1f} MiB" for n, c in cols.items()
                          if "sparse_memory_bytes" in c)  # fmt: skip
        ratio = (ours["sparse_memory_bytes"] + slots) / active
        lines.append(f"- pointer grid, 1024³ index space in 8³ f32 blocks, 1 % of the blocks active "
                     f"({active / 2**20:.1f} MiB of cells): resident memory grown by the activating launch: {grown}; "
                     f"with this project's pointer slots ({slots / 2**20:.1f} MiB, resident from the start) "
                     f"{ratio:.2f}x the active cells' bytes (target <= 2x: {'met' if ratio <= 2 else 'NOT met'})")
    if "diffmpm_grad" in ours and "diffmpm_grad" in real:
        a, b = ours["diffmpm_grad"], real["diffmpm_grad"]
        lines.append(f"- diffmpm d loss / d v0.x: this {a:.7g}, Quadrants 1.3.3 {b:.7g} "
                     f"(relative difference {abs(a - b) / abs(b):.1e})")
    return ["", "SNode and autodiff workloads:", "", *lines] if lines else []


def write_report(cols: dict[str, dict[str, float]], startup: dict[str, dict[str, dict[str, float]]],
                 wall: float, fleet: dict[str, Any] | None = None) -> None:  # fmt: skip
    names = list(cols)
    ours = cols.get("quadrants (this)", {})
    lines = [
        "# Benchmarks",
        "",
        f"Machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}. "
        f"Medians of repeated runs, all systems measured side by side in one `make bench` run ({wall:.0f} s). "
        "Lower is better.",
        "",
        "| workload | " + " | ".join(names) + " | this vs Numba | this vs numpy | this vs Quadrants 1.3.3 |",
        "|---" * (len(names) + 4) + "|",
    ]
    for key, label in ROWS:
        row = [label] + [fmt(key, cols[n].get(key)) for n in names]
        for peer in ("numba", "numpy", "quadrants-1.3.3"):
            a, b = ours.get(key), cols.get(peer, {}).get(key)
            row.append(f"{b / a:.2f}x" if a and b else "–")
        lines.append("| " + " | ".join(row) + " |")
    lines += ["", "Throughput (GB/s moved):", ""]
    for key, nbytes in BYTES.items():
        vals = ", ".join(f"{n} {nbytes / cols[n][key] / 1e9:.1f}" for n in names if cols[n].get(key))
        lines.append(f"- {key}: {vals}")
    if "sum_rel_err" in ours:
        lines.append(f"- sum: |result - exact| / n = {ours['sum_rel_err']:.2e} (f32 accumulation)")
    lines += ["", "`this vs X` is X's time divided by ours: above 1 means we are faster."]
    lines += field_lines(cols)
    if startup:
        lines += startup_lines(startup)
    if fleet:
        lines += fleet_lines(fleet)
    lines.append("")
    (RESULTS / "bench.md").write_text("\n".join(lines))
    (RESULTS / "bench.json").write_text(json.dumps({**cols, "startup": startup, "fleet": fleet or {}}, indent=2,
                                                   sort_keys=True))  # fmt: skip
    print("\n".join(lines))
    try:
        plot(cols, startup)
    except ImportError:
        print("[bench] matplotlib missing: no plot", file=sys.stderr)


def plot(cols: dict[str, dict[str, float]], startup: dict[str, dict[str, dict[str, float]]]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    keys = [k for k, _ in ROWS if any(k in c for c in cols.values())]
    panels = len(keys) + (1 if startup else 0)
    ncol = 3
    nrow = (panels + ncol - 1) // ncol
    fig, axes = plt.subplots(nrow, ncol, figsize=(4.2 * ncol, 3.4 * nrow), squeeze=False)
    for ax, key in zip(axes.flat, keys):
        names = [n for n in cols if key in cols[n]]
        scale, unit = (1e6, "µs") if key.startswith("launch") else (1e3, "ms")
        vals = [cols[n][key] * scale for n in names]
        colors = ["#2b7bba" if n.startswith("quadrants (") else "#aaaaaa" for n in names]
        bars = ax.bar(range(len(names)), vals, color=colors)
        ax.bar_label(bars, labels=[f"{v:.3g}" for v in vals], fontsize=7)
        ax.set_xticks(range(len(names)), names, rotation=30, ha="right", fontsize=7)
        ax.set_title(dict(ROWS)[key].split(" (")[0], fontsize=8)
        ax.set_ylabel(unit + " (lower is better)", fontsize=7)
        ax.set_ylim(0, max(vals) * 1.18)
    if startup:
        plot_startup(list(axes.flat)[len(keys)], startup)
    for ax in list(axes.flat)[panels:]:
        ax.axis("off")
    fig.tight_layout()
    fig.savefig(RESULTS / "bench.png", dpi=110)


def plot_startup(ax, startup: dict[str, dict[str, dict[str, float]]]) -> None:  # type: ignore[no-untyped-def]
    """First call per kernel (mean), cold / warm offline / warm fastcache, one bar group per system; log scale."""
    modes = ["cold", "offline", "fastcache"]
    width = 0.8 / len(startup)
    for j, (name, res) in enumerate(startup.items()):
        vals = [res[m]["first_calls"] / res[m]["n"] * 1e3 for m in modes]
        xs = [i + (j - (len(startup) - 1) / 2) * width for i in range(len(modes))]
        bars = ax.bar(xs, vals, width, label=name, color="#2b7bba" if name.startswith("quadrants (") else "#aaaaaa")
        ax.bar_label(bars, labels=[f"{v:.3g}" for v in vals], fontsize=7)
    ax.set_yscale("log")
    ax.set_xticks(range(len(modes)), ["cold", "warm offline only", "warm fastcache"], fontsize=7)
    n = next(iter(startup.values()))["fastcache"]["n"]
    ax.set_title(f"start-up: first call per kernel, {n} kernels", fontsize=8)
    ax.set_ylabel("ms per kernel, log (lower is better)", fontsize=7)
    ax.legend(fontsize=7)


if __name__ == "__main__":
    raise SystemExit(main())
