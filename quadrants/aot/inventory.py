"""What `qd cache` shows and does: the entries of a cache directory, their totals, verification and
size-bounded clean-up (why a kernel's signature misses is quadrants.aot.explain). Library functions returning
data; the CLI prints.
"""

from __future__ import annotations

import json
import os
import stat
import struct
from dataclasses import dataclass, field
from typing import Any

from quadrants.cache import bookkeeping, trust
from quadrants.cache.store import KIND_CODES, TRAILER, CacheStore, CorruptEntry, decode

LISTED_KINDS = ("fastcache", "offline", "bundle", "runtime")  # the kinds of `qd cache ls` rows (and stats)
MAX_ENTRY_BYTES = 1 << 31  # `verify` reads no more than this of one file (a real entry is far smaller)


@dataclass
class EntryInfo:
    kind: str  # artifact | fast | bundle | runtime
    key: str
    path: str
    size: int
    last_used: float  # mtime: refreshed by hits (at most hourly)
    meta: dict[str, Any] = field(default_factory=dict)
    problem: str | None = None  # why it does not decode

    @property
    def name(self) -> str:
        return str(self.meta.get("name") or self.meta.get("kernel") or "")

    @property
    def target(self) -> str:
        return str(self.meta.get("target", ""))

    @property
    def signature(self) -> str:
        return str(self.meta.get("parts", {}).get("signature", ""))


def open_store(root: str) -> CacheStore:
    """The store of a cache directory (as given to qd.init / QD_CACHE_DIR), without a size bound."""
    return CacheStore(root, max_bytes=0, policy="never")


def scan(store: CacheStore, kinds: tuple[str, ...] = tuple(KIND_CODES), read: bool = True) -> list[EntryInfo]:
    """Every entry of these kinds; with `read`, decoded (checksums verified, metadata filled in)."""
    out = []
    for kind in kinds:
        base = os.path.join(store.root, kind)
        if not os.path.isdir(base):
            continue
        for folder, _, files in os.walk(base):  # os.walk does not follow symlinked folders
            for f in sorted(files):
                if not f.endswith(".qd"):
                    continue
                path = os.path.join(folder, f)
                try:
                    st = os.lstat(path)
                except OSError:
                    continue
                info = EntryInfo(kind, f[:-3], path, st.st_size, st.st_mtime)
                if not stat.S_ISREG(st.st_mode):  # a symlink, FIFO or device is never opened
                    info.problem = "not a regular file (a symlink, FIFO or device)"
                elif read:
                    info.problem = _read_entry(info, store)
                out.append(info)
    return out


def _read_entry(info: EntryInfo, store: CacheStore) -> str | None:
    """Decode one entry file (its metadata into `info`); why it is damaged or untrusted, or None."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(info.path, flags)
    except OSError as e:
        return e.strerror or type(e).__name__
    with os.fdopen(fd, "rb") as fh:
        st = os.fstat(fh.fileno())
        if not stat.S_ISREG(st.st_mode):
            return "not a regular file"
        why = trust.problem(st) or trust.folder_problem(os.path.dirname(info.path), os.path.dirname(store.root))
        if why is not None:
            return f"untrusted: {why}"
        if st.st_size > MAX_ENTRY_BYTES:
            return f"too large ({st.st_size} bytes)"
        try:
            _, info.meta = decode(fh.read(st.st_size), info.kind, info.key)
        except (OSError, CorruptEntry, ValueError) as e:
            return str(e) or type(e).__name__
    return None


@dataclass
class Listing:
    """`qd cache ls`: one row per fastcache entry (kernel, signature, target), one per artifact no fastcache
    entry points to (offline-cache kernels), and the bundles and runtimes."""

    rows: list[dict[str, Any]]


def listing(store: CacheStore) -> Listing:
    entries = scan(store)
    artifacts = {e.key: e for e in entries if e.kind == "artifact"}
    bundles = {e.key: e for e in entries if e.kind == "bundle"}
    rows = []
    referenced = set()
    for e in entries:
        if e.kind != "fast" or e.problem:
            continue
        art = artifacts.get(e.meta.get("artifact", ""))
        referenced.add(e.meta.get("artifact"))
        bundle = e.meta.get("bundle")
        rows.append({"kind": "fastcache", "kernel": e.name, "signature": e.signature, "target": e.target,
                     "size": art.size if art else 0, "last_used": e.last_used,
                     "bundled": bool(bundle and bundle in bundles), "key": e.key})  # fmt: skip
    for key, a in artifacts.items():
        if key not in referenced and not a.problem:
            rows.append({"kind": "offline", "kernel": a.name, "signature": "", "target": a.target, "size": a.size,
                         "last_used": a.last_used, "bundled": False, "key": key})  # fmt: skip
    for e in entries:
        if e.kind in ("bundle", "runtime"):
            what = f"{len(e.meta.get('kernels', []))} kernels" if e.kind == "bundle" else "native runtime"
            rows.append({"kind": e.kind, "kernel": what, "signature": "", "target": "", "size": e.size,
                         "last_used": e.last_used, "bundled": False, "key": e.key})  # fmt: skip
        elif e.problem:
            rows.append({"kind": e.kind, "kernel": f"DAMAGED: {e.problem}", "signature": "", "target": "",
                         "size": e.size, "last_used": e.last_used, "bundled": False, "key": e.key})  # fmt: skip
    rows.sort(key=lambda r: (r["kind"] != "fastcache", r["kernel"], r["signature"]))
    return Listing(rows)


def totals(store: CacheStore) -> dict[str, Any]:
    """`qd cache stats`: entries and bytes per kind, the size bound's ledger, and the hit/miss counters that
    processes recorded at exit. The kinds are the rows of `qd cache ls` (the same names and counts: fastcache
    signatures with the size of their code, offline kernels, bundles, runtimes, and damaged entries by their
    file kind); the entries and bytes are the files'."""
    entries = scan(store, read=False)
    per_kind = {k: {"entries": 0, "bytes": 0} for k in LISTED_KINDS}
    for row in listing(store).rows:
        kind = per_kind.setdefault(row["kind"], {"entries": 0, "bytes": 0})
        kind["entries"] += 1
        kind["bytes"] += row["size"]
    return {
        "root": store.root,
        "entries": len(entries),
        "bytes": sum(e.size for e in entries),
        "kinds": per_kind,
        "ledger_bytes": store.read_json("usage.json").get("bytes"),
        "recorded": store.read_json("stats.json"),
    }


@dataclass
class Verified:
    """`qd cache verify`: entries checked, the damaged (or untrusted) ones, named by kernel and signature where
    anything tells (their own metadata, read without the checksum, or a fastcache entry pointing at them), and the
    dangling fastcache entries (their code is gone: a miss and a recompile, not an error)."""

    checked: int
    damaged: list[EntryInfo]
    dangling: list[EntryInfo]
    removed: list[str] = field(default_factory=list)  # paths `repair` deleted


def verify(store: CacheStore) -> Verified:
    """Checksums (and trust) of every entry, and the shape of the bookkeeping files."""
    entries = scan(store)
    damaged = [e for e in entries if e.problem]
    for name in (bookkeeping.USAGE, bookkeeping.TARGETS, bookkeeping.STATS_FILE):
        why = bookkeeping.problem(store.root, name)
        if why is not None:
            damaged.append(EntryInfo("bookkeeping", name, os.path.join(store.root, name), 0, 0.0, problem=why))
    present = {(e.kind, e.key) for e in entries if not e.problem}
    dangling = []
    for e in entries:
        if e.kind == "fast" and not e.problem and ("artifact", e.meta.get("artifact")) not in present:
            if not e.meta.get("bundle") or ("bundle", e.meta["bundle"]) not in present:
                dangling.append(e)
    _name_damaged(entries, damaged)
    return Verified(len(entries), damaged, dangling)


def _name_damaged(entries: list[EntryInfo], damaged: list[EntryInfo]) -> None:
    """Fill in what is known of each damaged entry: its own metadata when the bytes still hold it (a damaged body
    leaves the JSON readable), and for code, the kernel and signature of the fastcache entry pointing at it."""
    pointing: dict[str, EntryInfo] = {}
    for e in entries:
        if e.kind == "fast" and not e.problem:
            pointing.setdefault(e.meta.get("artifact", ""), e)
    for e in damaged:
        if e.kind not in KIND_CODES:
            continue
        e.meta = _salvaged_meta(e.path)
        ref = pointing.get(e.key)
        if ref is not None:
            e.meta = {**e.meta, "name": ref.name, "target": ref.target, "parts": ref.meta.get("parts", {})}


def _salvaged_meta(path: str) -> dict[str, Any]:
    """The metadata of a damaged entry file, trusting its trailer's sizes but not its checksum; {} when even
    that is unreadable. Only for naming the entry in a report: nothing read here is used to load code."""
    try:
        st = os.lstat(path)
        if not stat.S_ISREG(st.st_mode) or not TRAILER.size <= st.st_size <= MAX_ENTRY_BYTES:
            return {}
        with open(path, "rb") as f:
            data = f.read()
        _, _, _, _, body_size, meta_size, _, _ = TRAILER.unpack_from(data, len(data) - TRAILER.size)
        meta = json.loads(data[body_size : body_size + meta_size])
    except (OSError, ValueError, struct.error):
        return {}
    return meta if isinstance(meta, dict) else {}


def repair(store: CacheStore, found: Verified) -> Verified:
    """Delete the damaged entries and bookkeeping files and the dangling fastcache entries, so that the next
    run or `qd precompile` builds them again. Untrusted files (another user's, or writable by others) are left
    alone: they are reported, not ours to delete."""
    for e in found.damaged + found.dangling:
        if e.problem and e.problem.startswith("untrusted"):
            continue
        try:
            os.unlink(e.path)
        except FileNotFoundError:
            pass
        except OSError:
            continue
        found.removed.append(e.path)
    return found


def gc(store: CacheStore, max_bytes: int) -> tuple[int, int]:
    """Delete least recently used entries until the cache holds at most `max_bytes`: (deleted, bytes left)."""
    before = len(scan(store, read=False))
    store.max_bytes, store.cleaning_factor = max_bytes, 0.0
    left = store.evict()
    store.write_json("usage.json", {"bytes": left})
    return before - len(scan(store, read=False)), left


def parse_size(text: str) -> int:
    """`500M`, `2G`, `100k`, `12345` -> bytes."""
    t = text.strip().upper().removesuffix("B")
    scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}.get(t[-1:], 1)
    number = t[:-1] if t[-1:] in "KMGT" else t
    try:
        value = float(number)
    except ValueError:
        raise ValueError(f"{text!r} is not a size (like 500M or 2G)") from None
    if not 0 <= value * scale < 2**63:  # also inf and nan
        raise ValueError(f"{text!r} is not a size between 0 and 8 EiB (like 500M or 2G)")
    return int(value * scale)


def writable(store: CacheStore) -> str | None:
    """None when `gc`/`clear` can delete in this cache (or it does not exist), else why not."""
    if not os.path.isdir(store.root):
        return None
    return store.check_writable()
