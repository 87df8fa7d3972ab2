"""numpy baselines for the same workloads (runs in the project venv). Prints JSON."""

from __future__ import annotations

import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from common import emit, median_time  # noqa: E402

N = 1 << 24
STENCIL = 4096


def main() -> None:
    rng = np.random.default_rng(0)
    x, y = rng.random(N, np.float32), rng.random(N, np.float32)
    out = {}
    out["saxpy"] = median_time(lambda: np.add(np.multiply(np.float32(2.0), x, out=x), y, out=y))
    out["sum"] = median_time(lambda: np.sum(x))
    u, v = rng.random((STENCIL, STENCIL), np.float32), np.zeros((STENCIL, STENCIL), np.float32)

    def stencil() -> None:
        v[1:-1, 1:-1] = np.float32(0.25) * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])

    out["stencil"] = median_time(stencil)
    xr = np.zeros(1 << 22, np.float32)
    out["random"] = median_time(lambda: rng.random(dtype=np.float32, out=xr))  # one thread
    emit(out)


if __name__ == "__main__":
    main()
