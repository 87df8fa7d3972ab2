"""The remote cache: entries shared by many machines through a store they all reach (Redis or S3).

The local store (store.py) asks the remote only on a local miss, and gives it what this process wrote, as
sccache and ccache do:

- **Read**: on a local miss, `fetch` asks the remote for the entry (several entries in one round trip where
  the store allows it: Redis MGET; parallel GETs on S3). An entry travels as the exact bytes of a local entry file, so it is
  checked by the same code as a local file (`store.decode`: trailer, key, kind, format, CRC-32) before the
  store writes it into the local cache and reads it from there. A damaged entry is ignored (a miss: the
  kernel compiles, and its push replaces the bad entry).
- **Write**: `push` only queues the entry; `flush` sends the queue in one pipelined round trip at process
  exit (the driver calls it after linking the session's bundle, so the bundle and the fast entries pointing
  at it go out together; `qd precompile`'s drivers flush at exit too). A compile never waits for the network.
  A read-only remote (`?readonly=1` in the URL, or `remote_cache_readonly` / QD_REMOTE_CACHE_READONLY) never
  receives anything.
- **Failures**: a remote that is down, slow (past `remote_cache_timeout` to connect or to read) or refusing is
  one warning, then off for the rest of the process: the program runs on, from the local cache and the
  compiler. Never a crash, never a longer wait.
- **Trust**: remote entries are native code that this process will load. Anyone who can write to the remote
  can therefore run code in every process that reads it. With QD_REMOTE_CACHE_SECRET set, every pushed entry
  carries an HMAC-SHA256 of its key and bytes, and entries without a valid one are ignored; without it, the
  remote must be writable only by those you trust (and read-only for untrusted jobs).

The store behind a URL is a `RemoteStore` (remote_store.py: get_many, put_many, contains): `remote_redis.py` (Redis, redis-py)
and `remote_s3.py` (S3-compatible object storage, boto3), imported with their client only when a remote is
first used: never on a local hit, never without a remote.
"""

from __future__ import annotations

import hmac
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from quadrants import _logging
from quadrants._config import remote_cache_secret
from quadrants._stats import STATS
from quadrants.cache.keys import FORMAT
from quadrants.cache.remote_store import RemoteError, RemoteStore

SIG_MAGIC = b"QDSIG001"  # after a signed entry: [entry][HMAC-SHA256: 32 bytes][SIG_MAGIC]
SIG_SIZE = 32 + len(SIG_MAGIC)
FLUSH_BYTES = 64 * 1024 * 1024  # a queue this large is sent at once rather than held until exit


_WARNED_OFF: set[str] = set()  # the remotes this process has said are off


def shown_url(url: str) -> str:
    """A remote's URL as messages show it: scheme, host, port and path; no user, password or query."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:  # an IPv6 address
        host = f"[{host}]"
    try:
        port = parts.port
    except ValueError:  # not a number: the client library will say so
        port = None
    return urlunsplit(parts._replace(netloc=host if port is None else f"{host}:{port}", query=""))


class RemoteCache:
    """One remote store as this process uses it: queued pushes, signing, counters, and the off switch."""

    def __init__(self, url: str, readonly: bool, timeout: float, secret: bytes | None) -> None:
        parts = urlsplit(url)
        query = dict(parse_qsl(parts.query))
        self.readonly = readonly or query.pop("readonly", "0").lower() in ("1", "true", "yes", "on")
        self.url = urlunsplit(parts._replace(query=urlencode(query)))
        self.scheme = parts.scheme
        self.shown = shown_url(url)
        self.timeout = timeout
        self.secret = secret
        self.off = False
        self.pending: dict[str, bytes] = {}  # remote key -> signed entry bytes, sent by `flush`
        self.pending_bytes = 0
        self._store: RemoteStore | None = None

    # ---- keys and signatures ----------------------------------------------------------------------------

    @staticmethod
    def key(kind: str, key: str) -> str:
        return f"qd:v{FORMAT}:{kind}:{key}"

    def sign(self, rkey: str, data: bytes) -> bytes:
        if self.secret is None:
            return data
        return data + _mac(self.secret, rkey, data) + SIG_MAGIC

    def unsign(self, rkey: str, value: bytes) -> bytes | None:
        """The entry bytes of a remote value, or None when a secret is set and the value's signature is missing or
        wrong. Without a secret a signature is only removed (it cannot be checked)."""
        signed = len(value) >= SIG_SIZE and value.endswith(SIG_MAGIC)
        data = value[:-SIG_SIZE] if signed else value
        if self.secret is None:
            return data
        if not signed or not hmac.compare_digest(value[-SIG_SIZE:-len(SIG_MAGIC)], _mac(self.secret, rkey, data)):
            return None
        return data

    # ---- the store ----------------------------------------------------------------------------------------

    def store(self) -> RemoteStore:
        if self._store is None:
            if self.scheme in ("redis", "rediss", "unix"):
                from quadrants.cache.remote_redis import RedisStore

                self._store = RedisStore(self.url, self.timeout)
            elif self.scheme == "s3":
                from quadrants.cache.remote_s3 import S3Store

                self._store = S3Store(self.url, self.timeout)
            else:
                raise RemoteError(f"unknown remote cache scheme {self.scheme!r} (expected redis://, rediss:// or s3://)")
        return self._store

    def fail(self, error: BaseException) -> None:
        """The remote failed: one warning, then off for the rest of the process. An error other than a
        RemoteError (a client library's surprise) is named with its type."""
        if not isinstance(error, RemoteError):
            error = RemoteError(f"{type(error).__name__}: {error}")
        STATS.count("remote_errors")
        if not self.off:
            self.off = True
            if self.shown not in _WARNED_OFF:  # once per process: each driver (target) has a store of its own
                _WARNED_OFF.add(self.shown)
                _logging.warn(f"the remote cache {self.shown} is off for this process: {error}", tag="cache")

    # ---- reading ------------------------------------------------------------------------------------------

    def fetch(self, wanted: list[tuple[str, str]]) -> dict[tuple[str, str], bytes]:
        """The remote's entries for these (kind, key) pairs, signatures checked (the caller checks the entry
        bytes with `store.decode`); those it lacks, or that fail the check, are left out."""
        if self.off or not wanted:
            return {}
        rkeys = {self.key(kind, key): (kind, key) for kind, key in wanted}
        try:
            got = self.store().get_many(list(rkeys))
        except Exception as e:  # a RemoteError, or anything a client library raises: never a crash
            self.fail(e)
            return {}
        out = {}
        for rkey, value in got.items():
            STATS.count("remote_bytes_in", len(value))
            data = self.unsign(rkey, value)
            if data is None:
                STATS.count("remote_rejected")
                _logging.warn(f"ignoring the remote cache entry {rkey}: it is not signed with QD_REMOTE_CACHE_SECRET",
                              tag="cache")  # fmt: skip
                continue
            out[rkeys[rkey]] = data
        STATS.count("remote_hits", len(out))
        STATS.count("remote_misses", len(wanted) - len(out))
        return out

    def rejected(self, kind: str, key: str, why: str) -> None:
        """An entry the remote gave failed the store's checks: counted and warned about, never used."""
        STATS.count("remote_hits", -1)
        STATS.count("remote_misses")
        STATS.count("remote_rejected")
        _logging.warn(f"ignoring the damaged remote cache entry {self.key(kind, key)} ({why}); it will be rebuilt",
                      tag="cache")  # fmt: skip

    def contains(self, kind: str, key: str) -> bool | None:
        """Whether the remote has this entry (None: no answer, the remote is off)."""
        if self.off:
            return None
        try:
            return self.store().contains(self.key(kind, key))
        except Exception as e:
            self.fail(e)
            return None

    # ---- writing ------------------------------------------------------------------------------------------

    def push(self, kind: str, key: str, data: bytes) -> None:
        """Queue an entry this process wrote; `flush` sends the queue (a later write of a key replaces it)."""
        if self.off or self.readonly:
            return
        rkey = self.key(kind, key)
        value = self.sign(rkey, data)
        self.pending_bytes += len(value) - len(self.pending.get(rkey, b""))
        self.pending[rkey] = value
        if self.pending_bytes > FLUSH_BYTES:
            self.flush()

    def flush(self) -> None:
        """Send the queued entries (one round trip where the store allows it)."""
        if not self.pending:
            return
        items, self.pending, self.pending_bytes = self.pending, {}, 0
        if self.off or self.readonly:
            return
        try:
            self.store().put_many(items)
        except Exception as e:
            self.fail(e)
            return
        STATS.count("remote_pushes", len(items))
        STATS.count("remote_bytes_out", sum(len(v) for v in items.values()))


def _mac(secret: bytes, rkey: str, data: bytes) -> bytes:
    return hmac.new(secret, rkey.encode() + b"\0" + data, "sha256").digest()


_OPEN: dict[tuple[str, bool, float], RemoteCache] = {}


def flush_all() -> None:
    """Send what every remote of this process has queued."""
    for remote in _OPEN.values():
        remote.flush()


def open_remote(url: str, readonly: bool, timeout: float) -> RemoteCache:
    """The process's RemoteCache for this URL (one per URL and settings: its off switch and queue are shared by
    every store of the process)."""
    spec = (url, readonly, timeout)
    remote = _OPEN.get(spec)
    if remote is None:
        remote = _OPEN[spec] = RemoteCache(url, readonly, timeout, remote_cache_secret())
    return remote
