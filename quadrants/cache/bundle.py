"""Bundles: many compiled kernels linked into one shared library, opened with one `dlopen`.

Opening a library costs ~40 us whatever its size, so a process that starts 200 cached kernels opens one bundle
instead of 200 libraries and then only looks symbols up (~2 us each). The offline cache makes a bundle of the
kernels a process compiled when it exits; `qd precompile` makes one per target.
"""

from __future__ import annotations

import os
from typing import Any

from quadrants import _logging
from quadrants._config import Config
from quadrants.cache import keys
from quadrants.cache.store import CacheStore, Entry
from quadrants.runtime.loader import Loaded, SharedObjectLoader


class BundleError(RuntimeError):
    pass


INDEX_OMITS = ("bundle", "parts", "name", "target")  # descriptive fields: in fast entries, not in bundle indexes


def index_of(entries: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """A bundle's index: each fastcache entry with only what a lookup needs (parsed at every start)."""
    return {k: {kk: vv for kk, vv in meta.items() if kk not in INDEX_OMITS} for k, meta in entries.items()}


def bundle_key(config: Config, device: str, artifact_keys: list[str], pack: bool = False) -> str:
    parts = {**keys.runtime_parts(config, device), "kernels": ",".join(artifact_keys), "pack": str(pack)}
    return keys.KeyParts("bundle", parts).digest()


def publish(store: CacheStore, config: Config, device: str, fast: dict[str, dict[str, Any]],
            objects: dict[str, bytes], linker: str | None) -> str:
    """One entry for the kernels of the fastcache entries `fast` (object code in `objects`, by artifact key),
    with their index, and the entries pointed at it: a shared library linked by `linker`, or where there is none
    an object pack (the objects concatenated; a process links them in-process in one go). Returns its path;
    raises BundleError."""
    from quadrants.cache.link import LinkError

    okeys = sorted({m["artifact"] for m in fast.values()})
    meta: dict[str, Any] = {"kernels": okeys, "index": index_of(fast)}
    if linker is None:
        body, layout = bytearray(), []
        for okey in okeys:
            layout.append([okey, len(body), len(objects[okey])])
            body += objects[okey]
        data, meta["pack"] = bytes(body), layout
    else:
        try:
            data = link_bundle([objects[k] for k in okeys], linker)
        except (LinkError, OSError) as e:
            raise BundleError(str(e)) from None
        meta["so"] = len(data)
    bkey = bundle_key(config, device, okeys, pack=linker is None)
    path = store.write("bundle", bkey, data, meta)
    if path is None:
        raise BundleError("the cache refused the write")
    for fast_key, m in fast.items():
        store.write("fast", fast_key, b"", {**m, "bundle": bkey})
    return path


def load_pack(entry: Entry) -> dict[str, tuple[dict[str, Any], Loaded]]:
    """Link an object pack's kernels in-process (llvmlite) in one go: artifact key -> (ABI dict, loaded code).
    Empty, with a warning, when it does not link (its kernels then load one by one)."""
    from quadrants.runtime.loader import OrcLoader

    by_okey = {m["artifact"]: m for m in entry.meta.get("index", {}).values()}
    objects, symbols = [], []
    for okey, offset, size in entry.meta["pack"]:
        if okey in by_okey:
            objects.append(bytes(entry.body[offset : offset + size]))
            symbols.append(by_okey[okey]["symbol"])
    try:
        addresses, keep = OrcLoader.load_pack(objects, symbols)
    except Exception as e:  # noqa: BLE001 - a pack that does not link: its kernels load one by one
        _logging.warn(f"the object pack {entry.path} did not link ({e}); loading its kernels one by one", tag="cache")
        return {}
    return {okey: (m["abi"], Loaded(addresses[m["symbol"]], keep)) for okey, m in by_okey.items()
            if m["symbol"] in addresses}  # fmt: skip


def link_bundle(objects: list[bytes], linker: str) -> bytes:
    """One shared library from several kernel objects (their symbols are distinct by construction)."""
    import subprocess
    import tempfile

    from quadrants.cache.link import LinkError, command

    with tempfile.TemporaryDirectory(prefix="qd-bundle-") as tmp:
        paths = []
        for i, obj in enumerate(objects):
            p = os.path.join(tmp, f"k{i}.o")
            with open(p, "wb") as f:
                f.write(obj)
            paths.append(p)
        out = os.path.join(tmp, "bundle.so")
        proc = subprocess.run([*command(linker), "-shared", "-o", out, *paths], capture_output=True, text=True)
        if proc.returncode != 0:
            raise LinkError(f"{linker} failed: {proc.stderr.strip()[:500]}")
        with open(out, "rb") as f:
            return f.read()


_OPEN: dict[str, int] = {}  # bundle path -> dlopen handle, for the life of the process


def open_bundle(path: str) -> int:
    handle = _OPEN.get(path)
    if handle is None:
        handle = SharedObjectLoader.open(path)
        _OPEN[path] = handle
    return handle
