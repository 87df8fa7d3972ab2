"""Bundles: many compiled kernels linked into one shared library, opened with one `dlopen`.

Opening a library costs ~40 us whatever its size, so a process that starts 200 cached kernels opens one bundle
instead of 200 libraries and then only looks symbols up (~2 us each). The offline cache makes a bundle of the
kernels a process compiled when it exits; `qd precompile` makes one per target.
"""

from __future__ import annotations

import os

from quadrants.runtime.loader import SharedObjectLoader


def link_bundle(objects: list[bytes], linker: str) -> bytes:
    """One shared library from several kernel objects (their symbols are distinct by construction)."""
    import subprocess
    import tempfile

    from quadrants.cache.link import LinkError

    with tempfile.TemporaryDirectory(prefix="qd-bundle-") as tmp:
        paths = []
        for i, obj in enumerate(objects):
            p = os.path.join(tmp, f"k{i}.o")
            with open(p, "wb") as f:
                f.write(obj)
            paths.append(p)
        out = os.path.join(tmp, "bundle.so")
        proc = subprocess.run([linker, "-shared", "-o", out, *paths], capture_output=True, text=True)
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
