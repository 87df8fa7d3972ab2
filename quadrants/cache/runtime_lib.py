"""The native runtime as a shared library: built once per machine and version, cached like a kernel, and loaded
with global symbols so cached kernels (their .so files and bundles) resolve its functions without llvmlite."""

from __future__ import annotations

from typing import Any

from quadrants import _logging
from quadrants._config import Config
from quadrants.cache import keys
from quadrants.cache.store import CacheStore
from quadrants.runtime.loader import Loaded, SharedObjectLoader


def try_dlopen(path: str, symbol: str) -> Loaded | None:
    try:
        return SharedObjectLoader.load(path, symbol)
    except (OSError, AttributeError) as e:
        _logging.debug(f"cannot open {path} ({e}); linking in-process instead", tag="cache")
        return None


_RUNTIME_LOADED: set[str] = set()


def load_runtime_so(store: CacheStore | None, get_linker: Any, config: Config, load: bool = True) -> bool:
    """Find (or build and cache) the native runtime .so for this config and, if `load`, load it globally."""
    import ctypes

    from quadrants.runtime.loader import RUNTIME_SYMBOL_PROBE

    if store is None:
        return False
    rkey = keys.KeyParts("runtime", keys.runtime_parts(config)).digest()
    if rkey in _RUNTIME_LOADED:
        return True
    entry = store.read("runtime", rkey)
    path = entry.path if entry is not None and entry.meta.get("so") else None
    if path is None:
        linker = get_linker()
        if linker is None:
            return False
        from quadrants.cache.link import LinkError, link_shared
        from quadrants.codegen.compile import compile_ir
        from quadrants.codegen.cpu import cpu_target, target_machine
        from quadrants.codegen.runtime_ir import runtime_module_text

        target = cpu_target(config.cpu_target)
        tm = target_machine(target, 2)
        obj = compile_ir(runtime_module_text(target.triple, str(tm.target_data)), "qd_runtime", target, 2).object_code
        try:
            so = link_shared(obj, linker)
        except (LinkError, OSError):
            return False
        path = store.write("runtime", rkey, so, {"so": len(so)})
        if path is None:
            return False
    if not load:
        return True
    try:
        lib = ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
        getattr(lib, RUNTIME_SYMBOL_PROBE)
    except (OSError, AttributeError):
        return False
    _RUNTIME_LIBS.append(lib)
    _RUNTIME_LOADED.add(rkey)
    return True


_RUNTIME_LIBS: list[Any] = []
