"""What the remote cache's messages show (in-process, no server): the URL with its port (two caches on one host
differ by it) and never a password; and the 'off for this process' warning once per process, however many
stores (one per driver: each portable target has one) use that remote."""

from __future__ import annotations

import logging

import pytest

from quadrants.cache import remote
from quadrants.cache.remote import RemoteCache, RemoteError


@pytest.mark.parametrize(
    ("url", "shown"),
    [("redis://user:secret@cache.internal:6380/2", "redis://cache.internal:6380/2"),
     ("redis://cache.internal/0", "redis://cache.internal/0"),
     ("rediss://:pw@[::1]:6390/0?readonly=1", "rediss://[::1]:6390/0"),
     ("s3://bucket/prefix?readonly=1", "s3://bucket/prefix")],
)  # fmt: skip
def test_the_shown_url_keeps_the_port_and_drops_the_password(url: str, shown: str) -> None:
    assert RemoteCache(url, False, 1.0, None).shown == shown


def test_a_remote_that_fails_is_announced_once_per_process(monkeypatch, caplog) -> None:
    monkeypatch.setattr(remote, "_WARNED_OFF", set(), raising=False)
    caplog.set_level(logging.WARNING)
    url = "redis://127.0.0.1:6399/0"
    for _ in range(3):  # three drivers' stores on the same remote
        cache = RemoteCache(url, False, 1.0, None)
        cache.fail(RemoteError("connection refused"))
        assert cache.off
    lines = [r.getMessage() for r in caplog.records if "is off for this process" in r.getMessage()]
    assert lines == ["the remote cache redis://127.0.0.1:6399/0 is off for this process: connection refused"]
