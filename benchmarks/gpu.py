"""GPU benchmarks (run on a machine with an NVIDIA GPU; benchmarks/gpu_check.sh runs them with the GPU tests).

    python benchmarks/gpu.py [--out DIR] [--startup-kernels 200]

- saxpy and a 5-point stencil on large arrays: achieved bandwidth, beside a plain copy kernel measured in the
  same run (the practical peak) and the device's nominal figure (`--peak-gbs`, default 4300 for an H200);
- warm start of the generated 200-kernel module (benchmarks/startup.py): cold, warm fastcache and precompiled
  for this GPU's architecture; real Quadrants 1.3.3 beside it when `--quadrants-python` names its venv's python.
Writes gpu.md and gpu.json into --out.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from common import median_time  # noqa: E402


def timed(fn, repeat: int = 20) -> float:  # type: ignore[no-untyped-def]
    """Median seconds of `fn` plus the wait for the GPU to finish it."""
    import quadrants as qd

    return median_time(lambda: (fn(), qd.sync()), repeat=repeat)


def kernels_bench() -> dict[str, float]:
    import quadrants as qd

    qd.init(arch=qd.cuda, log_level="warn")
    dev = qd.lang.program.get().device
    assert dev is not None and not dev.emulated, "no GPU"
    Nd = qd.types.NDArray

    @qd.kernel
    def copy(x: Nd[qd.f32, 1], y: Nd[qd.f32, 1]):
        for i in range(x.shape[0]):
            y[i] = x[i]

    @qd.kernel
    def saxpy(a: qd.f32, x: Nd[qd.f32, 1], y: Nd[qd.f32, 1]):
        for i in range(x.shape[0]):
            y[i] = a * x[i] + y[i]

    @qd.kernel
    def stencil(u: Nd[qd.f32, 2], v: Nd[qd.f32, 2]):
        for i, j in u:
            if 0 < i < u.shape[0] - 1 and 0 < j < u.shape[1] - 1:
                v[i, j] = 0.25 * (u[i - 1, j] + u[i + 1, j] + u[i, j - 1] + u[i, j + 1])

    n = 1 << 28  # 1 GiB per f32 array
    x, y = qd.ndarray(qd.f32, (n,)), qd.ndarray(qd.f32, (n,))
    x.fill(1.0)
    y.fill(2.0)
    side = 16384
    u, v = qd.ndarray(qd.f32, (side, side)), qd.ndarray(qd.f32, (side, side))
    u.fill(1.0)
    out = {"arch": dev.arch, "sms": dev.multiprocessors}
    out["copy_s"] = timed(lambda: copy(x, y))
    out["saxpy_s"] = timed(lambda: saxpy(2.0, x, y))
    out["stencil_s"] = timed(lambda: stencil(u, v))
    out["copy_gbs"] = 2 * 4 * n / out["copy_s"] / 1e9
    out["saxpy_gbs"] = 3 * 4 * n / out["saxpy_s"] / 1e9
    out["stencil_gbs"] = 2 * 4 * side * side / out["stencil_s"] / 1e9
    return out


def startup(python: str, n: int, target: str | None) -> dict:  # type: ignore[type-arg]
    with tempfile.TemporaryDirectory(prefix="qd-gpu-startup-") as work:
        cmd = [python, str(HERE / "startup.py"), "run", "--python", python, "--workdir", work, "-n", str(n),
               "--repeat", "3", "--arch", "cuda"] + (["--precompile", "--target", target] if target else [])  # fmt: skip
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=3600)
    if proc.returncode != 0:
        return {"error": proc.stderr[-2000:]}
    return json.loads(proc.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.environ.get("OUT", str(HERE / "results")))
    ap.add_argument("--startup-kernels", type=int, default=200)
    ap.add_argument("--peak-gbs", type=float, default=4300.0)
    ap.add_argument("--quadrants-python", default="")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    res = {"kernels": kernels_bench()}
    arch = res["kernels"]["arch"]
    res["startup"] = startup(sys.executable, args.startup_kernels, f"cuda:{arch}")
    if args.quadrants_python:
        res["startup_quadrants_1_3_3"] = startup(args.quadrants_python, args.startup_kernels, None)
    k = res["kernels"]
    lines = [
        f"# GPU benchmarks ({arch}, {k['sms']} SMs)",
        "",
        "| workload | ms | GB/s | of copy kernel | of nominal peak |",
        "|---|---|---|---|---|",
    ]
    for name in ("copy", "saxpy", "stencil"):
        gbs = k[f"{name}_gbs"]
        lines.append(f"| {name} | {k[f'{name}_s'] * 1e3:.3f} | {gbs:.0f} | {gbs / k['copy_gbs']:.0%} | "
                     f"{gbs / args.peak_gbs:.0%} |")  # fmt: skip
    lines += ["", f"Target: saxpy and stencil at >= 70% of the device's bandwidth ({args.peak_gbs:.0f} GB/s nominal)."]
    for key, label in (("startup", "this project"), ("startup_quadrants_1_3_3", "real Quadrants 1.3.3")):
        st = res.get(key)
        if not st or "error" in st:
            continue
        lines.append(f"\n## Start-up, {args.startup_kernels} kernels on the GPU: {label}\n")
        for mode in ("cold", "fastcache", "precompiled"):
            if mode in st:
                r = st[mode]
                lines.append(f"- {mode}: ready {r['ready'] * 1e3:.0f} ms, first call {r['first_calls'] / r['n'] * 1e3:.3f} "
                             f"ms per kernel")  # fmt: skip
    Path(args.out, "gpu.md").write_text("\n".join(lines) + "\n")
    Path(args.out, "gpu.json").write_text(json.dumps(res, indent=2, default=float))
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
