"""Start-up benchmark: a generated module of N distinct fastcache kernels, timed in fresh processes.

For each system: a cold run (empty cache), a warm run with only the offline cache (fastcache off:
`src_ll_cache=False`), and a warm fastcache run; with `--precompile` (this project only), a run on a fresh
cache that `qd precompile` filled from a generated manifest. Each run is a fresh process that imports the package, calls
`qd.init`, imports the module and calls every kernel once; it reports those phases separately.

    python startup.py child --workdir DIR --cache DIR --mode cold|offline|fastcache   (one measured process)
    python startup.py run --python PY --workdir DIR [-n 200]                         (the three runs, JSON)
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

KERNEL = """
@qd.kernel(fastcache=True)
def k_{i}(a: qd.types.NDArray[qd.f32, 1], b: qd.types.NDArray[qd.f32, 1]):
    for j in range(a.shape[0]):
        v = a[j] * {i}.25 + {i}
        if v > {i}.5:
            v = v - 1.0
        b[j] = {call} + b[j]
"""
FUNC = """
@qd.func
def f_{k}(x):
    return x * {k}.5 + 1.0
"""


def generate(path: str, n: int) -> None:
    parts = ["import quadrants as qd\n"]
    parts += [FUNC.format(k=k) for k in range(10)]
    for i in range(n):
        call = f"f_{i % 10}(v)" if i % 2 else "v * 2.0"
        parts.append(KERNEL.format(i=i, call=call))
    parts.append(f"\nKERNELS = [{', '.join(f'k_{i}' for i in range(n))}]\n")
    with open(path, "w") as f:
        f.write("".join(parts))


def manifest(n: int, cache: str, target: str = "host") -> str:
    """The qd.toml of the generated module: every kernel's parameters are fixed by its annotations."""
    kernels = "".join(f'\n[[kernel]]\nname = "gen_kernels:k_{i}"\n' for i in range(n))
    return f'modules = ["gen_kernels"]\ncache_dir = {cache!r}\ntargets = ["{target}"]\n' + kernels


def child(args: argparse.Namespace) -> None:
    t0 = time.perf_counter()
    import quadrants as qd

    t1 = time.perf_counter()
    qd.init(arch=qd.cuda if args.arch == "cuda" else qd.cpu, offline_cache=True, offline_cache_file_path=args.cache,
            src_ll_cache=args.mode != "offline", log_level="error")  # fmt: skip
    t2 = time.perf_counter()
    sys.path.insert(0, args.workdir)
    import gen_kernels

    t3 = time.perf_counter()
    a = qd.ndarray(qd.f32, (16,))
    b = qd.ndarray(qd.f32, (16,))
    per = []
    for k in gen_kernels.KERNELS:
        s = time.perf_counter()
        k(a, b)
        per.append(time.perf_counter() - s)
    qd.sync()
    t4 = time.perf_counter()
    per.sort()
    stats = qd.stats() if hasattr(qd, "stats") else {"compiles": None, "cache": {}}  # real Quadrants has none
    out = {"import": t1 - t0, "init": t2 - t1, "module": t3 - t2, "first_calls": t4 - t3,
           "median_call": per[len(per) // 2], "ready": t4 - t0, "n": len(per),
           "llvmlite_imported": "llvmlite.binding" in sys.modules, "compiles": stats["compiles"],
           "remote_bytes_in": stats["cache"].get("remote_bytes_in", 0)}  # fmt: skip
    print(json.dumps(out))


def run(args: argparse.Namespace) -> None:
    os.makedirs(args.workdir, exist_ok=True)
    generate(os.path.join(args.workdir, "gen_kernels.py"), args.n)
    cache = tempfile.mkdtemp(prefix="qd-startup-cache-")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}  # measure with bytecode
    env["QD_LOG_LEVEL"] = "error"
    subprocess.run([args.python, "-m", "compileall", "-q", args.workdir], env=env, check=False)
    results = {}
    modes = ["cold", "offline", "fastcache"]
    if args.precompile:
        modes.append("precompiled")
    try:
        for mode in modes:
            if mode == "precompiled":  # a fresh cache filled by `qd precompile`, no earlier run
                shutil.rmtree(cache, ignore_errors=True)
                with open(os.path.join(args.workdir, "qd.toml"), "w") as f:
                    f.write(manifest(args.n, cache, args.target))
                t = time.perf_counter()
                proc = subprocess.run([args.python, "-m", "quadrants_cli.main", "precompile", "--json"],
                                      cwd=args.workdir, env=env, capture_output=True, text=True, timeout=3600)  # fmt: skip
                if proc.returncode != 0:
                    raise RuntimeError(f"qd precompile failed:\n{proc.stdout[-2000:]}{proc.stderr[-2000:]}")
                results["precompile_s"] = {"wall": time.perf_counter() - t}
            child_mode = "fastcache" if mode == "precompiled" else mode
            cmd = [args.python, os.path.abspath(__file__), "child", "--workdir", args.workdir, "--cache", cache,
                   "--mode", child_mode, "--arch", args.arch]  # fmt: skip
            samples = []
            for _ in range(1 if mode == "cold" else args.repeat):
                proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=1800)
                if proc.returncode != 0:
                    raise RuntimeError(f"{mode} run failed:\n{proc.stderr[-3000:]}")
                samples.append(json.loads(proc.stdout.strip().splitlines()[-1]))
            samples.sort(key=lambda r: r["first_calls"])
            results[mode] = samples[len(samples) // 2]
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    print(json.dumps(results))


def main() -> None:
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("child")
    c.add_argument("--workdir", required=True)
    c.add_argument("--cache", required=True)
    c.add_argument("--mode", required=True)
    c.add_argument("--arch", default="cpu")
    r = sub.add_parser("run")
    r.add_argument("--python", default=sys.executable)
    r.add_argument("--workdir", required=True)
    r.add_argument("-n", type=int, default=200)
    r.add_argument("--repeat", type=int, default=3)
    r.add_argument("--precompile", action="store_true", help="also: qd precompile into a fresh cache, then start")
    r.add_argument("--arch", default="cpu", help="cpu or cuda")
    r.add_argument("--target", default="host", help="the precompile target (cuda:sm_90 with --arch cuda)")
    args = ap.parse_args()
    child(args) if args.cmd == "child" else run(args)


if __name__ == "__main__":
    main()
