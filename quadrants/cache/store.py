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
- A read-only cache directory still serves hits; new entries go to a writable fallback folder (one warning),
  a per-user folder in the temp directory that must be private (0700, this user's, not a symlink).
- Trust (cache/trust.py): an entry is used only when this user or root owns it and nobody else can write it or
  the folders above it; otherwise it is ignored with a warning (it is native code).
- New files honour the umask.
- A remote cache (cache/remote.py), when the config names one: a local miss asks it, and what it gives is
  checked like a local file (`decode`), written here and read from here; every entry written here is queued
  for it (`flush_remote` sends the queue). Nothing about the remote is imported until it is first used.
- Cleaning (`offline_cache_cleaning_policy`, Quadrants' four): `lru` and `fifo` keep a size bound
  (`offline_cache_max_size_of_files`) with an approximate ledger updated on writes; only when it is exceeded does
  a clean-up scan the entries and delete the least recently used (`lru`: a hit refreshes an entry's mtime, at most
  hourly) or the oldest written (`fifo`) until `cleaning_factor` of the bound is free. `lru`, `fifo` and `version`
  also delete the entries of older formats (`v<N>` folders beside this one, which this version never reads), once
  per process, at its first write; `never` deletes nothing. Nothing scans the cache at process start.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import struct
import time
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from quadrants import _logging
from quadrants._stats import STATS
from quadrants.cache import bookkeeping, trust
from quadrants.cache.keys import FORMAT

MAGIC = b"QDCACHE1"
END = b"QDEND001"
TRAILER = struct.Struct("<8sIB3x32sQQI4x8s")
KIND_CODES = {"artifact": 1, "fast": 2, "runtime": 3, "bundle": 4}
EVICTABLE = ("artifact", "fast", "bundle")
SIZE_BOUND = ("lru", "fifo")  # the cleaning policies that keep the size bound (the others: `_account`)
TOUCH_AFTER_S = 3600.0


class CorruptEntry(Exception):
    pass


@dataclass
class Entry:
    path: str
    body: memoryview  # of the file's bytes, read once
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


def decode(data: bytes, kind: str, key: str) -> tuple[memoryview, dict[str, Any]]:
    """An entry's body (a view of `data`: entries are read once and never copied; a shared object in a body is
    then dlopened from the page cache) and its metadata; raises CorruptEntry."""
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
    view = memoryview(data)  # the checksum and the body without copying the file's bytes again
    if zlib.crc32(view[: body_size + meta_size]) != crc:
        raise CorruptEntry("checksum mismatch")
    meta = json.loads(bytes(view[body_size : body_size + meta_size]))
    return view[:body_size], meta


class CacheStore:
    def __init__(self, root: str, max_bytes: int, policy: str = "lru", cleaning_factor: float = 0.25,
                 fallback: bool = True, remote: tuple[str, bool, float] | None = None) -> None:  # fmt: skip
        """`fallback=False`: a refused write is an error kept in `write_error`, never redirected (qd precompile
        writes the cache it was given or fails). `remote`: (URL, read-only, timeout) of the remote cache."""
        self.root = os.path.join(root, f"v{FORMAT}")
        self.allow_fallback = fallback
        self.write_error: str | None = None  # the last write this store could not make, and why
        self.max_bytes = max_bytes
        self.policy = policy
        self._swept = policy == "never"  # other formats' folders: looked at once, at the first write
        self.cleaning_factor = cleaning_factor
        self.fallback: str | None = None  # a writable folder used once the root refused a write
        self._fallback_checked = False  # whether an earlier process's fallback folder was looked for
        self.root_refused = False  # the root refused a write: new entries go to the fallback
        self.stats = StoreStats()
        self.remote_spec = remote
        self.remote_reads = True  # off: a local miss does not ask the remote (qd cache explain)
        self.companions: Callable[[], list[tuple[str, str]]] | None = None  # asked for with the first remote read
        self._remote: Any = None  # cache.remote.RemoteCache, opened on first use

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
        if self.fallback is None and self.allow_fallback:
            path = self.fallback_path()
            if os.path.isdir(path) and trust.private_folder(_fallback_top(path)) is None:
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
        if self.remote_spec is not None and self.remote_reads:
            wanted = [(kind, key)]
            if self.companions is not None:  # the first remote read also brings what every kernel needs
                wanted += [c for c in self.companions() if c != (kind, key) and not self.has(*c)]
                self.companions = None
            entry = self.fetch(wanted).get((kind, key))
            if entry is not None:
                return entry
        self.stats.misses += 1
        return None

    # ---- the remote cache ---------------------------------------------------------------------------------

    def remote(self) -> Any:
        """The remote cache (a cache.remote.RemoteCache), or None when the config names none."""
        if self._remote is None and self.remote_spec is not None:
            from quadrants.cache.remote import open_remote

            self._remote = open_remote(*self.remote_spec)
        return self._remote

    def fetch(self, wanted: list[tuple[str, str]]) -> dict[tuple[str, str], Entry]:
        """Ask the remote, in one round trip, for entries missing here; each one it has is checked (`decode`),
        written into this cache and read back from it (an entry is used from a local file: a shared object in it
        is dlopened by path)."""
        remote = self.remote()
        if remote is None:
            return {}
        out = {}
        for (kind, key), data in remote.fetch(wanted).items():
            try:
                decode(data, kind, key)
            except (CorruptEntry, ValueError) as e:
                remote.rejected(kind, key, str(e))
                continue
            if self._write_local(kind, key, data) is None:
                continue
            for root in self.roots():
                entry = self._read_at(root, kind, key)
                if entry is not None:
                    out[kind, key] = entry
                    break
        return out

    def has(self, kind: str, key: str) -> bool:
        """Whether this cache has a file for the entry (unchecked)."""
        return any(os.path.exists(self.path(kind, key, root)) for root in self.roots())

    def remote_has(self, kind: str, key: str) -> bool | None:
        """Whether the remote cache has this entry (None: no remote, or it does not answer)."""
        remote = self.remote()
        return remote.contains(kind, key) if remote is not None else None

    def flush_remote(self) -> None:
        """Send the entries queued for the remote (at exit; see cache/remote.py)."""
        if self._remote is not None:
            self._remote.flush()

    def _read_at(self, root: str, kind: str, key: str) -> Entry | None:
        path = self.path(kind, key, root)
        try:
            with open(path, "rb") as f:
                st = os.fstat(f.fileno())
                why = trust.problem(st) or trust.folder_problem(os.path.dirname(path), os.path.dirname(root))
                if why is not None:
                    self._untrusted(path, why)
                    return None
                data = f.read()
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

    def _untrusted(self, path: str, why: str) -> None:
        STATS.count("untrusted_entries")
        if why not in _WARNED:
            _WARNED.add(why)
            _logging.warn(f"ignoring the cache entry {path}: {why}; a cache holds native code, so only entries "
                          "nobody else can write are used (see `qd cache verify`)", tag="cache")  # fmt: skip

    # ---- writing --------------------------------------------------------------------------------------

    def write(self, kind: str, key: str, body: bytes, meta: dict[str, Any]) -> str | None:
        """Publish an entry (and queue it for the remote cache); returns its path, or None when no location
        accepts it (kept in memory only)."""
        data = encode(kind, key, body, meta)
        path = self._write_local(kind, key, data)
        if self.remote_spec is not None:
            self.remote().push(kind, key, data)
        return path

    def _write_local(self, kind: str, key: str, data: bytes) -> str | None:
        if not self.allow_fallback:
            try:
                return self._publish(self.root, kind, key, data)
            except OSError as e:
                self.write_error = f"{self.root}: {refusal(self.root, e)}"
                self.stats.write_failures += 1
                STATS.count("write_failures")
                return None
        if not self.root_refused:
            try:
                return self._publish(self.root, kind, key, data)
            except OSError as e:
                self._use_fallback(e)
        try:
            fallback = self.fallback or self.fallback_path()
            _make_private(_fallback_top(fallback))
            return self._publish(fallback, kind, key, data)
        except OSError:
            self.stats.write_failures += 1
            STATS.count("write_failures")
            return None

    def install(self, kind: str, key: str, data: bytes) -> str:
        """Write an entry already encoded and checked by the caller (`qd cache import`) into the cache folder
        itself: no fallback, nothing pushed; raises OSError."""
        return self._publish(self.root, kind, key, data)

    def _publish(self, root: str, kind: str, key: str, data: bytes) -> str:
        path = self.path(kind, key, root)
        _atomic_write(path, data)
        self.stats.writes += 1
        if not self._swept:
            self._swept = True
            self.sweep_other_formats(root)
        self._account(root, len(data))
        return path

    def sweep_other_formats(self, root: str | None = None) -> list[str]:
        """Delete the `v<N>` folders beside `root` of older formats (an earlier version of this package wrote
        them; this one never reads them) that hold nothing but cache entries and bookkeeping; returns them. A
        newer format's folder (a newer version sharing the directory) and a folder holding anything else stay."""
        import shutil

        root = root or self.root
        parent, own = os.path.split(root)
        removed: list[str] = []
        try:
            siblings = [e for e in os.scandir(parent) if e.is_dir(follow_symlinks=False) and e.name != own]
        except OSError:
            return removed
        for e in siblings:
            if e.name[:1] == "v" and e.name[1:].isdigit() and int(e.name[1:]) < FORMAT and _only_cache_files(e.path):
                shutil.rmtree(e.path, ignore_errors=True)
                removed.append(e.path)
                _logging.info(f"removed {e.path}: cache entries of format {e.name[1:]}, which this version does not "
                              f"read (offline_cache_cleaning_policy={self.policy!r})", tag="cache")  # fmt: skip
        return removed

    def _use_fallback(self, error: OSError) -> None:
        self.root_refused = True
        self.fallback = self.fallback_path()
        _logging.warn(
            f"the cache directory {self.root} is not writable ({refusal(self.root, error)}); new kernels are cached in "
            f"{self.fallback} instead",
            tag="cache",
        )

    # ---- small JSON files beside the entries (the ledger, the list of precompiled targets) --------------

    def read_json(self, name: str) -> dict[str, Any]:
        """`<root>/<name>` with its shape checked (cache/bookkeeping.py): {} when missing or damaged."""
        return bookkeeping.read(self.root, name)

    def write_json(self, name: str, data: dict[str, Any]) -> bool:
        try:
            _atomic_write(os.path.join(self.root, name), json.dumps(data, sort_keys=True).encode())
        except OSError as e:
            self.write_error = f"{os.path.join(self.root, name)}: {e.strerror or e}"
            return False
        return True

    def check_writable(self) -> str | None:
        """Whether this cache folder takes new files: None, or the path and the reason it does not."""
        probe = os.path.join(self.root, f".probe-{os.getpid()}")
        try:
            _atomic_write(probe, b"")
            os.unlink(probe)
        except OSError as e:
            return f"{e.filename or self.root}: {e.strerror or e}"
        return None

    # ---- size bound -----------------------------------------------------------------------------------

    def _account(self, root: str, nbytes: int) -> None:
        if self.policy not in SIZE_BOUND or self.max_bytes <= 0:
            return
        ledger = os.path.join(root, "usage.json")
        known = bookkeeping.usage_bytes(root)
        # no ledger yet (or a damaged one): count once, new entry included
        used = known + nbytes if known is not None else self._scan_size(root)
        if used > self.max_bytes:
            used = self.evict(root)
        try:
            _atomic_write(ledger, json.dumps({"bytes": used}).encode())
        except OSError:
            pass

    def _entries(self, root: str, kinds: tuple[str, ...] = tuple(KIND_CODES)) -> list[tuple[float, int, str]]:
        out = []
        for kind in kinds:
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
        """Delete the least recently used (`lru`) or oldest written (`fifo`: no hit refreshes an mtime) entries
        until the cache is within (1 - cleaning_factor) of its bound; returns the bytes left."""
        root = root or self.root
        entries = sorted(self._entries(root, EVICTABLE))  # never the native runtime every entry needs
        total = self._scan_size(root)
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

    def drop(self, kind: str, key: str) -> None:
        """Delete one entry wherever it is (a fastcache entry whose code was damaged: compiled again)."""
        for root in self.roots():
            try:
                os.unlink(self.path(kind, key, root))
            except OSError:
                pass

    def clear(self) -> int:
        """Delete every entry (all kinds) of this format version, the size ledger and the recorded counters
        (a cleared cache reports zeros); returns how many entries."""
        n = 0
        for root in self.roots():
            for _, _, path in self._entries(root):
                try:
                    os.unlink(path)
                    n += 1
                except OSError:
                    pass
            for name in (bookkeeping.USAGE, bookkeeping.STATS_FILE):
                try:
                    os.unlink(os.path.join(root, name))
                except OSError:
                    pass
        return n


def _only_cache_files(folder: str) -> bool:
    """Whether `folder` holds only what a cache root holds: entry folders named after kinds, JSON bookkeeping,
    dot-files (temporaries); and something."""
    try:
        names = os.listdir(folder)
    except OSError:
        return False
    kinds = set(KIND_CODES)
    return bool(names) and all(n in kinds or n.endswith(".json") or n.startswith(".") for n in names)


def _atomic_write(path: str, data: bytes) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with replacing(path) as tmp, open(tmp, "wb") as f:
        f.write(data)


@contextlib.contextmanager
def replacing(path: str) -> Iterator[str]:
    """A new temporary file beside `path` (mode 0666 less the umask, as `open` makes) for the block to write;
    it replaces `path` atomically when the block succeeds and is removed when it fails. Readers see the old file
    or the new one, never a part; writers in other processes and threads each get their own temporary file."""
    import tempfile  # writing only: not on the lookup path

    fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=os.path.dirname(os.path.abspath(path)))
    try:
        os.fchmod(fd, 0o666 & ~_umask())
        os.close(fd)
        yield tmp
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _remove_if_same(path: str, seen: os.stat_result) -> None:
    """Delete a damaged entry unless another process has meanwhile replaced it (a new inode)."""
    try:
        if os.stat(path).st_ino == seen.st_ino:
            os.unlink(path)
    except OSError:
        pass  # gone already, or a read-only cache


_WARNED: set[str] = set()
_UMASK: list[int] = []


def _umask() -> int:
    if not _UMASK:
        _UMASK.append(trust.umask())
    return _UMASK[0]


def _fallback_top(fallback: str) -> str:
    """`$TMPDIR/quadrants-cache-<uid>` of a fallback root `.../quadrants-cache-<uid>/<tag>/v<FORMAT>`."""
    return os.path.dirname(os.path.dirname(fallback))


def refusal(root: str, error: OSError) -> str:
    """Why writing under `root` failed, in words: for "Not a directory", which path is a file (`QD_CACHE_DIR`
    pointing at one), since the error itself does not say."""
    if error.errno == errno.ENOTDIR:
        path = root
        while path and path != os.path.dirname(path):
            if os.path.lexists(path) and not os.path.isdir(path):
                return f"{path} is a file, not a folder"
            path = os.path.dirname(path)
    return error.strerror or str(error)


def _make_private(folder: str) -> None:
    """Create the per-user fallback folder (mode 0700, never through a symlink); refuse one that someone else
    made or can enter (planted in the shared temp directory), since its shared objects would be loaded here."""
    try:
        os.mkdir(folder, 0o700)
    except FileExistsError:
        pass
    why = trust.private_folder(folder)
    if why is not None:
        if why not in _WARNED:
            _WARNED.add(why)
            _logging.warn(f"not using the fallback cache folder: {why}", tag="cache")
        raise PermissionError(why)
