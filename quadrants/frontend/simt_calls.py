"""The handlers of `qd.simt` calls in kernels (quadrants/lang/simt/): block shared arrays, barriers and warp
shuffles become `ir.SharedArray` / `ir.Simt` values. Their arguments are evaluated (intrinsic_calls.EVAL).

They belong to a parallel loop's body, where the GPU's blocks and warps exist; codegen/cuda.py lowers them,
the CPU backend refuses them (codegen/kernel.py).
"""

from __future__ import annotations

import ast
import warnings
from typing import Any

from quadrants.errors import QuadrantsTypeError
from quadrants.frontend.builder import FrontendBuilder
from quadrants.frontend.intrinsics import DEPRECATED
from quadrants.frontend.values import Matrix
from quadrants.ir import nodes as ir
from quadrants.types.dtypes import PrimitiveType, f32, i32, i64, to_dtype, u32, u64

MAX_SHARED_BYTES = 48 * 1024  # static shared memory a block may declare on every CUDA GPU
FULL = 0xFFFFFFFF  # every lane of the warp


def _in_parallel_loop(fb: FrontendBuilder, node: ast.Call, what: str) -> None:
    if fb.parallel_id == 0 or any(fr.real is not None for fr in fb.frames):
        raise fb.error(node, f"{what} is only valid inside a kernel's parallel for loop (where GPU blocks exist)")


def _alone(fb: FrontendBuilder) -> bool:
    """Outside a parallel loop (the kernel's serial code, one thread): a barrier or fence there has no other thread
    to wait for or order against, so it is nothing, as Quadrants compiles it."""
    return fb.parallel_id == 0 and not any(fr.real is not None for fr in fb.frames)


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
    if _alone(fb):
        return
    _in_parallel_loop(fb, node, "qd.simt.block.sync()")
    fb.b.emit(ir.Simt(op="block_sync", type=i32))


def _thread_idx(fb: FrontendBuilder, node: ast.Call, name: str) -> Any:
    _in_parallel_loop(fb, node, "qd.simt.block.thread_idx()")
    return fb.b.emit(ir.Simt(op="block_thread_idx", type=i32))


def _clock_counter(fb: FrontendBuilder, node: ast.Call, name: str) -> Any:
    return fb.b.emit(ir.Simt(op="clock_counter", type=i64))


def _warp_sync(fb: FrontendBuilder, node: ast.Call, name: str, mask: Any) -> None:
    if _alone(fb):
        return
    _in_parallel_loop(fb, node, "qd.simt.warp.sync()")
    fb.b.emit(ir.Simt(op="warp_sync", args=(_mask(fb, node, mask, "qd.simt.warp.sync"),), type=i32))


SHUFFLES = {"shfl_down": "shfl_down", "shfl_up": "shfl_up", "shfl_xor": "shfl_xor", "shfl_sync": "shfl"}


def _shuffle(fb: FrontendBuilder, node: ast.Call, name: str, mask: Any, value: Any, offset: Any) -> Any:
    """`qd.simt.warp.shfl_<kind>_<i32|f32>(mask, value, offset)`: `value` of another lane of the warp."""
    base, _, suffix = name.removeprefix("simt.warp.").rpartition("_")
    what = f"qd.simt.warp.{name.removeprefix('simt.warp.')}"
    _in_parallel_loop(fb, node, what)
    t = f32 if suffix == "f32" else i32
    args = (_mask(fb, node, mask, what), _scalar(fb, node, value, t, what), _scalar(fb, node, offset, i32, what))
    return fb.b.emit(ir.Simt(op=SHUFFLES[base], args=args, type=t))


# ---- warp votes, matches and masks (qd.simt.warp), fences, block folds ---------------------------------------




def _simt(fb: FrontendBuilder, node: ast.Call, what: str, op: str, t: PrimitiveType, *args: ir.Value) -> ir.Value:
    _in_parallel_loop(fb, node, what)
    return fb.b.emit(ir.Simt(op=op, args=args, type=t))


def _predicate(fb: FrontendBuilder, node: ast.Call, p: Any, what: str) -> ir.Value:
    """A vote's predicate as an i32 (any scalar: non-zero is true)."""
    if isinstance(p, Matrix):
        raise fb.error(node, f"{what} takes a scalar predicate, not a vector or matrix", QuadrantsTypeError)
    v = fb.ops.value(p, fb.loc(node))
    return fb.ops.cast(fb.ops.binary("ne", v, 0, fb.loc(node)), i32, fb.loc(node)) if v.type is not i32 else v


def _mask(fb: FrontendBuilder, node: ast.Call, mask: Any, what: str) -> ir.Value:
    """A lane mask as a u32 (a Python int up to 0xFFFFFFFF is one, also where it does not fit the default i32)."""
    if isinstance(mask, int) and -(2**31) <= mask < 2**32:
        return fb.b.const(mask & FULL, u32)
    return _scalar(fb, node, mask, u32, what)


def _warp_vote(fb: FrontendBuilder, node: ast.Call, name: str, mask: Any, predicate: Any) -> Any:
    """`qd.simt.warp.all_nonzero / any_nonzero / unique(mask, predicate)`: an i32 0 or 1 on every lane."""
    what = f"qd.simt.warp.{name.removeprefix('simt.warp.')}"
    op = {"all_nonzero": "vote_all", "any_nonzero": "vote_any", "unique": "vote_uni"}[name.removeprefix("simt.warp.")]
    return _simt(fb, node, what, op, i32, _mask(fb, node, mask, what), _predicate(fb, node, predicate, what))


def _warp_ballot(fb: FrontendBuilder, node: ast.Call, name: str, predicate: Any) -> Any:
    """`qd.simt.warp.ballot(predicate)`: the warp's lanes whose predicate is non-zero, an i32 as Quadrants has it."""
    what = "qd.simt.warp.ballot"
    bits = _simt(fb, node, what, "ballot", u32, fb.b.const(FULL, u32), _predicate(fb, node, predicate, what))
    return fb.b.cast(bits, i32)


def _warp_match(fb: FrontendBuilder, node: ast.Call, name: str, mask: Any, value: Any) -> Any:
    """`qd.simt.warp.match_any / match_all(mask, value)`: the lanes holding the same i32 value (an i32 mask)."""
    what = f"qd.simt.warp.{name.removeprefix('simt.warp.')}"
    op = "match_any" if name.endswith("match_any") else "match_all"
    return fb.b.cast(_simt(fb, node, what, op, u32, _mask(fb, node, mask, what), _scalar(fb, node, value, i32, what)), i32)


def _active_mask(fb: FrontendBuilder, node: ast.Call, name: str) -> Any:
    return fb.b.cast(_simt(fb, node, "qd.simt.warp.active_mask()", "active_mask", u32), i32)


def _fence(fb: FrontendBuilder, node: ast.Call, name: str) -> None:
    """`qd.simt.block.mem_fence()` / `subgroup.mem_fence()` (the block's scope) and `qd.simt.grid.mem_fence()`."""
    op = "fence_grid" if name.startswith("simt.grid.") else "fence_block"
    if not _alone(fb):
        _simt(fb, node, f"qd.{name}()", op, i32)


def _block_fold(fb: FrontendBuilder, node: ast.Call, name: str, predicate: Any) -> Any:
    """`qd.simt.block.sync_all_nonzero / sync_any_nonzero / sync_count_nonzero(predicate)`: a block barrier that
    also folds every thread's predicate (an i32: 0 or 1, or the count)."""
    what = f"qd.{name}"
    op = {"all": "block_sync_and", "any": "block_sync_or", "count": "block_sync_count"}[name.split("_")[1]]
    return _simt(fb, node, what, op, i32, _predicate(fb, node, predicate, what))


def _global_thread_idx(fb: FrontendBuilder, node: ast.Call, name: str) -> Any:
    """`qd.simt.block.global_thread_idx()`: the thread's index in the grid, block after block."""
    what = "qd.simt.block.global_thread_idx()"
    loc = fb.loc(node)
    tid = _simt(fb, node, what, "block_thread_idx", i32)
    block, dim = (_simt(fb, node, what, op, i32) for op in ("block_idx", "block_dim"))
    return fb.ops.binary("add", fb.ops.binary("mul", block, dim, loc), tid, loc)


# ---- qd.simt.subgroup's primitives (the rest is kernel-language code: quadrants/lang/simt/subgroup.py) ---------

SUBGROUP_SHUFFLES = {"shuffle": "shfl", "broadcast": "shfl", "shuffle_up": "shfl_up", "shuffle_down": "shfl_down",
                     "shuffle_xor": "shfl_xor"}  # fmt: skip


def _subgroup_shuffle(fb: FrontendBuilder, node: ast.Call, name: str, value: Any, lane: Any) -> Any:
    """`shuffle(value, index)` / `broadcast` / `shuffle_up(value, offset)` / `shuffle_down`: 32- and 64-bit
    integers and floats, the value keeping its type."""
    short = name.removeprefix("simt.subgroup.")
    what = f"qd.simt.subgroup.{short}"
    if isinstance(value, Matrix):
        raise fb.error(node, f"{what} moves scalars, not a vector or matrix: shuffle each element",
                       QuadrantsTypeError)  # fmt: skip
    v = fb.ops.value(value, fb.loc(node))
    if str(v.type) not in ir.SHUFFLE_TYPES:
        raise fb.error(node, f"{what} moves i32, u32, f32, i64, u64 or f64 values, not {v.type}", QuadrantsTypeError)
    args = (fb.b.const(FULL, u32), v, _scalar(fb, node, lane, i32, what))
    return _simt(fb, node, what, SUBGROUP_SHUFFLES[short], v.type, *args)  # type: ignore[arg-type]


def _lane_id(fb: FrontendBuilder, node: ast.Call, name: str) -> Any:
    return _simt(fb, node, "qd.simt.subgroup.invocation_id()", "lane_id", i32)


def _subgroup_ballot(fb: FrontendBuilder, node: ast.Call, name: str, predicate: Any) -> Any:
    """`ballot(predicate)`: the subgroup's lanes whose predicate is non-zero, a u64 (warps have 32 lanes)."""
    what = "qd.simt.subgroup.ballot"
    bits = _simt(fb, node, what, "ballot", u32, fb.b.const(FULL, u32), _predicate(fb, node, predicate, what))
    return fb.b.cast(bits, u64)


def _subgroup_vote(fb: FrontendBuilder, node: ast.Call, name: str, predicate: Any) -> Any:
    what = f"qd.{name}"
    op = "vote_all" if name.endswith("all") else "vote_any"
    return _simt(fb, node, what, op, i32, fb.b.const(FULL, u32), _predicate(fb, node, predicate, what))


def _subgroup_sync(fb: FrontendBuilder, node: ast.Call, name: str) -> None:
    if not _alone(fb):
        _simt(fb, node, f"qd.{name}()", "warp_sync", i32, fb.b.const(FULL, u32))


def _identity(fb: FrontendBuilder, node: ast.Call, name: str, op: str, value: Any) -> Any:
    """The value of `value`'s type that `op` leaves others unchanged with: a scan's start (kernel-language code of
    quadrants/lang/simt/ reads it)."""
    t = fb.ops.value(value, fb.loc(node)).type
    assert isinstance(t, PrimitiveType)
    if op in ("add", "or", "xor"):
        v: Any = 0
    elif op == "mul":
        v = 1
    elif op == "and":
        v = -1 if t.kind == "int" else (1 << t.bits) - 1
    elif t.is_float:
        v = float("inf") if op == "min" else float("-inf")
    else:
        low, high = t.min_max()
        v = high if op == "min" else low
    return fb.b.const(v, t)


_WARNED: set[str] = set()


def _deprecated(fb: FrontendBuilder, node: ast.Call, name: str, *args: Any) -> Any:
    """A deprecated qd.simt name in a kernel: the warning (once per process, at the call), then the new operation."""
    new, message = DEPRECATED[name]
    if name not in _WARNED:
        _WARNED.add(name)
        loc = fb.loc(node)
        warnings.warn_explicit(message, DeprecationWarning, loc.filename, loc.lineno)
    return SIMT_EVAL[new](fb, node, new, *args)


SIMT_EVAL: dict[str, Any] = {
    "simt.block.SharedArray": _shared_array, "simt.block.sync": _block_sync, "simt.block.thread_idx": _thread_idx,
    "simt.warp.sync": _warp_sync, "clock_counter": _clock_counter,
    **{f"simt.warp.{kind}_{t}": _shuffle for kind in SHUFFLES for t in ("i32", "f32") if (kind, t) != ("shfl_xor", "f32")},
    **{f"simt.warp.{n}": _warp_vote for n in ("all_nonzero", "any_nonzero", "unique")},
    "simt.warp.ballot": _warp_ballot, "simt.warp.match_any": _warp_match, "simt.warp.match_all": _warp_match,
    "simt.warp.active_mask": _active_mask,
    "simt.block.mem_fence": _fence, "simt.grid.mem_fence": _fence, "simt.subgroup.mem_fence": _fence,
    **{f"simt.block.sync_{n}_nonzero": _block_fold for n in ("all", "any", "count")},
    "simt.block.global_thread_idx": _global_thread_idx,
    **{f"simt.subgroup.{n}": _subgroup_shuffle for n in SUBGROUP_SHUFFLES},
    "simt.subgroup.invocation_id": _lane_id, "simt.subgroup.ballot": _subgroup_ballot,
    "simt.subgroup._vote_all": _subgroup_vote, "simt.subgroup._vote_any": _subgroup_vote,
    "simt.subgroup.sync": _subgroup_sync, "simt.subgroup._identity": _identity,
    **{old: _deprecated for old in DEPRECATED},
}  # fmt: skip
