"""The handlers of `qd.simt` calls in kernels (quadrants/lang/simt/): block shared arrays, barriers and warp
shuffles become `ir.SharedArray` / `ir.Simt` values. Their arguments are evaluated (intrinsic_calls.EVAL).

They belong to a parallel loop's body, where the GPU's blocks and warps exist; codegen/cuda.py lowers them,
the CPU backend refuses them (codegen/kernel.py).
"""

from __future__ import annotations

import ast
from typing import Any

from quadrants.errors import QuadrantsTypeError
from quadrants.frontend.builder import FrontendBuilder
from quadrants.frontend.values import Matrix
from quadrants.ir import nodes as ir
from quadrants.types.dtypes import PrimitiveType, f32, i32, i64, to_dtype, u32

MAX_SHARED_BYTES = 48 * 1024  # static shared memory a block may declare on every CUDA GPU


def _in_parallel_loop(fb: FrontendBuilder, node: ast.Call, what: str) -> None:
    if fb.parallel_id == 0 or any(fr.real is not None for fr in fb.frames):
        raise fb.error(node, f"{what} is only valid inside a kernel's parallel for loop (where GPU blocks exist)")


def _shared_array(fb: FrontendBuilder, node: ast.Call, name: str, shape: Any, dtype: Any) -> Any:
    what = "qd.simt.block.SharedArray"
    _in_parallel_loop(fb, node, what)
    dims = (shape,) if isinstance(shape, int) else shape
    if not isinstance(dims, (tuple, list)) or not dims or not all(isinstance(n, int) and n > 0 for n in dims):
        raise fb.error(node, f"{what}(shape, dtype): the shape must be a positive integer or a tuple of them, "
                             f"not {shape!r}")  # fmt: skip
    try:
        t = to_dtype(dtype, fb.options.default_ip, fb.options.default_fp)
    except (TypeError, ValueError, KeyError):
        raise fb.error(node, f"{what}: the dtype must be a scalar type, not {dtype!r}", QuadrantsTypeError) from None
    count = 1
    for n in dims:
        count *= n
    if count * max(1, t.bits // 8) > MAX_SHARED_BYTES:
        raise fb.error(node, f"{what}{tuple(dims)} of {t} takes {count * max(1, t.bits // 8)} bytes: more than the "
                             f"{MAX_SHARED_BYTES} bytes of static shared memory a CUDA block has")  # fmt: skip
    from quadrants.runtime.ndarray import nd_type

    return fb.b.emit(ir.SharedArray(shape=tuple(dims), type=nd_type(t, len(dims), ())))


def _scalar(fb: FrontendBuilder, node: ast.Call, x: Any, t: PrimitiveType, what: str) -> ir.Value:
    if isinstance(x, Matrix):
        raise fb.error(node, f"{what} takes scalars, not a vector or matrix", QuadrantsTypeError)
    return fb.ops.cast(x, t, fb.loc(node))


def _block_sync(fb: FrontendBuilder, node: ast.Call, name: str) -> None:
    _in_parallel_loop(fb, node, "qd.simt.block.sync()")
    fb.b.emit(ir.Simt(op="block_sync", type=i32))


def _thread_idx(fb: FrontendBuilder, node: ast.Call, name: str) -> Any:
    _in_parallel_loop(fb, node, "qd.simt.block.thread_idx()")
    return fb.b.emit(ir.Simt(op="block_thread_idx", type=i32))


def _clock_counter(fb: FrontendBuilder, node: ast.Call, name: str) -> Any:
    return fb.b.emit(ir.Simt(op="clock_counter", type=i64))


def _warp_sync(fb: FrontendBuilder, node: ast.Call, name: str, mask: Any) -> None:
    _in_parallel_loop(fb, node, "qd.simt.warp.sync()")
    fb.b.emit(ir.Simt(op="warp_sync", args=(_scalar(fb, node, mask, u32, "qd.simt.warp.sync"),), type=i32))


SHUFFLES = {"shfl_down": "shfl_down", "shfl_up": "shfl_up", "shfl_xor": "shfl_xor", "shfl_sync": "shfl"}


def _shuffle(fb: FrontendBuilder, node: ast.Call, name: str, mask: Any, value: Any, offset: Any) -> Any:
    """`qd.simt.warp.shfl_<kind>_<i32|f32>(mask, value, offset)`: `value` of another lane of the warp."""
    base, _, suffix = name.removeprefix("simt.warp.").rpartition("_")
    what = f"qd.simt.warp.{name.removeprefix('simt.warp.')}"
    _in_parallel_loop(fb, node, what)
    t = f32 if suffix == "f32" else i32
    args = (_scalar(fb, node, mask, u32, what), _scalar(fb, node, value, t, what), _scalar(fb, node, offset, i32, what))
    return fb.b.emit(ir.Simt(op=SHUFFLES[base], args=args, type=t))


SIMT_EVAL: dict[str, Any] = {
    "simt.block.SharedArray": _shared_array, "simt.block.sync": _block_sync, "simt.block.thread_idx": _thread_idx,
    "simt.warp.sync": _warp_sync, "clock_counter": _clock_counter,
    **{f"simt.warp.{kind}_{t}": _shuffle for kind in SHUFFLES for t in ("i32", "f32") if (kind, t) != ("shfl_xor", "f32")},
}  # fmt: skip
