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
    """One LLJIT per process; each object becomes its own JIT library."""

    _lock = threading.Lock()
    _jit: Any = None
    _names = itertools.count()

    @classmethod
    def load(cls, object_code: bytes, symbol: str) -> Loaded:
        import llvmlite.binding as llvm

        from quadrants.codegen.cpu import cpu_target, target_machine

        with cls._lock:
            if cls._jit is None:
                cls._jit = llvm.create_lljit_compiler(target_machine(cpu_target("host"), 2))
            builder = llvm.JITLibraryBuilder().add_object_img(object_code).add_current_process()
            tracker = builder.export_symbol(symbol).link(cls._jit, f"qd{next(cls._names)}_{symbol}")
        return Loaded(address=tracker[symbol], keepalive=tracker)


class SharedObjectLoader:
    @staticmethod
    def load(path: str, symbol: str) -> Loaded:
        lib = ctypes.CDLL(path)
        fn = getattr(lib, symbol)
        return Loaded(address=ctypes.cast(fn, ctypes.c_void_p).value or 0, keepalive=lib)
