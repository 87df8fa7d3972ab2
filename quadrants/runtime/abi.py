"""How Python calls one compiled kernel: the argument kinds, return types, symbol and check sites.

An ABI record is plain data, serializable to JSON (cache entries store it; nothing is pickled).
"""

from __future__ import annotations

import ctypes
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from quadrants.types import dtypes
from quadrants.types.dtypes import PrimitiveType

# The native runtime's ABI version: in its exported symbols (`qd_rt<N>_parallel_for`) and in every cache key, so
# code built against another runtime never links by accident. Kept here, in a module that does not import
# llvmlite: the cache keys and the loader need it on the start-up path. Bump it whenever codegen/runtime.ll
# changes, and set RUNTIME_LL_DIGEST to the new file's digest: tests/codegen/test_codegen.py fails until both
# are done.
RUNTIME_ABI = 4
RUNTIME_LL_DIGEST = (4, "46a0c342d776448c")  # (RUNTIME_ABI, sha256 of codegen/runtime.ll, first 16 hex digits)
RUNTIME_SYMBOL_PROBE = f"qd_rt{RUNTIME_ABI}_parallel_for"  # a symbol every build of this runtime exports

# A kernel with more native arguments than this takes them packed: its entry (or CUDA task) function receives
# one pointer to 8-byte slots, argument k in slot k (a scalar in its C type at the slot's start, an ndarray as
# its descriptor's address; on CUDA its data pointer and extents, one slot each). ctypes cannot call a function
# of more than 1024 arguments (CUDA tasks have their own bound, in bytes: CUDA_PARAM_BYTES below); a kernel
# under the limit is called with plain arguments, as before (no cost to the common case).
MAX_DIRECT_ARGS = 256

# Check sites whose failure is an error whatever the debug options: a full adstack (never a gradient read from
# the wrong slot) and an allocation from a full sparse pool. A kernel with one reads its error record after its
# launches (codegen/abi.error_checks; the CUDA launcher syncs for it).
ALWAYS_CHECKED = ("adstack", "sparse_pool")


def packs_args(native_args: int) -> bool:
    """Whether a CPU entry function of `native_args` arguments (after the context) takes them packed."""
    return native_args > MAX_DIRECT_ARGS


# A CUDA kernel's parameters must fit the launch's parameter space: 4096 bytes under PTX ISA 8.0 (and on
# drivers before CUDA 12.1); 32764 bytes from PTX ISA 8.1 with a CUDA 12.1 driver on sm_70 and newer. One
# module serves every architecture and 12.0 drivers, so the 4 KiB bound holds for all: a task whose parameters
# (ctx, temps, then the arguments, each aligned to its size) take more receives `(ctx, temps, args)`, the
# arguments in 8-byte slots of a device buffer the launcher fills.
CUDA_PARAM_BYTES = 4096


def cuda_param_bytes(arg_sizes: Sequence[int]) -> int:
    """The parameter space a CUDA task takes: two pointers, then arguments of these byte sizes, each aligned
    to its size (PTX `.param` layout)."""
    end = 16
    for n in arg_sizes:
        end = -(-end // n) * n + n
    return end


def cuda_packs_args(arg_sizes: Sequence[int]) -> bool:
    """Whether a CUDA task with arguments of these byte sizes takes them packed (a device buffer)."""
    return cuda_param_bytes(arg_sizes) > CUDA_PARAM_BYTES


CTYPES: dict[PrimitiveType, Any] = {
    dtypes.i8: ctypes.c_int8, dtypes.i16: ctypes.c_int16, dtypes.i32: ctypes.c_int32, dtypes.i64: ctypes.c_int64,
    dtypes.u8: ctypes.c_uint8, dtypes.u16: ctypes.c_uint16, dtypes.u32: ctypes.c_uint32,
    dtypes.u64: ctypes.c_uint64, dtypes.f16: ctypes.c_float, dtypes.f32: ctypes.c_float,
    dtypes.f64: ctypes.c_double, dtypes.u1: ctypes.c_uint8,
}  # fmt: skip


@dataclass(frozen=True)
class ArgABI:
    name: str
    kind: str  # "ndarray" or "scalar"
    dtype: str
    ndim: int = 0
    elem_shape: tuple[int, ...] = ()
    writes: bool = True  # an ndarray the kernel may store to (a read-only array is refused there)

    @property
    def prim(self) -> PrimitiveType:
        return dtypes.BY_NAME[self.dtype]


@dataclass(frozen=True)
class SiteABI:
    kind: str  # ir.Site's kinds: "bounds", "matrix_bounds", "assert", "formatted", "message", "overflow"
    detail: str
    filename: str
    lineno: int
    col: int
    end_col: int
    line_text: str
    func_name: str
    owner: str = ""  # "" the kernel, else the func's "module:qualname"
    offset: int = -1  # lineno - the owner's first line; -1: unknown (keep lineno)


@dataclass(frozen=True)
class GraphABI:
    """A graph kernel's records, kept with its code (a cache hit runs no frontend): per `qd.graph.do_while`
    level (flag as written, enclosing level, flag's index in `args`) and per checkpoint stage (label, its
    IntEnum class as "module:qualname" or "", flag as written or None, flag's index or -1); `resume`: the
    index in `args` of the hidden i32 argument a checkpoints kernel takes (the stage to resume from), else -1.
    A checkpoints kernel returns one hidden i32 result: the stage that yielded, or -1."""

    levels: tuple[tuple[str, int, int], ...] = ()
    checkpoints: tuple[tuple[int | None, str, str | None, int], ...] = ()
    resume: int = -1

    def to_dict(self) -> dict[str, Any]:
        return {"levels": [list(x) for x in self.levels], "checkpoints": [list(x) for x in self.checkpoints],
                "resume": self.resume}  # fmt: skip

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> GraphABI:
        return cls(tuple((str(a), int(b), int(c)) for a, b, c in d["levels"]),
                   tuple((a, str(b), c, int(e)) for a, b, c, e in d["checkpoints"]), int(d["resume"]))  # fmt: skip


@dataclass(frozen=True)
class KernelABI:
    symbol: str
    args: tuple[ArgABI, ...]
    rets: tuple[str, ...]  # flat: a vector result contributes one entry per element
    sites: Sequence[SiteABI] = ()
    has_print: bool = False
    ret_shapes: tuple[tuple[int, ...], ...] = ()  # per declared result: () for a scalar, (n,) or (n, m)
    random: bool = False  # draws qd.random(): two more u64 arguments after `args`, the seed and the launch number
    tasks: int = 1  # offloaded tasks per launch, as Quadrants counts them (`prog.get_num_offloaded_tasks_on_last_call`)
    graph: GraphABI | None = None  # the graph constructs' records (do-while levels, checkpoints)
    # the specialization's leaf each of `args` reads, when members the kernel never reads are not passed
    # (passes/prune_args.py); None: one leaf per argument, in order
    leaves: tuple[int, ...] | None = None
    # the specialization's guards the code depends on, by index (the others guard members it never read); None: all
    guards: tuple[int, ...] | None = None

    def passed(self, leaves: list[Any]) -> list[Any]:
        """Of a specialization's leaves (lang/args.py), those the launch passes, in `args` order."""
        picks = self.leaves
        return leaves if picks is None else [leaves[k] for k in picks]

    def checked(self, guards: list[Any]) -> list[Any]:
        """Of a specialization's guards, those a launch of this code must check."""
        picks = self.guards
        return guards if picks is None else [guards[k] for k in picks]

    def to_dict(self) -> dict[str, Any]:
        return {
            "symbol": self.symbol, "args": [asdict(a) for a in self.args], "rets": list(self.rets),
            "sites": [asdict(s) for s in self.sites], "has_print": self.has_print,
            "ret_shapes": [list(x) for x in self.ret_shapes], "random": self.random, "tasks": self.tasks,
            "graph": None if self.graph is None else self.graph.to_dict(),
            "leaves": None if self.leaves is None else list(self.leaves),
            "guards": None if self.guards is None else list(self.guards),
        }  # fmt: skip

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> KernelABI:
        return cls(
            symbol=d["symbol"],
            args=tuple(
                ArgABI(a["name"], a["kind"], a["dtype"], a["ndim"], tuple(a["elem_shape"]), a.get("writes", True))
                for a in d["args"]
            ),
            rets=tuple(d["rets"]),
            sites=LazySites(d["sites"]),
            has_print=d["has_print"],
            ret_shapes=tuple(tuple(x) for x in d["ret_shapes"]),
            random=d.get("random", False),
            tasks=d.get("tasks", 1),
            graph=None if d.get("graph") is None else GraphABI.from_dict(d["graph"]),
            leaves=None if d.get("leaves") is None else tuple(d["leaves"]),
            guards=None if d.get("guards") is None else tuple(d["guards"]),
        )


class LazySites(Sequence[SiteABI]):
    """Check sites are only read when a check fails: keep them as JSON until then."""

    def __init__(self, raw: list[dict[str, Any]]) -> None:
        self._raw = raw
        self._items: tuple[SiteABI, ...] | None = None

    def _all(self) -> tuple[SiteABI, ...]:
        if self._items is None:
            self._items = tuple(SiteABI(**s) for s in self._raw)
        return self._items

    def __len__(self) -> int:
        return len(self._raw)

    def __getitem__(self, i: Any) -> Any:
        return self._all()[i]
