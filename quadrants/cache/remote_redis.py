"""The remote cache on Redis (redis-py, the `redis` extra: `pip install 'quadrants-fastcache[redis]'`).

URLs as redis-py reads them: `redis://[[user]:password@]host[:port][/db]`, `rediss://` for TLS,
`unix:///path/to/socket`. A URL without a password takes REDISCLI_AUTH's, as redis-cli does. Connecting and each
read may take `timeout` seconds; there are no retries: a remote that fails is turned off by the caller.
Entries are plain string values (GET/MGET/SET in a pipeline), with no expiry: bound the memory with Redis's own
`maxmemory` and `maxmemory-policy allkeys-lru`.
"""

from __future__ import annotations

from typing import Any

from quadrants._config import redis_password
from quadrants.cache.remote_store import RemoteError

BATCH = 64  # keys per MGET / values per pipeline: large values go out in several round trips


class RedisStore:
    def __init__(self, url: str, timeout: float) -> None:
        try:
            import redis
            from redis.backoff import NoBackoff
            from redis.retry import Retry
        except ImportError:
            raise RemoteError("the Redis client is not installed: pip install 'quadrants-fastcache[redis]'") from None
        self._errors: tuple[type[BaseException], ...] = (redis.RedisError, OSError)
        options: dict[str, Any] = {"socket_connect_timeout": timeout, "socket_timeout": timeout,
                                   "retry": Retry(NoBackoff(), 0), "health_check_interval": 0}  # fmt: skip
        password = redis_password()
        try:
            self.client = redis.Redis.from_url(url, **options)
            if password and not self.client.connection_pool.connection_kwargs.get("password"):
                self.client = redis.Redis.from_url(url, password=password, **options)
        except (ValueError, TypeError) as e:
            raise RemoteError(f"bad Redis URL: {e}") from None

    def _call(self, what: str, fn: Any, *args: Any) -> Any:
        try:
            return fn(*args)
        except self._errors as e:
            raise RemoteError(f"{what}: {type(e).__name__}: {e}") from None

    def get_many(self, keys: list[str]) -> dict[str, bytes]:
        out = {}
        for i in range(0, len(keys), BATCH):
            chunk = keys[i : i + BATCH]
            values = self._call("MGET", self.client.mget, chunk)
            out.update({k: bytes(v) for k, v in zip(chunk, values) if v is not None})
        return out

    def put_many(self, items: dict[str, bytes]) -> None:
        pairs = list(items.items())
        for i in range(0, len(pairs), BATCH):
            pipe = self.client.pipeline(transaction=False)
            for k, v in pairs[i : i + BATCH]:
                pipe.set(k, v)
            self._call("SET", pipe.execute)

    def contains(self, key: str) -> bool:
        return bool(self._call("EXISTS", self.client.exists, key))
