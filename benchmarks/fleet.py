"""Fleet benchmark: runner processes with separate local caches sharing one Redis (docs/remote-cache.md), on the
generated module of N fastcache kernels (benchmarks/startup.py).

    python fleet.py [-n 200] [--repeat 3] [--shards 4]     (JSON on stdout; needs redis-server and redis-py)

Measures, each in fresh processes:
- local precompiled start: `qd precompile` into a local cache, then a process calls every kernel once (ready =
  process start to all kernels called), the median of the repeats: the baseline;
- (a) a fresh runner: an empty local cache and a warm remote (filled by the shards and the bundle run), ready
  time and compiles (target: ready <= 2x the local precompiled start, no compile), one at a time and 4 at once;
- (b) one `qd precompile` (1 worker) against N shards (`--shard K/N`, 1 worker each, own local caches): each
  shard's wall time (the fleet's time when each shard has its own machine), all N at once on this machine,
  and the run without --shard that pulls everything and links the bundle;
- (c) bytes moved per kernel: pulled by a fresh runner, pushed by the shards and the bundle run (the store's
  total size).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from startup import generate, manifest  # noqa: E402


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Redis:
    def __init__(self, folder: str) -> None:
        import redis

        self.port = free_port()
        self.proc = subprocess.Popen(["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
                                      "--appendonly", "no", "--dir", folder], stdout=subprocess.DEVNULL)  # fmt: skip
        self.client = redis.Redis(port=self.port)
        for _ in range(200):
            try:
                self.client.ping()
                return
            except redis.ConnectionError:
                time.sleep(0.05)
        raise RuntimeError("redis-server did not start")

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def stored_bytes(self) -> int:
        return sum(self.client.strlen(k) for k in self.client.scan_iter("qd:*"))

    def stop(self) -> None:
        self.proc.kill()
        self.proc.wait()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("-n", type=int, default=200)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--shards", type=int, default=4)
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="qd-fleet-")
    env = {k: v for k, v in os.environ.items() if not k.startswith("QD_") and k != "PYTHONDONTWRITEBYTECODE"}
    env["QD_LOG_LEVEL"] = "error"
    server = Redis(work)
    py = sys.executable
    try:
        proj = os.path.join(work, "proj")
        os.makedirs(proj)
        generate(os.path.join(proj, "gen_kernels.py"), args.n)
        with open(os.path.join(proj, "qd.toml"), "w") as f:
            f.write(manifest(args.n, "unused"))
        subprocess.run([py, "-m", "compileall", "-q", proj], env=env, check=False)

        def precompile(cache: str, *extra: str, remote: bool = True) -> subprocess.Popen[str]:
            e = {**env, **({"QD_REMOTE_CACHE": server.url} if remote else {})}
            return subprocess.Popen([py, "-m", "quadrants_cli.main", "precompile", "--json", "-j", "1", "--cache-dir",
                                     cache, *extra], cwd=proj, env=e, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                    text=True)  # fmt: skip

        def finish(proc: subprocess.Popen[str]) -> dict:
            out, err = proc.communicate(timeout=3600)
            if proc.returncode != 0:
                raise RuntimeError(f"qd precompile failed:\n{out[-2000:]}{err[-2000:]}")
            return json.loads(out)

        def start(cache: str, remote: bool) -> subprocess.Popen[str]:
            e = {**env, **({"QD_REMOTE_CACHE": server.url} if remote else {})}
            return subprocess.Popen([py, os.path.join(HERE, "startup.py"), "child", "--workdir", proj, "--cache",
                                     cache, "--mode", "fastcache"], env=e, stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, text=True)  # fmt: skip

        def ready(proc: subprocess.Popen[str]) -> dict:
            out, err = proc.communicate(timeout=1800)
            if proc.returncode != 0:
                raise RuntimeError(f"runner failed:\n{err[-3000:]}")
            return json.loads(out.strip().splitlines()[-1])

        def median(xs: list[float]) -> float:
            return sorted(xs)[len(xs) // 2]

        res: dict = {"n": args.n, "shards": args.shards, "cores": os.cpu_count()}
        # baseline: one precompile, local only
        t = time.perf_counter()
        finish(precompile(os.path.join(work, "local"), remote=False))
        res["precompile_one_s"] = time.perf_counter() - t
        runs = [ready(start(os.path.join(work, "local"), remote=False)) for _ in range(args.repeat)]
        res["local_precompiled_ready_ms"] = median([r["ready"] for r in runs]) * 1e3
        # (b) the shards, one at a time (each its own machine), then all at once, then the bundle run
        walls = []
        pushed = 0
        for k in range(1, args.shards + 1):
            t = time.perf_counter()
            pushed += finish(precompile(os.path.join(work, f"shard{k}"), "--shard", f"{k}/{args.shards}"))["pushed"]
            walls.append(time.perf_counter() - t)
        res["shard_walls_s"] = walls
        res["pushed_entries_by_shards"] = pushed
        server.client.flushall()
        t = time.perf_counter()
        procs = [precompile(os.path.join(work, f"par{k}"), "--shard", f"{k}/{args.shards}")
                 for k in range(1, args.shards + 1)]  # fmt: skip
        for p in procs:
            finish(p)
        res["shards_at_once_here_s"] = time.perf_counter() - t
        t = time.perf_counter()
        gather = finish(precompile(os.path.join(work, "gather")))
        res["bundle_run_s"] = time.perf_counter() - t
        res["bundle_run_compiled"], res["bundle_run_pulled"] = gather["compiled"], gather["pulled"]
        res["remote_stored_bytes_per_kernel"] = server.stored_bytes() / args.n
        # (a) fresh runners: empty local caches, warm remote
        fresh = []
        for i in range(args.repeat):
            fresh.append(ready(start(os.path.join(work, f"fresh{i}"), remote=True)))
        res["fresh_runner_ready_ms"] = median([r["ready"] for r in fresh]) * 1e3
        res["fresh_runner_compiles"] = max(r["compiles"] for r in fresh)
        res["fresh_runner_bytes_pulled_per_kernel"] = median([r["remote_bytes_in"] for r in fresh]) / args.n
        fleet = [start(os.path.join(work, f"fleet{i}"), remote=True) for i in range(4)]
        fleet_out = [ready(p) for p in fleet]
        res["fleet_of_4_at_once_ready_ms"] = sorted(r["ready"] * 1e3 for r in fleet_out)
        res["fleet_of_4_compiles"] = sum(r["compiles"] for r in fleet_out)
        res["ratio_fresh_to_local"] = res["fresh_runner_ready_ms"] / res["local_precompiled_ready_ms"]
        res["target_met"] = res["ratio_fresh_to_local"] <= 2.0 and res["fresh_runner_compiles"] == 0
    finally:
        server.stop()
        shutil.rmtree(work, ignore_errors=True)
    print(json.dumps(res, indent=2))


if __name__ == "__main__":
    main()
