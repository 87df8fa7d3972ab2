"""The linker: turns an object into a shared library that `ctypes` opens without llvmlite.

`ld -shared` (binutils) on one small object takes ~3 ms. Without `ld`, the LLVM linker in the `ziglang` wheel
(`pip install 'quadrants-fastcache[linker]'`: `zig ld.lld`, ~5.5 ms; a 101 MB wheel, 411 MB installed: a build
stage's tool, never a runtime image's) does the same. Undefined symbols (libm, libc, the native runtime's) resolve
when the library is opened, against what the process has loaded. Where no linker exists (slim runtime images), a
program's own compiles fall back to linking in-process with llvmlite's ORC JIT; `qd precompile` refuses (a
precompiled start must not need the compiler).
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
        return shutil.which("ld") or _wheel_linker()
    return setting if os.access(setting, os.X_OK) else None


def _wheel_linker() -> str | None:
    """The `zig` executable of the ziglang wheel (the `linker` extra), found without importing it."""
    import importlib.util

    spec = importlib.util.find_spec("ziglang")
    for folder in (spec.submodule_search_locations or []) if spec is not None else []:
        zig = os.path.join(folder, "zig")
        if os.access(zig, os.X_OK):
            return zig
    return None


def command(linker: str) -> list[str]:
    """The command that links with `linker`: zig's linker is its `ld.lld` subcommand (same options as ld)."""
    return [linker, "ld.lld"] if os.path.basename(linker) in ("zig", "zig.exe") else [linker]


INSTALL_HINT = ("install a linker: binutils (`apt-get install binutils`, the `ld` command) or the LLVM linker as a "
                "wheel (`pip install 'quadrants-fastcache[linker]'`)")  # fmt: skip


def link_shared(object_code: bytes, linker: str) -> bytes:
    with tempfile.TemporaryDirectory(prefix="qd-link-") as tmp:
        obj = os.path.join(tmp, "k.o")
        out = os.path.join(tmp, "k.so")
        with open(obj, "wb") as f:
            f.write(object_code)
        proc = subprocess.run([*command(linker), "-shared", "-o", out, obj], capture_output=True, text=True)
        if proc.returncode != 0:
            raise LinkError(f"{linker} failed: {proc.stderr.strip()[:500]}")
        with open(out, "rb") as f:
            return f.read()
