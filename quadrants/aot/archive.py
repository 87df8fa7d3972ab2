"""`qd cache export` / `qd cache import`: a whole cache as one file, for CI artifacts, the GitHub Actions cache
step or a Docker `COPY`.

An archive is an uncompressed tar (entries are mostly machine code that compresses poorly; a CI cache step
compresses anyway) of:

    quadrants-cache.json   {"archive": 1, "format": <cache format>, "entries": [{kind, key, size, sha256}...],
                            "targets": <targets.json>}
    <kind>/<key>.qd        each entry file, byte for byte (a bundle carries its index of fast entries)

Import reads the index, then every member it names, checks each one's size, SHA-256 and the entry's own
trailer and checksum (`store.decode`, the check every read makes), and only when everything passed writes the
entries into the cache (each atomically, as a store write). Any problem refuses the whole archive with a clear
error, and nothing is written; a write that fails midway removes what this import had added. Member names are
never used as paths. Library functions returning data; the CLI prints.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import tarfile
from dataclasses import dataclass
from typing import Any

from quadrants.cache.keys import FORMAT
from quadrants.cache.store import KIND_CODES, CacheStore, CorruptEntry, decode, replacing

ARCHIVE_VERSION = 1
INDEX = "quadrants-cache.json"
MAX_INDEX_BYTES = 64 << 20


class ArchiveError(Exception):
    """The archive cannot be imported (damaged, another format, not an archive); nothing was imported."""


@dataclass
class Exported:
    path: str
    entries: int
    bytes: int
    skipped: list[str]  # entries left out: damaged or untrusted in the cache (`qd cache verify` names them)


@dataclass
class Imported:
    root: str
    entries: int  # entries written
    present: int  # entries the cache already had, byte for byte
    bytes: int


def export_cache(store: CacheStore, out_path: str) -> Exported:
    """Write every valid entry of `store` into one archive at `out_path` (written whole, then renamed)."""
    from quadrants.aot.inventory import scan

    entries: list[dict[str, Any]] = []
    members: list[tuple[str, bytes]] = []
    skipped: list[str] = []
    for info in scan(store):
        if info.problem is not None:
            skipped.append(f"{info.path}: {info.problem}")
            continue
        try:
            with open(info.path, "rb") as f:
                data = f.read()
            decode(data, info.kind, info.key)  # changed since the scan: left out
        except (OSError, CorruptEntry, ValueError) as e:
            skipped.append(f"{info.path}: {e}")
            continue
        entries.append({"kind": info.kind, "key": info.key, "size": len(data),
                        "sha256": hashlib.sha256(data).hexdigest()})  # fmt: skip
        members.append((f"{info.kind}/{info.key}.qd", data))
    index = {"archive": ARCHIVE_VERSION, "format": FORMAT, "entries": entries, "targets": store.read_json("targets.json")}
    with replacing(out_path) as tmp, tarfile.open(tmp, "w", format=tarfile.PAX_FORMAT) as tar:
        _add(tar, INDEX, json.dumps(index, sort_keys=True, indent=1).encode())
        for name, data in members:
            _add(tar, name, data)
    return Exported(out_path, len(entries), sum(e["size"] for e in entries), skipped)


def _add(tar: tarfile.TarFile, name: str, data: bytes) -> None:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    info.mode = 0o644
    tar.addfile(info, io.BytesIO(data))


def import_cache(archive: str, store: CacheStore) -> Imported:
    """Verify every entry of `archive`, then install them all into `store`; raises ArchiveError (nothing
    imported) when anything is wrong."""
    checked = read_archive(archive)
    written: list[str] = []
    present = nbytes = 0
    try:
        for kind, key, data in checked["entries"]:
            path = store.path(kind, key)
            try:
                with open(path, "rb") as f:
                    if f.read() == data:
                        present += 1
                        continue
            except OSError:
                pass
            written.append(store.install(kind, key, data))
            nbytes += len(data)
        if checked["targets"]:
            merged = store.read_json("targets.json")
            for section, names in checked["targets"].items():
                merged[section] = sorted(set(merged.get(section, [])) | set(names))
            if not store.write_json("targets.json", merged):
                raise OSError(store.write_error)
    except OSError as e:
        for path in written:
            try:
                os.unlink(path)
            except OSError:
                pass
        raise ArchiveError(f"cannot write into {store.root}: {getattr(e, 'strerror', None) or e}; nothing was "
                           "imported") from None  # fmt: skip
    return Imported(store.root, len(written), present, nbytes)


def read_archive(archive: str) -> dict[str, Any]:
    """The archive's entries as (kind, key, bytes), each checked; raises ArchiveError."""

    def refuse(why: str) -> ArchiveError:
        return ArchiveError(f"{archive}: {why}; nothing was imported")

    try:
        tar = tarfile.open(archive, "r:*")
    except (OSError, tarfile.TarError) as e:
        raise refuse(f"not a cache archive ({e})") from None
    with tar:
        try:
            members = {m.name: m for m in tar.getmembers()}
            index = _read_member(tar, members.get(INDEX), MAX_INDEX_BYTES)
        except (OSError, tarfile.TarError, EOFError) as e:
            raise refuse(f"damaged archive ({e})") from None
        if index is None:
            raise refuse(f"not a cache archive (no {INDEX})")
        try:
            meta = json.loads(index)
            version, fmt, listed, targets = meta["archive"], meta["format"], meta["entries"], meta.get("targets", {})
        except (ValueError, KeyError, TypeError):
            raise refuse(f"damaged index {INDEX}") from None
        if version != ARCHIVE_VERSION:
            raise refuse(f"archive version {version}, this quadrants reads {ARCHIVE_VERSION}")
        if fmt != FORMAT:
            raise refuse(f"cache format {fmt}, this quadrants uses {FORMAT} (export it with the same version)")
        if not isinstance(targets, dict) or not all(isinstance(v, list) for v in targets.values()):
            raise refuse(f"damaged index {INDEX} (targets)")
        out = []
        for item in listed:
            try:
                kind, key, size, digest = item["kind"], item["key"], int(item["size"]), item["sha256"]
                if kind not in KIND_CODES or len(key) != 64 or int(key, 16) < 0:
                    raise ValueError
            except (KeyError, TypeError, ValueError):
                raise refuse(f"damaged index entry {item!r}") from None
            try:
                data = _read_member(tar, members.get(f"{kind}/{key}.qd"), size)
            except (OSError, tarfile.TarError, EOFError) as err:
                raise refuse(f"damaged archive at {kind}/{key}.qd ({err})") from None
            if data is None or len(data) != size or hashlib.sha256(data).hexdigest() != digest:
                raise refuse(f"entry {kind}/{key}.qd is missing or damaged (size or SHA-256 differs)")
            try:
                decode(data, kind, key)
            except (CorruptEntry, ValueError) as err:
                raise refuse(f"entry {kind}/{key}.qd is not a valid cache entry ({err})") from None
            out.append((kind, key, data))
    return {"entries": out, "targets": targets}


def _read_member(tar: tarfile.TarFile, member: tarfile.TarInfo | None, limit: int) -> bytes | None:
    if member is None or not member.isfile() or member.size > limit:
        return None
    f = tar.extractfile(member)
    return f.read() if f is not None else None
