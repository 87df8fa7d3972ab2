"""Process-wide counters, readable with `qd.stats()`: compiles and seconds per compiler stage, cache hits and
misses, and seconds spent looking up and loading cached code. Light: imported on the fastcache path."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class Stats:
    compiles: int = 0
    stage_seconds: dict[str, float] = field(default_factory=dict)
    cache: dict[str, int] = field(default_factory=dict)

    def add(self, timings: dict[str, float]) -> None:
        """One compile and the seconds of its stages."""
        self.compiles += 1
        for k, v in timings.items():
            self.time(k, v)

    def time(self, stage: str, seconds: float) -> None:
        self.stage_seconds[stage] = self.stage_seconds.get(stage, 0.0) + seconds

    def count(self, what: str, n: int = 1) -> None:
        self.cache[what] = self.cache.get(what, 0) + n

    def snapshot(self) -> dict[str, Any]:
        keys = ("fastcache_hits", "fastcache_misses", "fastcache_stores", "fastcache_fallbacks", "offline_hits",
                "offline_misses", "memory_hits", "baseline_hits", "corrupt_entries", "write_failures", "evicted", "remote_hits", "remote_misses", "remote_pushes",
                "remote_errors", "remote_rejected", "remote_bytes_in", "remote_bytes_out")  # fmt: skip
        return {
            "compiles": self.compiles,
            "stage_seconds": dict(self.stage_seconds),
            "cache": {k: self.cache.get(k, 0) for k in keys},
            # kernels also compiled for the GPU and assembled by ptxas (the `ptx_check` option; 0 without it)
            "ptx_checked": self.cache.get("ptx_checked", 0),
        }


STATS = Stats()
