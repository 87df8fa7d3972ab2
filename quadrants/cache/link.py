"""The system linker: turns an object into a shared library that `ctypes` opens without llvmlite.

`ld -shared` on one small object takes ~2 ms. Undefined symbols (libm, libc, the native runtime's) resolve when
the library is opened, against what the process has loaded. Where no linker exists (slim runtime images),
callers fall back to linking in-process with llvmlite's ORC JIT.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import tempfile


class LinkError(RuntimeError):
    pass


@functools.cache
def find_linker(setting: str = "auto") -> str | None:
    """`auto`: `ld` on PATH; `none`: no linker; anything else: that executable."""
    if setting == "none":
        return None
    if setting == "auto":
        return shutil.which("ld")
    return setting if os.access(setting, os.X_OK) else None


def link_shared(object_code: bytes, linker: str) -> bytes:
    with tempfile.TemporaryDirectory(prefix="qd-link-") as tmp:
        obj = os.path.join(tmp, "k.o")
        out = os.path.join(tmp, "k.so")
        with open(obj, "wb") as f:
            f.write(object_code)
        proc = subprocess.run([linker, "-shared", "-o", out, obj], capture_output=True, text=True)
        if proc.returncode != 0:
            raise LinkError(f"{linker} failed: {proc.stderr.strip()[:500]}")
        with open(out, "rb") as f:
            return f.read()
