"""Fastcache entries: found by a key made without the frontend, trusted only after their records are re-checked.

A `fast` entry (JSON only) maps a fastcache key to the artifact key of the code, its symbol and ABI, and what
the key could not contain: the funcs the kernel reached (`source.FuncRecord`) and the outside values it read
(`fingerprint.CaptureRecord`). `FastEntries.find` returns an entry only when every record still holds, so a
changed func or global is a miss, never stale code. Entries that name a bundle are also listed in that bundle's
index: once a process has opened the bundle, its other kernels are found without reading a file.

`Session` collects what this process compiled so that, at exit, `finish` links it into one bundle and points
the entries at it (and adds this process's counters to `stats.json`).

Nothing here compiles or loads code: the driver (quadrants/driver/) does, with the entries found here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from quadrants import _logging
from quadrants._config import Config
from quadrants._stats import STATS
from quadrants.cache import bundle
from quadrants.cache.source import FuncRecord, func_unchanged, resolve_name
from quadrants.cache.store import CacheStore, Entry

CODE_DAMAGED = "the compiled code was damaged (removed; compiled again)"


class FastEntries:
    """The fastcache entries of one store, and the bundle indexes this process has read."""

    def __init__(self, store: CacheStore) -> None:
        self.store = store
        self.index: dict[str, dict[str, Any]] = {}  # fastcache key -> entry, from the bundles opened
        self._bundles_whole: dict[str, bool] = {}  # bundle key -> present and undamaged (probe)

    def indexed(self, fn: Callable[..., Any], fast_key: str) -> dict[str, Any] | None:
        """The entry for `fast_key` from a bundle already opened, if its records still hold."""
        meta = self.index.get(fast_key)
        return meta if meta is not None and self.valid(fn, meta) else None

    def read(self, fn: Callable[..., Any], fast_key: str) -> dict[str, Any] | None:
        """The entry for `fast_key` from its file, if there is one and its records still hold."""
        entry = self.store.read("fast", fast_key)
        return entry.meta if entry is not None and self.valid(fn, entry.meta) else None

    def findable(self, fn: Callable[..., Any], fast_key: str) -> tuple[dict[str, Any] | None, str | None]:
        """(the entry, None) when a lookup would find its code, else (None, why not). Reads entries (checksums
        included; a damaged one is removed) and loads nothing. An artifact that is there must be intact even when
        a whole bundle serves the kernel: a damaged one is rebuilt by precompile, not reported as already cached
        (one evicted while its bundle stays is fine: the bundle serves it)."""
        entry = self.store.read("fast", fast_key)
        if entry is None:
            return None, "no fastcache entry"
        if not self.valid(fn, entry.meta):
            return None, "a func or a value the kernel reads changed since it was compiled"
        meta = entry.meta
        okey = meta["artifact"]
        if self.store.has("artifact", okey):
            if self.store.read("artifact", okey) is None:
                return None, CODE_DAMAGED
            return meta, None
        if "bundle" in meta and self.bundle_whole(meta["bundle"]):
            return meta, None
        return None, "the compiled code is missing or damaged"

    def bundle_whole(self, bkey: str) -> bool:
        ok = self._bundles_whole.get(bkey)
        if ok is None:
            ok = self._bundles_whole[bkey] = self.store.read("bundle", bkey) is not None
        return ok

    def add_index(self, bkey: str, entry: Entry) -> None:
        """Remember the entries a bundle lists (called when the driver opens it)."""
        for k, m in entry.meta.get("index", {}).items():
            self.index.setdefault(k, {**m, "bundle": bkey})

    def valid(self, fn: Callable[..., Any], meta: dict[str, Any]) -> bool:
        """The funcs the kernel reached and the outside values it read are as they were when compiled."""
        for rec in meta.get("funcs", []):
            if not func_unchanged(FuncRecord(**rec), fn):
                _logging.debug(f"fastcache: {rec['qualname']} changed since the entry was made", tag="fastcache")
                return False
        for rec in meta.get("captures", []):
            if not capture_unchanged(rec, fn):
                _logging.debug(f"fastcache: the value of {rec['name']} changed", tag="fastcache")
                return False
        return True

    def write(self, fast_key: str, meta: dict[str, Any]) -> bool:
        ok = self.store.write("fast", fast_key, b"", meta) is not None
        if ok:
            STATS.count("fastcache_stores")
        return ok


def capture_unchanged(raw: dict[str, Any], kernel_fn: Callable[..., Any]) -> bool:
    from quadrants.cache.fingerprint import CaptureRecord, current_value, fingerprint  # only for kernels with reads

    rec = CaptureRecord.from_json(raw)
    if rec.where == "class":
        fn = None
    else:
        fn = kernel_fn if rec.owner == "kernel" else resolve_name(rec.owner)
        if fn is None:
            return False
    try:
        value = current_value(rec, fn)
    except (KeyError, AttributeError, ValueError):
        return False
    return fingerprint(value) == rec.fingerprint


class Session:
    """What this process compiled into a store: bundled together at exit."""

    def __init__(self) -> None:
        self.objects: dict[str, bytes] = {}  # artifact key -> object code
        self.fast: dict[str, dict[str, Any]] = {}  # fastcache key -> the entry written

    def finish(self, store: CacheStore, config: Config, device: str, linker: Callable[[], str | None]) -> str | None:
        """Link the kernels compiled here into one bundle and point their fastcache entries at it, so the next
        process opens one library instead of one per kernel. Returns the bundle's path. `linker()` is asked
        only when there is something to link (finding it imports subprocess). The driver records the counters
        afterwards (`record_counters`)."""
        fast = {k: m for k, m in self.fast.items() if m["artifact"] in self.objects}
        path_to_linker = linker() if len(fast) >= 2 else None
        if path_to_linker is None:
            return None  # no session bundle: the kernels load one by one
        try:
            path = bundle.publish(store, config, device, fast, self.objects, path_to_linker)
        except bundle.BundleError as e:
            _logging.debug(f"no session bundle: {e}", tag="cache")
            return None
        self.objects.clear()
        self.fast.clear()
        return path


def record_counters(store: CacheStore) -> None:
    """Add this process's hits and misses to the cache's `stats.json` (for `qd cache stats`): once per process
    and cache, at exit, and never into a cache that refused writes."""
    if store.root_refused or store.root in _RECORDED:
        return
    counts = {k: v for k, v in STATS.cache.items() if v}
    if not counts:
        return
    _RECORDED.add(store.root)
    totals = store.read_json("stats.json")
    for k, v in counts.items():
        totals[k] = int(totals.get(k, 0)) + v
    totals["processes"] = int(totals.get("processes", 0)) + 1
    totals["compiles"] = int(totals.get("compiles", 0)) + STATS.compiles
    store.write_json("stats.json", totals)


_RECORDED: set[str] = set()  # cache roots whose stats.json this process has updated
