"""The runtime context passed to every kernel launch (mirrors `codegen/llvm_types.CTX_TYPE`)."""

from __future__ import annotations

import ctypes


class RuntimeContext(ctypes.Structure):
    _fields_ = [
        ("num_threads", ctypes.c_int32),
        ("error", ctypes.c_int32),
        ("site", ctypes.c_int64),
        ("index", ctypes.c_int64),
        ("dim", ctypes.c_int64),
        ("extent", ctypes.c_int64),
        ("result", ctypes.c_void_p),
        ("regions", ctypes.c_void_p),  # base addresses of the field memory regions
        ("warned", ctypes.c_void_p),  # one byte per check site: set by a non-fatal check (debug-mode overflow)
    ]


ERROR_BOUNDS = 1
ERROR_ASSERT = 2
ERROR_POOL = 3
RESULT_SLOT_BYTES = 8
