"""The cache keys: one documented function builds each, from an explicit, printable record of its parts.

`offline_key(parts)`: the standard offline cache, keyed on the lowered kernel.
    - FORMAT, quadrants version, native runtime ABI, llvmlite version (the compiler);
    - the kernel's IR after specialization, static evaluation and passes (templates, baked constants, field
      offsets and every type are in it; source locations are not);
    - the compile-relevant config (`_config.compile_relevant`: arch, debug, bounds checks, opt_level,
      fast_math, default_fp/ip, cpu_target);
    - the device capabilities (`device_capabilities`).

`fastcache_key(parts)`: fastcache, keyed without running the frontend.
    - FORMAT, quadrants version, native runtime ABI, llvmlite version;
    - the kernel's source text (its decorator and body, as written: no path, no line numbers);
    - the argument types of the specialization (ndarray dtype/ndim/element shape; scalar dtypes; vector shapes;
      dataclass and data_oriented member paths and types) and its compiled-in values (templates, enums,
      FIELD_METADATA_CACHE_VALUE members, data_oriented primitives), as stable text;
    - the compile-relevant config and the device capabilities, as above.
    The sources of the qd.funcs the kernel reaches, and the values of the globals it is allowed to read
    (UPPERCASE constants, enum members, module attributes), are not known before compiling: the entry records
    them and a lookup checks them (`pipeline.KernelCache._valid`, `fingerprint.py`). A mismatch is a miss, never a stale hit.

Deliberately not in any key: absolute paths, line numbers, timestamps, process ids, object ids, the log level,
thread counts and cache locations (none of them changes generated code).
"""

from __future__ import annotations

import functools
import platform
import sys
from dataclasses import dataclass, field

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

FORMAT = 2  # bump when the entry layout or a key's recipe changes


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
def _fast_prefix(config: Config) -> str:
    return "fastcache" + _encode(_common(config))


@functools.lru_cache(maxsize=8)
def _common(config: Config) -> dict[str, str]:
    parts = {
        "format": str(FORMAT),
        "quadrants": __version__,
        "runtime_abi": str(RUNTIME_ABI),
        "llvmlite": llvmlite_version(),
        "device": device_key(config),
    }
    for name, value in compile_relevant(config).items():
        parts["config." + name] = value
    return parts


def runtime_parts(config: Config) -> dict[str, str]:
    """The native runtime library's key parts: it depends on the compiler and the device, not on kernels."""
    common = _common(config)
    return {k: v for k, v in common.items() if not k.startswith("config.")} | {"cpu_target": config.cpu_target}


def offline_key(ir_text: str, config: Config) -> KeyParts:
    """The offline cache key of a lowered kernel (our IR text, printed after the passes)."""
    return KeyParts("offline", {**_common(config), "ir": ir_text})


def fastcache_key(source_text: str, signature: str, config: Config) -> KeyParts:
    """The fastcache key of a kernel's specialization: its source text and argument signature
    (`lang/args.signature_text`), without running the frontend."""
    return KeyParts("fastcache", {**_common(config), "source": source_text, "signature": signature})


def fastcache_digest(source_text: str, signature: str, config: Config) -> str:
    """`fastcache_key(...).digest()`, computed without rebuilding the common parts (the start-up path).
    The common parts sort before "signature" and "source", so the encodings agree."""
    tail = _encode({"signature": signature, "source": source_text})
    return sha256((_fast_prefix(config) + tail).encode()).hexdigest()


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


def device_key(config: Config) -> str:
    """What the code generator targets: the CPU (`device_capabilities`), or for arch=cuda the GPU architecture
    and PTX ISA (plus the host CPU when the CUDA code is emulated on it)."""
    if config.arch.name != "cuda":
        return device_capabilities(config.cpu_target)
    from quadrants.codegen.nvptx_isa import PTX_ISA

    gpu = f"cuda/{config.cuda_arch or 'sm_80'}/ptx{PTX_ISA}"
    return f"{gpu}/emulated-on:{device_capabilities('host')}" if config.cuda_emulate else gpu


@functools.cache
def device_capabilities(cpu_target: str = "host") -> str:
    """What the CPU code generator branches on, without importing llvmlite.

    For `cpu_target="host"`: the OS, architecture and C library, and the CPU vendor, family/model and feature
    flags (the inputs LLVM derives the host CPU name and features from). For a named target (`x86-64-v3`):
    the name alone - the code is the same for every machine that can run it.
    """
    base = f"{sys.platform}/{platform.machine()}/{'-'.join(platform.libc_ver())}"
    if cpu_target != "host":
        return f"{base}/cpu={cpu_target}"
    return f"{base}/cpu=host:{_host_cpu_fingerprint()}"


@functools.cache
def _cpuinfo() -> dict[str, str]:
    """The first processor block of /proc/cpuinfo ({} where there is none)."""
    try:
        with open("/proc/cpuinfo") as f:
            text = f.read(64 * 1024)
    except OSError:
        text = ""
    fields: dict[str, str] = {}
    for line in text.splitlines():
        if not line.strip():
            break  # the first processor block describes them all on the machines we target
        k, _, v = line.partition(":")
        fields[k.strip()] = v.strip()
    return fields


def _host_cpu_fingerprint() -> str:
    fields = _cpuinfo()
    keys = ("vendor_id", "cpu family", "model", "flags", "Features", "CPU implementer", "CPU part")
    picked = {k: fields[k] for k in keys if k in fields}
    if "flags" in picked:
        picked["flags"] = " ".join(sorted(picked["flags"].split()))
    if not picked:  # no /proc/cpuinfo: ask LLVM (slower: imports llvmlite)
        import llvmlite.binding as llvm

        llvm.initialize_native_target()
        picked = {"llvm": llvm.get_host_cpu_name() + ":" + llvm.get_host_cpu_features().flatten()}
    return sha256(repr(sorted(picked.items())).encode()).hexdigest()[:24]


# The x86-64 micro-architecture levels as /proc/cpuinfo flag names (psABI; "pni" is SSE3, "abm" has LZCNT).
_X86_LEVELS = {
    "x86-64": set(),
    "x86-64-v2": {"cx16", "lahf_lm", "popcnt", "pni", "sse4_1", "sse4_2", "ssse3"},
}
_X86_LEVELS["x86-64-v3"] = _X86_LEVELS["x86-64-v2"] | {"avx", "avx2", "bmi1", "bmi2", "f16c", "fma", "abm", "movbe",
                                                       "xsave"}  # fmt: skip
_X86_LEVELS["x86-64-v4"] = _X86_LEVELS["x86-64-v3"] | {"avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl"}


def host_runs(cpu_target: str) -> bool:
    """Can this machine run code built for `cpu_target`? Known for the x86-64 levels (the portable targets
    `qd precompile` recommends); False for anything else, which then needs QD_CPU_TARGET set explicitly."""
    need = _X86_LEVELS.get(cpu_target)
    if need is None or platform.machine() not in ("x86_64", "AMD64"):
        return False
    return need <= set(_cpuinfo().get("flags", "").split())


__all__ = ["KeyParts", "offline_key", "fastcache_key", "fastcache_digest", "device_capabilities", "host_runs", "FORMAT"]
