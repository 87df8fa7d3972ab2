"""Timing helpers shared by the benchmark scripts (each runs in its own venv and prints JSON)."""

from __future__ import annotations

import json
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any


def sample_times(fn: Callable[[], Any], repeat: int = 15, warmup: int = 2) -> list[float]:
    """Seconds of each of `repeat` calls of `fn` (after `warmup` calls)."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return times


def median_time(fn: Callable[[], Any], repeat: int = 15, warmup: int = 2) -> float:
    """Median seconds per call of `fn` over `repeat` runs (after `warmup` calls)."""
    return statistics.median(sample_times(fn, repeat, warmup))


def per_call(fn: Callable[[], Any], calls: int = 20000, repeat: int = 7) -> float:
    """Median seconds per call for a very short call, timed in batches."""
    for _ in range(1000):
        fn()
    samples = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        samples.append((time.perf_counter() - t0) / calls)
    return statistics.median(samples)


def selection() -> Callable[[str], bool]:
    """`--only a,b` on the command line -> whether to run a workload (all when not given)."""
    import argparse

    ap = argparse.ArgumentParser()
    ap.add_argument("--only", default="")
    only = set(filter(None, ap.parse_args().only.split(",")))
    return lambda name: not only or name in only


def emit(results: dict[str, Any]) -> None:
    json.dump(results, sys.stdout)
    sys.stdout.write("\n")
