"""`make run`: start a fresh process that imports quadrants, compiles and runs the diffusion example, and
report where the start-up time goes."""

from __future__ import annotations

import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))

CHILD = r"""
import time
t0 = time.perf_counter()
import quadrants as qd
t1 = time.perf_counter()
import sys
sys.path.insert(0, {here!r})
import diffusion
r = diffusion.main(512, 200)
print(f"import quadrants:        {{(t1 - t0) * 1e3:7.1f}} ms")
print(f"compile + first call:    {{r['first_call_s'] * 1e3:7.1f}} ms")
print(f"200 diffusion steps:     {{r['run_s'] * 1e3:7.1f}} ms (512x512)")
print(f"max |quadrants - numpy|: {{r['max_err']:.2e}}")
print("compiles:", qd.stats()["compiles"])
"""


def main() -> int:
    t = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", CHILD.format(here=HERE)], env={**os.environ, "QD_LOG_LEVEL": "warn"})
    print(f"process total:           {(time.perf_counter() - t) * 1e3:7.1f} ms")
    return proc.returncode


if __name__ == "__main__":
    raise SystemExit(main())
