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
    @staticmethod
    def load(path: str, symbol: str) -> Loaded:
        lib = ctypes.CDLL(path)
        fn = getattr(lib, symbol)
        return Loaded(address=ctypes.cast(fn, ctypes.c_void_p).value or 0, keepalive=lib)
