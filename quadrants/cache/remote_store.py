"""What a remote cache store is: the interface `remote.py` uses and `remote_redis.py` / `remote_s3.py` implement.

Its own module so the stores depend on the interface, not on the cache that picks one of them (remote.py imports a
store only when a remote is first used).
"""

from __future__ import annotations

from typing import Protocol


class RemoteError(Exception):
    """The remote store failed (down, slow, refusing, misconfigured): the remote goes off for the process."""


class RemoteStore(Protocol):
    """A key-value store many machines share. Keys are short ASCII strings; values are entry bytes. Any failure
    raises RemoteError (a missing key is not a failure)."""

    def get_many(self, keys: list[str]) -> dict[str, bytes]:
        """The values of those `keys` the store has (one round trip where it can)."""

    def put_many(self, items: dict[str, bytes]) -> None:
        """Store every value (one round trip where it can)."""

    def contains(self, key: str) -> bool: ...
