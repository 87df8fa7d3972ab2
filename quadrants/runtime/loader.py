"""Make object code callable in this process.

`OrcLoader` links an object in-process with llvmlite's ORC JIT (used right after compiling, when llvmlite is
loaded anyway: ~0.2 ms a kernel). `SharedObjectLoader` opens a shared library with ctypes (cache hits and
precompiled bundles: no llvmlite import at all). Both return a `Loaded`: the entry address and whatever keeps
the code mapped.
"""

from __future__ import annotations

import ctypes
import itertools
import threading
from dataclasses import dataclass
from typing import Any

from quadrants.runtime.abi import RUNTIME_SYMBOL_PROBE  # noqa: F401 - re-exported


@dataclass
class Loaded:
    address: int
    keepalive: Any


class OrcLoader:
    """One LLJIT per process; the native runtime is one JIT library, each kernel object another that links
    against it."""

    _lock = threading.Lock()
    _jit: Any = None
    _runtime: Any = None
    _names = itertools.count()
    RUNTIME_LIB = "qd_runtime"

    @classmethod
    def load(cls, object_code: bytes, symbol: str) -> Loaded:
        import llvmlite.binding as llvm

        with cls._lock:
            cls._ensure_runtime()
            builder = (
                llvm.JITLibraryBuilder()
                .add_object_img(object_code)
                .add_jit_library(cls.RUNTIME_LIB)
                .add_current_process()
            )
            tracker = builder.export_symbol(symbol).link(cls._jit, f"qd{next(cls._names)}_{symbol}")
        return Loaded(address=tracker[symbol], keepalive=tracker)

    @classmethod
    def load_pack(cls, objects: list[bytes], symbols: list[str]) -> tuple[dict[str, int], Any]:
        """Link many kernel objects as one JIT library (an object pack: what precompile leaves where no system
        linker exists). Returns each symbol's address and what keeps them mapped."""
        import llvmlite.binding as llvm

        with cls._lock:
            cls._ensure_runtime()
            builder = llvm.JITLibraryBuilder()
            for obj in objects:
                builder.add_object_img(obj)
            builder.add_jit_library(cls.RUNTIME_LIB).add_current_process()
            for sym in symbols:
                builder.export_symbol(sym)
            tracker = builder.link(cls._jit, f"qdpack{next(cls._names)}")
        return {sym: tracker[sym] for sym in symbols}, tracker

    @classmethod
    def _ensure_runtime(cls) -> None:
        if cls._runtime is not None:
            return
        import llvmlite.binding as llvm

        from quadrants.codegen.compile import compile_ir
        from quadrants.codegen.cpu import cpu_target, target_machine
        from quadrants.codegen.runtime_ir import RUNTIME_SYMBOLS, runtime_module_text

        target = cpu_target("host")
        tm = target_machine(target, 2)
        cls._jit = llvm.create_lljit_compiler(tm)
        text = runtime_module_text(target.triple, str(tm.target_data))
        obj = compile_ir(text, "qd_runtime", target, opt_level=2)
        builder = llvm.JITLibraryBuilder().add_object_img(obj.object_code).add_current_process()
        for sym in RUNTIME_SYMBOLS:
            builder.export_symbol(sym)
        cls._runtime = builder.link(cls._jit, cls.RUNTIME_LIB)


class SharedObjectLoader:
    """dlopen with lazy binding and dlsym, through libc directly (~25% cheaper than ctypes.CDLL + getattr).
    Libraries stay loaded for the life of the process."""

    _dlopen: Any = None
    _dlsym: Any = None
    _dlerror: Any = None

    @classmethod
    def load(cls, path: str, symbol: str) -> Loaded:
        handle = cls.open(path)
        return Loaded(address=cls.symbol(handle, symbol, path), keepalive=handle)

    @classmethod
    def open(cls, path: str) -> int:
        if cls._dlopen is None:
            libc = ctypes.CDLL(None)
            cls._dlopen, cls._dlsym, cls._dlerror = libc.dlopen, libc.dlsym, libc.dlerror
            cls._dlopen.restype, cls._dlopen.argtypes = ctypes.c_void_p, [ctypes.c_char_p, ctypes.c_int]
            cls._dlsym.restype, cls._dlsym.argtypes = ctypes.c_void_p, [ctypes.c_void_p, ctypes.c_char_p]
            cls._dlerror.restype = ctypes.c_char_p
        # RTLD_NOW: a symbol the library needs but nobody defines is an error here (the caller compiles instead),
        # not a "symbol lookup error" that ends the process at the first call.
        handle = cls._dlopen(path.encode(), RTLD_NOW | RTLD_LOCAL)
        if not handle:
            raise OSError(f"dlopen({path}): {(cls._dlerror() or b'').decode(errors='replace')}")
        return int(handle)

    @classmethod
    def symbol(cls, handle: int, symbol: str, path: str = "") -> int:
        address = cls._dlsym(handle, symbol.encode())
        if not address:
            raise OSError(f"{path or 'library'} has no symbol {symbol}")
        return int(address)


RTLD_NOW = 2
RTLD_LOCAL = 0
