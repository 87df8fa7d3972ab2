"""The cache keys: one documented function builds each, from an explicit, printable record of its parts.

`offline_key(parts)`: the standard offline cache, keyed on the lowered kernel.
    - FORMAT, quadrants version, a digest of the compiler's own code (`compiler_digest`), native runtime ABI,
      llvmlite version (the compiler);
    - the kernel's IR after specialization, static evaluation and passes (templates, baked constants, field
      offsets and every type are in it; source locations are not);
    - the compile-relevant config (`_config.compile_relevant`: arch, debug, bounds checks, opt_level,
      fast_math, default_fp/ip, cpu_target);
    - the device part, which the backend supplies (`Backend.device_key`: the CPU's capabilities, or the GPU
      architecture and PTX ISA).

`fastcache_key(parts)`: fastcache, keyed without running the frontend.
    - FORMAT, quadrants version, compiler digest, native runtime ABI, llvmlite version;
    - the kernel's source text (its decorator and body, as written: no path, no line numbers);
    - the argument types of the specialization (ndarray dtype/ndim/element shape; scalar dtypes; vector shapes;
      dataclass and data_oriented member paths and types) and its compiled-in values (templates, enums,
      FIELD_METADATA_CACHE_VALUE members, data_oriented primitives), as stable text;
    - the compile-relevant config and the device part, as above.
    The sources of the qd.funcs the kernel reaches, and the values of the globals it is allowed to read
    (UPPERCASE constants, enum members, module attributes), are not known before compiling: the entry records
    them and a lookup checks them (`fastcache.FastEntries.valid`, `fingerprint.py`). A mismatch is a miss, never a stale hit.

Deliberately not in any key: absolute paths, line numbers, timestamps, process ids, object ids, the log level,
thread counts and cache locations (none of them changes generated code).
"""

from __future__ import annotations

import functools
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path

from quadrants._config import Config, compile_relevant
from quadrants._version import __version__
from quadrants.runtime.abi import RUNTIME_ABI  # the native runtime's version

try:  # the built-in SHA-256: `hashlib` loads OpenSSL (~2.5 ms at start-up, on the fastcache path)
    from _sha2 import sha256  # type: ignore[import-not-found]  # Python 3.12+
except ImportError:
    try:
        from _sha256 import sha256  # type: ignore[import-not-found,no-redef]
    except ImportError:
        from hashlib import sha256  # type: ignore[assignment]

FORMAT = 4  # bump when the entry layout or a key's recipe changes


@dataclass(frozen=True)
class KeyParts:
    """Everything a key is made of, by name: printable (`qd cache explain`) and hashed in a fixed order."""

    kind: str  # "offline" or "fastcache"
    parts: dict[str, str] = field(default_factory=dict)

    def digest(self) -> str:
        return sha256((self.kind + _encode(self.parts)).encode()).hexdigest()


def _encode(parts: dict[str, str]) -> str:
    return "".join(f"\x00{n}\x01{len(v)}\x02{v}" for n, v in sorted(parts.items()))


@functools.lru_cache(maxsize=8)
def _fast_prefix(config: Config, device: str) -> str:
    return "fastcache" + _encode(_common(config, device))


# The packages whose code decides what a kernel compiles to, or how its arguments reach it.
_COMPILER_PACKAGES = ("frontend", "ir", "passes", "codegen", "backends", "runtime", "driver", "types", "lang")


@functools.lru_cache(maxsize=1)
def compiler_digest() -> str:
    """A digest of the compiler's own code (`_COMPILER_PACKAGES`, .py files and the runtime's .ll). The version
    alone does not tell two builds apart (a git checkout, an edited install, a fix released without a version
    change): with the digest in every key, a cache never serves code an older compiler made.

    Hashing the ~430 KB costs 1.5-5 ms, so the digest is remembered in the package's `__pycache__` (where Python
    keeps bytecode, under the same conditions: writable, and no PYTHONDONTWRITEBYTECODE) against the files' names, sizes and modification times;
    a start whose files stat the same (about 0.2 ms) reuses it. Content decides the digest, so a touched but
    unchanged file only costs one rehash."""
    root = Path(__file__).resolve().parent.parent
    files = []
    for package in _COMPILER_PACKAGES:
        with os.scandir(root / package) as entries:
            for e in entries:
                if e.name.endswith((".py", ".ll")):
                    st = e.stat()
                    files.append((f"{package}/{e.name}", st.st_size, st.st_mtime_ns))
    files.sort()
    stamp = sha256(repr(files).encode()).hexdigest()[:20]
    memo = root / "__pycache__" / "compiler-digest.txt"
    try:
        saved = memo.read_text().split()
        if len(saved) == 2 and saved[0] == stamp:
            return saved[1]
    except OSError:
        pass
    h = sha256()
    for name, _, _ in files:
        h.update(f"{name}\0".encode())
        h.update((root / name).read_bytes())
    digest = str(h.hexdigest()[:20])
    try:
        if sys.dont_write_bytecode:  # PYTHONDONTWRITEBYTECODE: nothing written beside the package
            return digest
        memo.parent.mkdir(exist_ok=True)
        tmp = memo.with_name(f"{memo.name}.{os.getpid()}")
        tmp.write_text(f"{stamp} {digest}\n")
        os.replace(tmp, memo)
    except OSError:
        pass  # a read-only installation: hash again next time
    return digest


@functools.lru_cache(maxsize=8)
def _common(config: Config, device: str) -> dict[str, str]:
    parts = {
        "format": str(FORMAT),
        "quadrants": __version__,
        "compiler": compiler_digest(),
        "runtime_abi": str(RUNTIME_ABI),
        "llvmlite": llvmlite_version(),
        "device": device,
    }
    for name, value in compile_relevant(config).items():
        parts["config." + name] = value
    return parts


def runtime_parts(config: Config, device: str) -> dict[str, str]:
    """The native runtime library's key parts: it depends on the compiler and the device, not on kernels."""
    common = _common(config, device)
    return {k: v for k, v in common.items() if not k.startswith("config.")} | {"cpu_target": config.cpu_target}


def offline_key(ir_text: str, config: Config, device: str) -> KeyParts:
    """The offline cache key of a lowered kernel (our IR text, printed after the passes)."""
    return KeyParts("offline", {**_common(config, device), "ir": ir_text})


def fastcache_key(source_text: str, signature: str, config: Config, device: str) -> KeyParts:
    """The fastcache key of a kernel's specialization: its source text and argument signature (built by the
    specializer in `lang/args.py`), without running the frontend."""
    return KeyParts("fastcache", {**_common(config, device), "source": source_text, "signature": signature})


def fastcache_digest(source_text: str, signature: str, config: Config, device: str) -> str:
    """`fastcache_key(...).digest()`, computed without rebuilding the common parts (the start-up path).
    The common parts sort before "signature" and "source", so the encodings agree."""
    tail = _encode({"signature": signature, "source": source_text})
    return sha256((_fast_prefix(config, device) + tail).encode()).hexdigest()


@functools.cache
def llvmlite_version() -> str:
    """The compiler's version, read from llvmlite's `_version.py` text: neither llvmlite nor
    importlib.metadata (~15 ms) is imported on the fastcache path."""
    import importlib.util
    import os
    import re

    try:
        spec = importlib.util.find_spec("llvmlite")
        folder = os.path.dirname(spec.origin) if spec is not None and spec.origin else None
        if folder is not None:
            with open(os.path.join(folder, "_version.py")) as f:
                text = f.read()
            full = re.search(r"version_full\s*=\s*['\"]([^'\"]+)", text)
            m = re.search(r"version_version\s*=\s*['\"]([^'\"]+)", text) or re.search(r'"version":\s*"([^"]+)"', text)
            if m:
                return m.group(1) + (f"+{full.group(1)[:12]}" if full else "")
    except OSError:
        pass
    return "unknown"


__all__ = ["KeyParts", "offline_key", "fastcache_key", "fastcache_digest", "runtime_parts", "FORMAT"]
