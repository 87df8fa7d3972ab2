"""The dtype -> LLVM type table, and the layout of the structures native code shares with Python.

Consumes dtypes; produces llvmlite types. `u1` is `i1` in registers and `i8` in memory; `f16` computes in
`float` for calls into libm.
"""

from __future__ import annotations

from llvmlite import ir as ll

from quadrants.types import dtypes
from quadrants.types.dtypes import PrimitiveType

I1 = ll.IntType(1)
I8 = ll.IntType(8)
I32 = ll.IntType(32)
I64 = ll.IntType(64)
PTR = ll.PointerType()
VOID = ll.VoidType()
F32 = ll.FloatType()
F64 = ll.DoubleType()

REGISTER: dict[PrimitiveType, ll.Type] = {
    dtypes.i8: I8, dtypes.i16: ll.IntType(16), dtypes.i32: I32, dtypes.i64: I64,
    dtypes.u8: I8, dtypes.u16: ll.IntType(16), dtypes.u32: I32, dtypes.u64: I64,
    dtypes.f16: ll.HalfType(), dtypes.f32: F32, dtypes.f64: F64, dtypes.u1: I1,
}  # fmt: skip


def reg(t: PrimitiveType) -> ll.Type:
    """Type of a value of dtype `t` in registers."""
    return REGISTER[t]


def mem(t: PrimitiveType) -> ll.Type:
    """Type of a value of dtype `t` in memory (ndarray elements, locals, frames)."""
    return I8 if t is dtypes.u1 else REGISTER[t]


def abi(t: PrimitiveType) -> ll.Type:
    """Type of a scalar kernel argument as passed by ctypes (f16 travels as float, u1 as i8)."""
    if t is dtypes.f16:
        return F32
    return mem(t)


# Runtime context shared with Python (runtime/context.py mirrors it with ctypes):
#   i32 num_threads; i32 error; i64 site; i64 index; i64 dim; i64 extent; ptr result; ptr regions
CTX_NUM_THREADS = 0
CTX_ERROR = 1
CTX_SITE = 2
CTX_INDEX = 3
CTX_DIM = 4
CTX_EXTENT = 5
CTX_RESULT = 6
CTX_REGIONS = 7
CTX_WARNED = 8
CTX_TYPE = ll.LiteralStructType([I32, I32, I64, I64, I64, I64, PTR, PTR, PTR])

ERROR_BOUNDS = 1
ERROR_ASSERT = 2
ERROR_POOL = 3  # a sparse tree's pool had no cell left (codegen/sparse_pool.py)
