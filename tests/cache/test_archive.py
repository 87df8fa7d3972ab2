"""`qd cache export` / `import` (quadrants.aot.archive): a cache as one file, verified whole before anything is
installed."""

from __future__ import annotations

import io
import json
import subprocess
import tarfile
from pathlib import Path

import pytest

from quadrants.aot.archive import INDEX, ArchiveError, export_cache, import_cache
from quadrants.aot.inventory import open_store
from tests.cache.conftest import LOADED, make_read_only
from tests.cache.test_remote import APP

pytestmark = pytest.mark.slow  # the programs run in fresh processes


@pytest.fixture
def exported(project, tmp_path: Path) -> Path:
    project.write("app.py", APP)
    assert project.run().out["compiles"] == 2
    done = export_cache(open_store(str(project.cache)), str(tmp_path / "cache.tar"))
    assert done.entries == 6 and done.skipped == []  # 2 artifacts, 2 fast entries, the runtime, the bundle
    return tmp_path / "cache.tar"


def _entries(root: Path) -> list[Path]:
    return sorted(root.rglob("*.qd"))


def test_round_trip_into_a_read_only_folder(project, exported: Path, tmp_path: Path) -> None:
    target = tmp_path / "imported"
    done = import_cache(str(exported), open_store(str(target)))
    assert done.entries == 6 and done.present == 0
    assert import_cache(str(exported), open_store(str(target))).present == 6  # again: nothing to write
    undo = make_read_only(target)
    if undo is None:
        pytest.skip("cannot make a folder read-only here")
    try:
        run = project.run(env={"QD_CACHE_DIR": str(target)})
    finally:
        subprocess.run(undo)
    assert run.out["compiles"] == 0 and run.out["scale"] == LOADED and run.out["x"] == [2.5] * 4
    assert "not writable" not in run.stderr


def _rewrite(src: Path, dst: Path, change) -> None:
    """Copy an archive member by member, `change(name, data)` giving each member's new bytes (None: drop it)."""
    with tarfile.open(src) as tin, tarfile.open(dst, "w") as tout:
        for m in tin.getmembers():
            f = tin.extractfile(m)
            data = change(m.name, f.read() if f is not None else b"")
            if data is not None:
                info = tarfile.TarInfo(m.name)
                info.size = len(data)
                tout.addfile(info, io.BytesIO(data))


def _flip(data: bytes) -> bytes:
    b = bytearray(data)
    b[len(b) // 2] ^= 0xFF
    return bytes(b)


def _reindexed(change_index):
    def change(name: str, data: bytes) -> bytes:
        if name != INDEX:
            return data
        index = json.loads(data)
        change_index(index)
        return json.dumps(index).encode()

    return change


DAMAGES = {
    "a flipped byte": (lambda name, data: _flip(data) if name.startswith("bundle/") else data, "damaged"),
    "a missing entry": (lambda name, data: None if name.startswith("runtime/") else data, "missing or damaged"),
    "no index": (lambda name, data: None if name == INDEX else data, "no quadrants-cache.json"),
    "another format": (_reindexed(lambda i: i.update(format=i["format"] + 1)), "cache format"),
    # a consistent index that vouches for bytes which are not an entry: the entry's own check refuses them
    "a forged entry": (lambda name, data: data, "not a valid cache entry"),
}


@pytest.mark.parametrize("damage", list(DAMAGES))
def test_a_damaged_archive_is_refused_whole(exported: Path, tmp_path: Path, damage: str) -> None:
    change, message = DAMAGES[damage]
    bad = tmp_path / "bad.tar"
    if damage == "a forged entry":
        import hashlib

        forged: dict[str, bytes] = {}

        def forge(name: str, data: bytes) -> bytes:
            if name.startswith("artifact/") and not forged:
                forged[name] = _flip(data)
                return forged[name]
            return data

        _rewrite(exported, tmp_path / "step.tar", forge)
        ((name, data),) = forged.items()

        def fix(index: dict) -> None:
            for e in index["entries"]:
                if f"{e['kind']}/{e['key']}.qd" == name:
                    e["sha256"] = hashlib.sha256(data).hexdigest()

        _rewrite(tmp_path / "step.tar", bad, _reindexed(fix))
    else:
        _rewrite(exported, bad, change)
    target = tmp_path / "target"
    with pytest.raises(ArchiveError, match=message) as info:
        import_cache(str(bad), open_store(str(target)))
    assert "nothing was imported" in str(info.value) and _entries(target) == []


def test_not_an_archive_and_a_truncated_one(exported: Path, tmp_path: Path) -> None:
    junk = tmp_path / "junk.tar"
    junk.write_bytes(b"hello" * 100)
    cut = tmp_path / "cut.tar"
    cut.write_bytes(exported.read_bytes()[: exported.stat().st_size // 2])
    for path in (junk, cut):
        with pytest.raises(ArchiveError, match="nothing was imported"):
            import_cache(str(path), open_store(str(tmp_path / "t")))
    assert _entries(tmp_path / "t") == []


def test_a_write_failing_midway_takes_back_what_it_wrote(exported: Path, tmp_path: Path) -> None:
    target = tmp_path / "target"
    store = open_store(str(target))
    Path(store.root).mkdir(parents=True)
    Path(store.root, "runtime").write_text("a file where a folder should be")  # runtime entries cannot be written
    with pytest.raises(ArchiveError, match="cannot write"):
        import_cache(str(exported), store)
    assert _entries(target) == []
