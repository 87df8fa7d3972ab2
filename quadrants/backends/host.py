"""The host machine as the code generators see it, without importing llvmlite: what goes into the device part
of a CPU key, and which portable CPU targets this machine can run. Used by the CPU backend, and by the CUDA
backend when its code is emulated on the host."""

from __future__ import annotations

import functools
import platform
import sys

from quadrants.cache.keys import sha256


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
