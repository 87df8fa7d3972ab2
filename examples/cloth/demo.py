"""`make run`: the cloth example end to end - a cold start, `qd precompile`, then precompiled starts.

Each start is a fresh process running run.py; the cold one gets an empty cache, the precompiled ones the cache
`qd precompile` filled from qd.toml. Prints where the start-up time goes in each.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
CACHE = os.path.join(HERE, ".qd-cache")


def run_app(cache: str) -> dict:
    env = {**os.environ, "QD_CACHE_DIR": cache, "QD_LOG_LEVEL": "warn"}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    proc = subprocess.run([sys.executable, os.path.join(HERE, "run.py"), "--json"], env=env, capture_output=True,
                          text=True, timeout=600)  # fmt: skip
    if proc.returncode != 0:
        sys.exit(f"run.py failed:\n{proc.stderr}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="qd-cold-") as cold_cache:
        print("1. cold start (empty cache): every kernel is parsed and compiled at its first call")
        cold = run_app(cold_cache)
    print("2. qd precompile (qd.toml) ...")
    t = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "quadrants_cli.main", "precompile", "--json", "-m",
                           os.path.join(HERE, "qd.toml")], capture_output=True, text=True, cwd=HERE)  # fmt: skip
    precompile_s = time.perf_counter() - t
    if proc.returncode != 0:
        print(proc.stdout, proc.stderr)
        return proc.returncode
    report = json.loads(proc.stdout)
    print(f"   {report['signatures']} signatures of {report['kernels']} kernels: {report['compiled']} compiled, "
          f"{report['cached']} already cached, in {precompile_s:.2f} s -> {report['cache_dir']}")  # fmt: skip
    print("3. precompiled starts (3 fresh processes)")
    warm_runs = [run_app(CACHE) for _ in range(3)]
    warm = sorted(warm_runs, key=lambda r: r["ready_ms"])[1]
    rows = [
        ("process start -> ready (ms)", "ready_ms", "{:.0f}"),
        ("  import quadrants + cloth (ms)", "import_ms", "{:.0f}"),
        ("  first frame, first calls (ms)", "first_frame_ms", "{:.1f}"),
        ("kernels compiled", "compiles", "{}"),
        ("fastcache hits", "fastcache_hits", "{}"),
        ("llvmlite imported", "llvmlite_imported", "{}"),
        ("later frames (ms each)", "frame_ms", "{:.2f}"),
    ]
    print(f"\n{'':34}{'cold':>12}{'precompiled':>14}")
    for label, key, fmt in rows:
        print(f"{label:34}{fmt.format(cold[key]):>12}{fmt.format(warm[key]):>14}")
    print(f"\nstart-up {cold['ready_ms'] / warm['ready_ms']:.1f}x faster precompiled "
          f"(median of {len(warm_runs)}: {statistics.median(r['ready_ms'] for r in warm_runs):.0f} ms); "
          f"same result: {abs(cold['potential'] - warm['potential']) < 1e-6 * max(1.0, abs(cold['potential']))}")  # fmt: skip
    return 0


if __name__ == "__main__":
    if "--clean" in sys.argv:
        shutil.rmtree(CACHE, ignore_errors=True)
    raise SystemExit(main())
