"""`qd.types`: dtypes and parameter annotations."""

from quadrants.types import primitive_types, quant  # noqa: F401
from quadrants.types.annotations import (  # noqa: F401
    BufferViewType,
    NDArray,
    NdarrayType,
    RefType,
    SparseMatrixBuilderType,
    Template,
    ndarray,
    ref,
    sparse_matrix_builder,
    template,
)  # fmt: skip
from quadrants.types.compound import MatrixType, matrix, vector  # noqa: F401
from quadrants.types.dtypes import (  # noqa: F401
    PrimitiveType,
    f16,
    f32,
    f64,
    i8,
    i16,
    i32,
    i64,
    is_integral,
    is_real,
    is_signed,
    is_tensor,
    u1,
    u8,
    u16,
    u32,
    u64,
)  # fmt: skip
from quadrants.types.struct import StructType, struct  # noqa: F401

float16, float32, float64 = f16, f32, f64
int8, int16, int32, int64 = i8, i16, i32, i64
uint8, uint16, uint32, uint64, uint1 = u8, u16, u32, u64, u1
