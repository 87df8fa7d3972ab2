"""On-disk cache entries: versioned, checksummed, published atomically, forgiving.

An entry is one file, `<root>/v<FORMAT>/<kind>/<key[:2]>/<key>.qd`:

    [body][meta: JSON][trailer: magic, format, kind, key, sizes, crc32, end magic]

For a compiled kernel the body starts with the linked shared object, so the entry file itself is what
`dlopen` maps (the loader ignores the bytes after the ELF image), followed by the relocatable object. Nothing in
an entry is executed as Python (no pickle): metadata is JSON.

- A write goes to a temporary file in the same folder, then `os.replace`: readers see the old entry or the new
  one, never half of one; concurrent writers of one key both publish valid entries.
- A read checks the trailer (format, kind, the key it was asked for: an entry renamed to another key is
  rejected) and the checksum; anything wrong is a warning, a miss and the damaged file's removal; the next write
  replaces it.
- A read-only cache directory still serves hits; new entries go to a writable fallback folder (one warning).
- A size bound (`offline_cache_max_size_of_files`) is kept with an approximate ledger updated on writes; only
  when it is exceeded does a clean-up scan the entries and delete the least recently used (hits refresh an
  entry's mtime). Nothing scans the cache at process start.
"""

from __future__ import annotations

import json
import os
import struct
import time
import zlib
from dataclasses import dataclass
from typing import Any

from quadrants import _logging
from quadrants._stats import STATS
from quadrants.cache.keys import FORMAT

MAGIC = b"QDCACHE1"
END = b"QDEND001"
TRAILER = struct.Struct("<8sIB3x32sQQI4x8s")
KIND_CODES = {"artifact": 1, "fast": 2, "runtime": 3, "bundle": 4}
TOUCH_AFTER_S = 3600.0


class CorruptEntry(Exception):
    pass


@dataclass
class Entry:
    path: str
    body: bytes
    meta: dict[str, Any]


@dataclass
class StoreStats:
    hits: int = 0
    misses: int = 0
    writes: int = 0
    corrupt: int = 0
    write_failures: int = 0
    evicted: int = 0


def encode(kind: str, key: str, body: bytes, meta: dict[str, Any]) -> bytes:
    meta_bytes = json.dumps(meta, sort_keys=True, separators=(",", ":")).encode()
    crc = zlib.crc32(meta_bytes, zlib.crc32(body))
    trailer = TRAILER.pack(MAGIC, FORMAT, KIND_CODES[kind], bytes.fromhex(key), len(body), len(meta_bytes), crc, END)
    return body + meta_bytes + trailer


def decode(data: bytes, kind: str, key: str) -> tuple[bytes, dict[str, Any]]:
    if len(data) < TRAILER.size:
        raise CorruptEntry("truncated")
    magic, fmt, kcode, kbytes, body_size, meta_size, crc, end = TRAILER.unpack_from(data, len(data) - TRAILER.size)
    if magic != MAGIC or end != END:
        raise CorruptEntry("not a cache entry")
    if fmt != FORMAT:
        raise CorruptEntry(f"format {fmt}, expected {FORMAT}")
    if kcode != KIND_CODES[kind] or kbytes.hex() != key:
        raise CorruptEntry("entry belongs to another key")
    if body_size + meta_size + TRAILER.size != len(data):
        raise CorruptEntry("truncated")
    if zlib.crc32(data[: body_size + meta_size]) != crc:
        raise CorruptEntry("checksum mismatch")
    meta = json.loads(data[body_size : body_size + meta_size])
    return data[:body_size], meta


class CacheStore:
    def __init__(self, root: str, max_bytes: int, policy: str = "lru", cleaning_factor: float = 0.25) -> None:
        self.root = os.path.join(root, f"v{FORMAT}")
        self.max_bytes = max_bytes
        self.policy = policy
        self.cleaning_factor = cleaning_factor
        self.fallback: str | None = None  # a writable folder used once the root refused a write
        self._fallback_checked = False  # whether an earlier process's fallback folder was looked for
        self.root_refused = False  # the root refused a write: new entries go to the fallback
        self.stats = StoreStats()

    # ---- paths ----------------------------------------------------------------------------------------

    def path(self, kind: str, key: str, root: str | None = None) -> str:
        return os.path.join(root or self.root, kind, key[:2], key + ".qd")

    def roots(self) -> list[str]:
        return [self.root] + ([self.fallback] if self.fallback else [])

    def fallback_path(self) -> str:
        """Where entries go when the cache directory refuses writes: a per-user folder in the temp directory,
        one per cache directory (so a later process with the same read-only cache finds them)."""
        from quadrants.cache.keys import sha256  # not hashlib or tempfile: ~6 ms of imports on a first miss

        uid = os.getuid() if hasattr(os, "getuid") else 0
        tag = sha256(os.path.abspath(self.root).encode()).hexdigest()[:16]
        tmp = os.environ.get("TMPDIR") or os.environ.get("TEMP") or os.environ.get("TMP") or "/tmp"
        return os.path.join(tmp, f"quadrants-cache-{uid}", tag, f"v{FORMAT}")

    def _adopt_earlier_fallback(self) -> bool:
        """On a first miss: an earlier process may have kept entries in the fallback folder; read it too."""
        self._fallback_checked = True
        if self.fallback is None:
            path = self.fallback_path()
            if os.path.isdir(path) and _private(os.path.dirname(os.path.dirname(path))):
                self.fallback = path
                return True
        return False

    # ---- reading --------------------------------------------------------------------------------------

    def read(self, kind: str, key: str) -> Entry | None:
        for root in self.roots():
            entry = self._read_at(root, kind, key)
            if entry is not None:
                return entry
        if not self._fallback_checked and self._adopt_earlier_fallback():
            entry = self._read_at(self.fallback, kind, key)  # type: ignore[arg-type]
            if entry is not None:
                return entry
        self.stats.misses += 1
        return None

    def _read_at(self, root: str, kind: str, key: str) -> Entry | None:
        path = self.path(kind, key, root)
        try:
            with open(path, "rb") as f:
                data = f.read()
                st = os.fstat(f.fileno())
        except OSError:
            return None
        try:
            body, meta = decode(data, kind, key)
        except (CorruptEntry, ValueError) as e:
            self.stats.corrupt += 1
            STATS.count("corrupt_entries")
            _logging.warn(f"ignoring the corrupt cache entry {path} ({e}); it will be rebuilt", tag="cache")
            _remove_if_same(path, st)
            return None
        self.stats.hits += 1
        if self.policy == "lru" and time.time() - st.st_mtime > TOUCH_AFTER_S:
            try:
                os.utime(path)  # recency for LRU, at most once an hour per entry
            except OSError:
                pass  # a read-only cache: recency is not recorded
        return Entry(path, body, meta)

    # ---- writing --------------------------------------------------------------------------------------

    def write(self, kind: str, key: str, body: bytes, meta: dict[str, Any]) -> str | None:
        """Publish an entry; returns its path, or None when no location accepts it (kept in memory only)."""
        data = encode(kind, key, body, meta)
        if not self.root_refused:
            try:
                return self._publish(self.root, kind, key, data)
            except OSError as e:
                self._use_fallback(e)
        try:
            fallback = self.fallback or self.fallback_path()
            _make_private(os.path.dirname(os.path.dirname(fallback)))
            return self._publish(fallback, kind, key, data)
        except OSError:
            self.stats.write_failures += 1
            STATS.count("write_failures")
            return None

    def _publish(self, root: str, kind: str, key: str, data: bytes) -> str:
        path = self.path(kind, key, root)
        _atomic_write(path, data)
        self.stats.writes += 1
        self._account(root, len(data))
        return path

    def _use_fallback(self, error: OSError) -> None:
        self.root_refused = True
        self.fallback = self.fallback_path()
        _logging.warn(
            f"the cache directory {self.root} is not writable ({error.strerror}); new kernels are cached in "
            f"{self.fallback} instead",
            tag="cache",
        )

    # ---- small JSON files beside the entries (the ledger, the list of precompiled targets) --------------

    def read_json(self, name: str) -> dict[str, Any]:
        """`<root>/<name>` as a dict ({} when missing or unreadable)."""
        try:
            with open(os.path.join(self.root, name)) as f:
                data = json.load(f)
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def write_json(self, name: str, data: dict[str, Any]) -> bool:
        try:
            _atomic_write(os.path.join(self.root, name), json.dumps(data, sort_keys=True).encode())
        except OSError:
            return False
        return True

    # ---- size bound -----------------------------------------------------------------------------------

    def _account(self, root: str, nbytes: int) -> None:
        if self.policy == "never" or self.max_bytes <= 0:
            return
        ledger = os.path.join(root, "usage.json")
        try:
            with open(ledger) as f:
                used = int(json.load(f).get("bytes", 0)) + nbytes
        except (OSError, ValueError, AttributeError):
            used = self._scan_size(root)  # no ledger yet (or a damaged one): count once, new entry included
        if used > self.max_bytes:
            used = self.evict(root)
        try:
            _atomic_write(ledger, json.dumps({"bytes": used}).encode())
        except OSError:
            pass

    def _entries(self, root: str) -> list[tuple[float, int, str]]:
        out = []
        for kind in KIND_CODES:
            base = os.path.join(root, kind)
            if not os.path.isdir(base):
                continue
            for sub in os.scandir(base):
                if not sub.is_dir():
                    continue
                for e in os.scandir(sub.path):
                    if e.name.endswith(".qd"):
                        try:
                            st = e.stat()
                        except OSError:
                            continue
                        out.append((st.st_mtime, st.st_size, e.path))
        return out

    def _scan_size(self, root: str) -> int:
        return sum(size for _, size, _ in self._entries(root))

    def evict(self, root: str | None = None) -> int:
        """Delete least recently used entries until the cache is within (1 - cleaning_factor) of its bound;
        returns the bytes left."""
        root = root or self.root
        entries = sorted(self._entries(root))
        total = sum(size for _, size, _ in entries)
        target = int(self.max_bytes * (1.0 - self.cleaning_factor))
        for _, size, path in entries:
            if total <= target:
                break
            try:
                os.unlink(path)
            except OSError:
                continue
            total -= size
            self.stats.evicted += 1
            STATS.count("evicted")
        return total

    def clear(self) -> int:
        """Delete every entry (all kinds) of this format version; returns how many."""
        n = 0
        for root in self.roots():
            for _, _, path in self._entries(root):
                try:
                    os.unlink(path)
                    n += 1
                except OSError:
                    pass
            try:
                os.unlink(os.path.join(root, "usage.json"))
            except OSError:
                pass
        return n


def _atomic_write(path: str, data: bytes) -> None:
    import tempfile  # writing only: not on the lookup path

    folder = os.path.dirname(path)
    os.makedirs(folder, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=folder)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _remove_if_same(path: str, seen: os.stat_result) -> None:
    """Delete a damaged entry unless another process has meanwhile replaced it (a new inode)."""
    try:
        if os.stat(path).st_ino == seen.st_ino:
            os.unlink(path)
    except OSError:
        pass  # gone already, or a read-only cache


def _make_private(folder: str) -> None:
    """Create the per-user fallback folder (mode 0700); refuse one someone else owns or can write, since its
    shared objects would be loaded into this process."""
    os.makedirs(folder, mode=0o700, exist_ok=True)
    if not _private(folder):
        raise PermissionError(f"{folder} is not private to this user")


def _private(folder: str) -> bool:
    try:
        st = os.stat(folder)
    except OSError:
        return False
    mine = not hasattr(os, "getuid") or st.st_uid == os.getuid()
    return mine and not st.st_mode & 0o022
