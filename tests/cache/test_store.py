"""The entry store in-process: format checks, atomic publication, the fallback folder, the size bound."""

from __future__ import annotations

import logging
import os
import shutil

import pytest

from quadrants.cache import store as store_mod
from quadrants.cache.store import CacheStore, CorruptEntry, decode, encode

KEY_A = "a1" * 32
KEY_B = "b2" * 32


def entry_files(root: str) -> list[str]:
    return sorted(os.path.join(d, f) for d, _, files in os.walk(root) for f in files if f.endswith(".qd"))


@pytest.fixture
def caplog(caplog):
    """The quadrants logger does not propagate to the root logger: attach pytest's capture handler to it."""
    logger = logging.getLogger("quadrants")
    logger.addHandler(caplog.handler)
    yield caplog
    logger.removeHandler(caplog.handler)


@pytest.fixture
def tmpdir_for_fallback(tmp_path, monkeypatch):
    """Point the temp directory (where the fallback folder lives) into the test's folder."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    monkeypatch.setenv("TMPDIR", str(tmp))
    return tmp


# ---- the entry format -----------------------------------------------------------------------------------


def test_encode_decode_round_trip() -> None:
    body, meta = b"\x7fELF" + bytes(range(256)) * 3, {"abi": {"n": 1}, "so": 10}
    assert decode(encode("artifact", KEY_A, body, meta), "artifact", KEY_A) == (body, meta)


@pytest.mark.parametrize(
    "damage, reason",
    [
        (lambda d: d[:-1], "not a cache entry"),  # truncated at the end: the trailer is gone
        (lambda d: d[1:], "truncated"),  # lost bytes at the front: sizes no longer add up
        (lambda d: d[:5], "truncated"),
        (lambda d: d[:10] + bytes([d[10] ^ 0xFF]) + d[11:], "checksum"),  # a flipped byte in the body
        (lambda d: b"", "truncated"),
    ],
)
def test_damaged_entries_are_rejected(damage, reason) -> None:
    data = encode("artifact", KEY_A, b"x" * 100, {"k": 1})
    with pytest.raises(CorruptEntry, match=reason):
        decode(damage(data), "artifact", KEY_A)


def test_an_entry_under_another_key_or_kind_is_rejected() -> None:
    data = encode("artifact", KEY_A, b"body", {})
    with pytest.raises(CorruptEntry, match="another key"):
        decode(data, "artifact", KEY_B)
    with pytest.raises(CorruptEntry, match="another key"):
        decode(data, "fast", KEY_A)


def test_another_format_version_is_rejected(monkeypatch) -> None:
    data = encode("fast", KEY_A, b"", {})
    monkeypatch.setattr(store_mod, "FORMAT", store_mod.FORMAT + 1)
    with pytest.raises(CorruptEntry, match="format"):
        decode(data, "fast", KEY_A)


# ---- reading and writing ----------------------------------------------------------------------------------


def test_write_then_read_and_no_temporary_files_left(tmp_path) -> None:
    s = CacheStore(str(tmp_path), max_bytes=0)
    path = s.write("artifact", KEY_A, b"code", {"so": 0})
    assert path is not None and path.endswith(KEY_A + ".qd")
    e = s.read("artifact", KEY_A)
    assert e is not None and e.body == b"code" and e.meta == {"so": 0}
    assert s.read("artifact", KEY_B) is None
    leftovers = [f for _, _, files in os.walk(tmp_path) for f in files if f.startswith(".tmp-")]
    assert leftovers == []
    assert (s.stats.hits, s.stats.misses, s.stats.writes) == (1, 1, 1)


def test_a_corrupt_entry_warns_misses_and_is_replaced_by_the_next_write(tmp_path, caplog) -> None:
    s = CacheStore(str(tmp_path), max_bytes=0)
    path = s.write("fast", KEY_A, b"", {"artifact": "x"})
    with open(path, "r+b") as f:
        f.seek(3)
        f.write(b"#")
    assert s.read("fast", KEY_A) is None
    assert "corrupt cache entry" in caplog.text and s.stats.corrupt == 1
    s.write("fast", KEY_A, b"", {"artifact": "y"})
    e = s.read("fast", KEY_A)
    assert e is not None and e.meta == {"artifact": "y"}


def test_an_entry_renamed_to_another_key_is_a_miss(tmp_path) -> None:
    s = CacheStore(str(tmp_path), max_bytes=0)
    a = s.write("artifact", KEY_A, b"A", {})
    b = s.path("artifact", KEY_B)
    os.makedirs(os.path.dirname(b), exist_ok=True)
    os.rename(a, b)
    assert s.read("artifact", KEY_B) is None and s.stats.corrupt == 1


def test_concurrent_writers_of_one_key_each_publish_a_whole_entry(tmp_path) -> None:
    import threading

    s = CacheStore(str(tmp_path), max_bytes=0)
    bodies = [bytes([i]) * 200_000 for i in range(8)]

    def writer(body: bytes) -> None:
        for _ in range(5):
            s.write("artifact", KEY_A, body, {"n": body[0]})

    threads = [threading.Thread(target=writer, args=(b,)) for b in bodies]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    e = s.read("artifact", KEY_A)
    assert e is not None and e.body == bytes([e.meta["n"]]) * 200_000


# ---- a cache directory that refuses writes ------------------------------------------------------------


def test_an_unwritable_root_uses_a_private_fallback_with_one_warning(tmp_path, tmpdir_for_fallback, caplog) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("a file where the cache folder should be")
    s = CacheStore(str(blocker / "cache"), max_bytes=0)
    p1 = s.write("artifact", KEY_A, b"A", {})
    p2 = s.write("artifact", KEY_B, b"B", {})
    assert p1 and p2 and p1.startswith(str(tmpdir_for_fallback)) and p2.startswith(str(tmpdir_for_fallback))
    assert caplog.text.count("not writable") == 1
    assert s.read("artifact", KEY_A).body == b"A"  # type: ignore[union-attr]
    top = os.path.dirname(os.path.dirname(s.fallback))  # type: ignore[arg-type]
    assert os.stat(top).st_mode & 0o777 == 0o700

    later = CacheStore(str(blocker / "cache"), max_bytes=0)  # the next process, same read-only cache
    e = later.read("artifact", KEY_B)
    assert e is not None and e.body == b"B"


def test_a_fallback_folder_others_can_write_is_not_used(tmp_path, tmpdir_for_fallback) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("")
    s = CacheStore(str(blocker / "cache"), max_bytes=0)
    s.write("artifact", KEY_A, b"A", {})
    top = os.path.dirname(os.path.dirname(s.fallback))  # type: ignore[arg-type]
    os.chmod(top, 0o777)
    later = CacheStore(str(blocker / "cache"), max_bytes=0)
    assert later.read("artifact", KEY_A) is None
    assert later.write("artifact", KEY_B, b"B", {}) is None  # refused, kept in memory by the caller
    assert later.stats.write_failures == 1


def test_nothing_writable_at_all_returns_none_without_raising(tmp_path, monkeypatch) -> None:
    blocker = tmp_path / "f"
    blocker.write_text("")
    monkeypatch.setenv("TMPDIR", str(blocker))  # the temp directory is a file too
    s = CacheStore(str(blocker / "cache"), max_bytes=0)
    assert s.write("artifact", KEY_A, b"A", {}) is None
    assert s.read("artifact", KEY_A) is None


# ---- the size bound -------------------------------------------------------------------------------------


def _key(i: int) -> str:
    return f"{i:064x}"


def test_lru_eviction_keeps_the_cache_within_its_bound_and_keeps_recent_entries(tmp_path) -> None:
    size = len(encode("artifact", _key(0), b"x" * 1000, {}))
    s = CacheStore(str(tmp_path), max_bytes=10 * size, cleaning_factor=0.5)
    now = 1_700_000_000
    for i in range(9):
        p = s.write("artifact", _key(i), b"x" * 1000, {})
        os.utime(p, (now + i, now + i))  # entry i last used at now + i
    os.utime(s.path("artifact", _key(0)), (now + 100, now + 100))  # entry 0 used recently
    s.write("artifact", _key(9), b"x" * 1000, {})
    s.write("artifact", _key(10), b"x" * 1000, {})  # over the bound: evict down to half
    left = {os.path.basename(p)[:-3] for p in entry_files(s.root)}
    assert len(left) <= 5 and s.stats.evicted >= 6
    assert _key(0) in left and _key(10) in left and _key(1) not in left
    assert sum(os.path.getsize(p) for p in entry_files(s.root)) <= 10 * size


def test_policy_never_does_not_evict(tmp_path) -> None:
    s = CacheStore(str(tmp_path), max_bytes=1, policy="never")
    for i in range(5):
        s.write("artifact", _key(i), b"x" * 100, {})
    assert len(entry_files(s.root)) == 5


def test_no_scan_of_the_cache_when_reading_or_when_the_ledger_is_known(tmp_path, monkeypatch) -> None:
    s = CacheStore(str(tmp_path), max_bytes=10**9)
    for i in range(20):
        s.write("artifact", _key(i), b"x" * 10, {})

    def no_scan(*a, **kw):
        raise AssertionError("the cache was scanned")

    monkeypatch.setattr(CacheStore, "_entries", no_scan)
    fresh = CacheStore(str(tmp_path), max_bytes=10**9)  # a new process
    assert fresh.read("artifact", _key(3)) is not None and fresh.read("artifact", _key(99)) is None
    fresh.write("artifact", _key(100), b"y", {})  # the ledger says how much is used


def test_clear_deletes_every_entry(tmp_path) -> None:
    s = CacheStore(str(tmp_path), max_bytes=0)
    for i in range(3):
        s.write("fast", _key(i), b"", {})
    assert s.clear() == 3 and entry_files(s.root) == []


def _fill_and_hit_the_first(s: CacheStore) -> None:
    """Nine entries written in order (mtimes a day apart, long ago), the first one then read."""
    now = 1_700_000_000
    for i in range(9):
        p = s.write("artifact", _key(i), b"x" * 1000, {})
        os.utime(p, (now + i * 86400, now + i * 86400))
    assert s.read("artifact", _key(0)) is not None


@pytest.mark.parametrize("policy", ["lru", "fifo"])
def test_lru_keeps_what_was_read_and_fifo_drops_what_was_written_first(tmp_path, policy) -> None:
    size = len(encode("artifact", _key(0), b"x" * 1000, {}))
    s = CacheStore(str(tmp_path), max_bytes=10 * size, policy=policy, cleaning_factor=0.5)
    _fill_and_hit_the_first(s)
    s.write("artifact", _key(9), b"x" * 1000, {})
    s.write("artifact", _key(10), b"x" * 1000, {})  # over the bound
    left = {os.path.basename(p)[:-3] for p in entry_files(s.root)}
    assert len(left) <= 5 and _key(10) in left and _key(1) not in left
    assert (_key(0) in left) == (policy == "lru")


def test_only_lru_fifo_and_version_delete_older_formats_and_only_their_own_folders(tmp_path) -> None:
    def old_cache(name: str, extra: str | None = None) -> None:
        folder = tmp_path / name / "artifact" / "ab"
        folder.mkdir(parents=True)
        (folder / ("ab" * 32 + ".qd")).write_bytes(b"old")
        (tmp_path / name / "usage.json").write_text("{}")
        if extra:
            (tmp_path / name / extra).write_text("a user's file")

    for policy, swept in (("never", False), ("version", True), ("lru", True), ("fifo", True)):
        old_cache("v1")
        old_cache("v2", extra="notes.txt")  # not only cache files: not ours to delete
        old_cache(f"v{store_mod.FORMAT + 1}")  # a newer version's: it stays
        s = CacheStore(str(tmp_path), max_bytes=1, policy=policy)
        s.write("artifact", KEY_A, b"x" * 100, {})
        s.write("artifact", KEY_B, b"x" * 100, {})
        assert (tmp_path / "v1").exists() != swept, policy
        assert (tmp_path / "v2" / "notes.txt").exists() and (tmp_path / f"v{store_mod.FORMAT + 1}").exists()
        # `version` and `never` keep no size bound: both entries stay, past max_bytes=1; lru and fifo evict
        assert (len(entry_files(s.root)) == 2) == (policy in ("never", "version")), policy
        for name in ("v1", "v2", f"v{store_mod.FORMAT}", f"v{store_mod.FORMAT + 1}"):
            shutil.rmtree(tmp_path / name, ignore_errors=True)


def test_an_unknown_cleaning_policy_is_refused_with_the_choices() -> None:
    import quadrants as qd

    with pytest.raises(ValueError, match=r"unknown cache cleaning policy 'lfu': expected one of never, version, lru, "
                                         r"fifo"):  # fmt: skip
        qd.init(arch=qd.cpu, offline_cache_cleaning_policy="lfu")
