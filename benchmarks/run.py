"""`make bench`: run every workload under this project, numpy, Numba and real Quadrants 1.3.3 (each peer in
its own venv, created on first use), side by side in one run; write results/bench.md and results/bench.png.

    python benchmarks/run.py [--only saxpy,sum,...] [--skip-peers]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RESULTS = HERE / "results"
PEERS = {
    "numba": (ROOT / ".venv-numba", ["numba", "numpy"], "bench_numba.py"),
    "quadrants-1.3.3": (ROOT / ".venv-quadrants", ["quadrants==1.3.3"], "bench_qd.py"),
}
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
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", default="")
    ap.add_argument("--skip-peers", action="store_true")
    args = ap.parse_args()
    RESULTS.mkdir(exist_ok=True)
    cols: dict[str, dict[str, float]] = {}
    t0 = time.time()
    cols["quadrants (this)"] = run_json(Path(sys.executable), "bench_qd.py", args.only)
    cols["numpy"] = run_json(Path(sys.executable), "bench_numpy.py", args.only)
    if not args.skip_peers:
        for name, (venv, pkgs, script) in PEERS.items():
            try:
                py = ensure_venv(venv, pkgs)
            except subprocess.CalledProcessError as e:
                print(f"[bench] could not set up {name}: {e}", file=sys.stderr)
                continue
            cols[name] = run_json(py, script, args.only, {"QD_OFFLINE_CACHE": "0"})
    write_report(cols, time.time() - t0)
    return 0


ROWS = [
    ("saxpy", "saxpy, 16M f32 (ms)"),
    ("sum", "sum of 16M f32 by `s[0] += a[i]` (ms)"),
    ("stencil", "5-point stencil 4096² f32 (ms)"),
    ("nbody", "n-body all pairs, 4096 bodies (ms)"),
    ("nbody_vec3", "n-body, vec3 ndarrays, 4096 bodies (ms)"),
    ("launch", "launch, 1 element, 3 ndarray args (µs)"),
    ("compile", "cold compile + first call, simple kernel (ms)"),
]


def fmt(key: str, v: float | None) -> str:
    if v is None:
        return "–"
    if key == "launch":
        return f"{v * 1e6:.2f}"
    return f"{v * 1e3:.2f}"


def write_report(cols: dict[str, dict[str, float]], wall: float) -> None:
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
    lines += ["", "`this vs X` is X's time divided by ours: above 1 means we are faster.", ""]
    (RESULTS / "bench.md").write_text("\n".join(lines))
    (RESULTS / "bench.json").write_text(json.dumps(cols, indent=2, sort_keys=True))
    print("\n".join(lines))
    try:
        plot(cols)
    except ImportError:
        print("[bench] matplotlib missing: no plot", file=sys.stderr)


def plot(cols: dict[str, dict[str, float]]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    keys = [k for k, _ in ROWS if any(k in c for c in cols.values())]
    ncol = 3
    nrow = (len(keys) + ncol - 1) // ncol
    fig, axes = plt.subplots(nrow, ncol, figsize=(4.2 * ncol, 3.4 * nrow), squeeze=False)
    for ax, key in zip(axes.flat, keys):
        names = [n for n in cols if key in cols[n]]
        scale, unit = (1e6, "µs") if key == "launch" else (1e3, "ms")
        vals = [cols[n][key] * scale for n in names]
        colors = ["#2b7bba" if n.startswith("quadrants (") else "#aaaaaa" for n in names]
        bars = ax.bar(range(len(names)), vals, color=colors)
        ax.bar_label(bars, labels=[f"{v:.3g}" for v in vals], fontsize=7)
        ax.set_xticks(range(len(names)), names, rotation=30, ha="right", fontsize=7)
        ax.set_title(dict(ROWS)[key].split(" (")[0], fontsize=8)
        ax.set_ylabel(unit + " (lower is better)", fontsize=7)
        ax.set_ylim(0, max(vals) * 1.18)
    for ax in list(axes.flat)[len(keys) :]:
        ax.axis("off")
    fig.tight_layout()
    fig.savefig(RESULTS / "bench.png", dpi=110)


if __name__ == "__main__":
    raise SystemExit(main())
