"""The typed IR: small slotted statement classes inside structured blocks.

Produced by the frontend, rewritten by passes, consumed by codegen. A statement that has a `type` is a value;
later statements refer to it by object identity (it is never copied). Control flow is structured (if, while,
range-for, break, continue), so codegen never has to rebuild loops from a CFG. Memory is explicit: local
variables are `Alloca`s read and written with `Load`/`Store`, exactly like ndarray elements behind `ExtPtr`.

Every statement carries the `SourceLoc` it came from, so runtime checks and verifier errors name user code.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field, fields

from quadrants.errors import SourceLoc
from quadrants.ir.bits import BitSlot
from quadrants.ir.snode_level import SNodeLevel
from quadrants.ir.types import NdType, PtrType
from quadrants.types.dtypes import PrimitiveType, f16, f32, f64, i32, i64, u1, u32, u64

IRType = PrimitiveType | NdType | PtrType


@dataclass(eq=False, slots=True)
class Stmt:
    loc: SourceLoc | None = field(default=None, kw_only=True, repr=False)

    def operands(self) -> tuple[Value, ...]:
        return ()

    def blocks(self) -> tuple[Block, ...]:
        return ()

    def replace_operands(self, mapping: dict[Value, Value]) -> None:
        """Swap operand values in place (used by passes)."""
        for f in fields(self):
            name = f.name
            v = getattr(self, name)
            if isinstance(v, Stmt) and v in mapping:
                setattr(self, name, mapping[v])
            elif isinstance(v, tuple) and any(isinstance(x, Stmt) and x in mapping for x in v):
                setattr(self, name, tuple(mapping.get(x, x) for x in v))


@dataclass(eq=False, slots=True)
class Value(Stmt):
    """A statement that produces a value of `type`."""

    type: IRType = field(default=i32, kw_only=True)


@dataclass(eq=False, slots=True)
class Block:
    stmts: list[Stmt] = field(default_factory=list)

    def __iter__(self) -> Iterator[Stmt]:
        return iter(self.stmts)

    def __len__(self) -> int:
        return len(self.stmts)


# ---- values -------------------------------------------------------------------------------------------


@dataclass(eq=False, slots=True)
class Const(Value):
    value: int | float = 0


@dataclass(eq=False, slots=True)
class Arg(Value):
    """Kernel parameter `index` (a scalar, or an ndarray handle of NdType)."""

    index: int = 0
    name: str = ""


@dataclass(eq=False, slots=True)
class GlobalNd(Value):
    """A field: an ndarray handle at byte `offset` of memory region `region` (the runtime's region table is
    passed to every launch), with a compile-time `shape`. Its type is an NdType.

    `terms` is empty for a flat field (row-major elements, components contiguous). A field placed in an SNode
    tree (lang/snode.py) has, per index, the terms `(div, mod, stride)` of its nested dense levels: element `I`
    is at byte `offset + sum((I[d] // div) % mod * stride)` (mod 0: no modulo, the outermost level), its
    components contiguous from there."""

    region: int = 0
    offset: int = 0
    shape: tuple[int, ...] = ()
    terms: tuple[tuple[tuple[int, int, int], ...], ...] = ()
    levels: tuple[SNodeLevel, ...] = ()  # a tree with sparse levels: the path from the root (codegen/sparse.py)
    leaf: int = 0  # with `levels`: the element's byte offset in the last level's cell
    bits: BitSlot | None = None  # a quantized field: its bits in the word its address gives (ir/bits.py)


@dataclass(eq=False, slots=True)
class NdShape(Value):
    arr: Value = None  # type: ignore[assignment]
    dim: int = 0

    def operands(self) -> tuple[Value, ...]:
        return (self.arr,)


# Binary ops. Arithmetic operands have the result type; comparisons have equal operand types and give u1;
# shifts keep the left operand's type.
ARITH_OPS = frozenset(
    {"add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "min", "max", "atan2", "raw_div", "raw_mod"}
)
BIT_OPS = frozenset({"and", "or", "xor", "shl", "shr", "lshr"})  # lshr: logical (zeros in, qd.bit_shr)
CMP_OPS = frozenset({"lt", "le", "gt", "ge", "eq", "ne"})
BINARY_OPS = ARITH_OPS | BIT_OPS | CMP_OPS

UNARY_OPS = frozenset(
    {
        "neg", "invert", "lnot", "abs", "sqrt", "rsqrt", "sin", "cos", "tan", "asin", "acos", "atan",
        "tanh", "exp", "log", "floor", "ceil", "round", "popcnt", "clz", "ffs",
    }
)  # fmt: skip
FLOAT_ONLY_UNARY = frozenset(
    {"sqrt", "rsqrt", "sin", "cos", "tan", "asin", "acos", "atan", "tanh", "exp", "log", "floor", "ceil", "round"}
)


@dataclass(eq=False, slots=True)
class Binary(Value):
    """`lhs op rhs`. An integer add/sub/mul/shl with `site` >= 0 (debug mode) flags that overflow site when its
    result overflows; the launcher then warns, naming the line (the result is the wrapped value regardless)."""

    op: str = "add"
    lhs: Value = None  # type: ignore[assignment]
    rhs: Value = None  # type: ignore[assignment]
    site: int = -1

    def operands(self) -> tuple[Value, ...]:
        return (self.lhs, self.rhs)


@dataclass(eq=False, slots=True)
class Unary(Value):
    op: str = "neg"
    operand: Value = None  # type: ignore[assignment]

    def operands(self) -> tuple[Value, ...]:
        return (self.operand,)


@dataclass(eq=False, slots=True)
class Cast(Value):
    """Numeric conversion to `type` (float->int truncates toward zero; int->int wraps)."""

    value: Value = None  # type: ignore[assignment]
    bitcast: bool = False

    def operands(self) -> tuple[Value, ...]:
        return (self.value,)


@dataclass(eq=False, slots=True)
class Select(Value):
    cond: Value = None  # type: ignore[assignment]
    a: Value = None  # type: ignore[assignment]
    b: Value = None  # type: ignore[assignment]

    def operands(self) -> tuple[Value, ...]:
        return (self.cond, self.a, self.b)


@dataclass(eq=False, slots=True)
class ExtPtr(Value):
    """Address of `arr[indices][elem]`. `site` indexes Kernel.sites for the bounds-check message. `activate`
    (a field in a sparse tree, set by passes/sparse_access.py for a pointer that is written): the access
    activates the cells on its path; otherwise an inactive path reads zeros."""

    arr: Value = None  # type: ignore[assignment]
    indices: tuple[Value, ...] = ()
    elem: tuple[int, ...] = ()
    site: int = -1
    activate: bool = False

    def operands(self) -> tuple[Value, ...]:
        return (self.arr, *self.indices)


@dataclass(eq=False, slots=True)
class Addr(Value):
    """`qd.get_addr(field, I)`: the address of an element, as a u64 (the word's, for a quantized field)."""

    ptr: Value = None  # type: ignore[assignment]

    def operands(self) -> tuple[Value, ...]:
        return (self.ptr,)


SNODE_OPS = frozenset({"activate", "deactivate", "is_active", "append", "length"})


@dataclass(eq=False, slots=True)
class SNodeOp(Value):
    """`qd.activate/deactivate/is_active/append/length(node, I)` on the node `arr.levels[depth - 1]` (`arr` is
    a field placed under it). `append` stores `values` (one scalar each) at the byte offsets `places` of the new
    cell and gives the old length; `is_active` and `length` give an i32, the others 0. `site` (activate,
    append): the check site reported when the node's pool has no cell left."""

    op: str = "is_active"
    arr: Value = None  # type: ignore[assignment]
    depth: int = 1
    indices: tuple[Value, ...] = ()
    values: tuple[Value, ...] = ()
    places: tuple[int, ...] = ()
    site: int = -1

    def operands(self) -> tuple[Value, ...]:
        return (self.arr, *self.indices, *self.values)


@dataclass(eq=False, slots=True)
class Alloca(Value):
    """A local variable of scalar type `var_type`, zero-initialized; its value is a PtrType."""

    var_type: PrimitiveType = i32
    name: str = ""


@dataclass(eq=False, slots=True)
class Load(Value):
    ptr: Value = None  # type: ignore[assignment]
    volatile: bool = False  # `qd.volatile_load(x[i])`: never merged with, or hoisted past, other accesses

    def operands(self) -> tuple[Value, ...]:
        return (self.ptr,)


@dataclass(eq=False, slots=True)
class AtomicRMW(Value):
    """Atomically `*ptr = *ptr op value`; the value is the old `*ptr`. `xchg` stores `value`; `cas` stores
    `value` only where `*ptr == expected`."""

    op: str = "add"  # add sub min max and or xor mul xchg cas
    ptr: Value = None  # type: ignore[assignment]
    value: Value = None  # type: ignore[assignment]
    expected: Value | None = None  # cas only

    def operands(self) -> tuple[Value, ...]:
        return (self.ptr, self.value) if self.expected is None else (self.ptr, self.value, self.expected)


RANDOM_TYPES = frozenset({f16, f32, f64, i32, i64, u32, u64})  # what qd.random draws (as in Quadrants 1.3.3)


@dataclass(eq=False, slots=True)
class Random(Value):
    """`qd.random(dtype)`: a uniform random `type` value (floats in [0, 1), integers over their whole range).

    The frontend emits it bare (no operands). `passes/random_streams.py` then binds what makes it a pure
    function of its inputs, a counter-based generator (Philox-4x32-10, codegen/random.py): the launch's `key`
    (u64, from the seed and the launch counter the launcher passes), the `stream` (0 for serial code, k for
    the kernel's k-th parallel loop), the loop's iteration `index` (None in serial code) and the `counter`
    (u32: how many values this iteration, or the serial code, drew before). Nothing depends on which thread
    runs an iteration, so the values do not depend on the thread count or the backend.
    """

    key: Value | None = None
    index: Value | None = None
    counter: Value | None = None
    stream: int = 0

    def operands(self) -> tuple[Value, ...]:
        return tuple(v for v in (self.key, self.index, self.counter) if v is not None)


@dataclass(eq=False, slots=True)
class SharedArray(Value):
    """`qd.simt.block.SharedArray(shape, dtype)`: an array in the GPU block's shared memory (one per block of
    threads, which all see the same elements), an ndarray handle of constant `shape` (NdType) indexed through
    `ExtPtr` like any other. Only inside a parallel loop; only the CUDA backend lowers it."""

    shape: tuple[int, ...] = ()


# `qd.simt` operations: name -> (operand count, whether it gives a value). Syncs give an unused i32 0.
SIMT_OPS: dict[str, tuple[int, bool]] = {
    "block_sync": (0, False),  # qd.simt.block.sync(): barrier of the block's threads (and shared memory)
    "block_thread_idx": (0, True),  # qd.simt.block.thread_idx(): the thread's index in its block
    "block_idx": (0, True),  # the block's index in the grid (global_thread_idx is block_idx * block_dim + thread_idx)
    "block_dim": (0, True),  # threads per block
    # qd.clock_counter(): the hardware's cycle counter, an i64 (the CPU's time-stamp counter, the GPU SM's clock).
    # Not a SIMT operation, but like them a read of the hardware that no pass may merge or move, on every backend
    "clock_counter": (0, True),
    "warp_sync": (1, False),  # qd.simt.warp.sync(mask)
    # shuffles (mask u32, value, lane or delta i32): the value of another lane of the warp, any SHUFFLE_TYPES
    "shfl_down": (3, True),  # qd.simt.warp.shfl_down_*(mask, value, delta)
    "shfl_up": (3, True),
    "shfl_xor": (3, True),
    "shfl": (3, True),  # qd.simt.warp.shfl_sync_*(mask, value, lane), qd.simt.subgroup.shuffle(value, lane)
    "lane_id": (0, True),  # the thread's lane in its warp, an i32 (qd.simt.subgroup.invocation_id())
    "active_mask": (0, True),  # the warp's lanes executing this, a u32
    # votes (mask u32, predicate i32): ballot gives the u32 of lanes whose predicate is non-zero; all / any / uni
    # an i32 0 or 1 (uni: every lane agrees)
    "ballot": (2, True),
    "vote_all": (2, True),
    "vote_any": (2, True),
    "vote_uni": (2, True),
    # (mask u32, value of 32 or 64 bits) -> u32: the lanes holding the same value (match_all: all of them, or 0)
    "match_any": (2, True),
    "match_all": (2, True),
    # memory fences: of the block (qd.simt.block.mem_fence, subgroup.mem_fence) and of the grid (grid.mem_fence)
    "fence_block": (0, False),
    "fence_grid": (0, False),
    # a block barrier that also folds the threads' i32 predicates: all non-zero, any non-zero, how many (i32)
    "block_sync_and": (1, True),
    "block_sync_or": (1, True),
    "block_sync_count": (1, True),
}
SHUFFLE_TYPES = frozenset({"i32", "u32", "f32", "i64", "u64", "f64"})  # the dtypes a shuffle moves (by name)


@dataclass(eq=False, slots=True)
class Simt(Value):
    """A `qd.simt` operation of the GPU's thread model (SIMT_OPS): barriers, the thread's index in its block,
    warp shuffles. Only inside a parallel loop; only the CUDA backend lowers it."""

    op: str = "block_sync"
    args: tuple[Value, ...] = ()

    def operands(self) -> tuple[Value, ...]:
        return self.args


@dataclass(eq=False, slots=True)
class Reduce(Stmt):
    """Inside a parallel loop: fold `value` into the loop's thread-local accumulator `slot` (made by the
    reductions pass from an AtomicRMW whose address is loop-invariant and whose old value is unused)."""

    slot: int = 0
    value: Value = None  # type: ignore[assignment]

    def operands(self) -> tuple[Value, ...]:
        return (self.value,)


# ---- statements without values ------------------------------------------------------------------------


@dataclass(eq=False, slots=True)
class Store(Stmt):
    ptr: Value = None  # type: ignore[assignment]
    value: Value = None  # type: ignore[assignment]

    def operands(self) -> tuple[Value, ...]:
        return (self.ptr, self.value)


@dataclass(eq=False, slots=True)
class BitStore(Stmt):
    """Stores into several members of one bit-packed word at once (`ptrs`: element pointers of quantized fields
    sharing the word), made by passes/bit_stores.py from consecutive stores, as Quadrants fuses them."""

    ptrs: tuple[Value, ...] = ()
    values: tuple[Value, ...] = ()

    def operands(self) -> tuple[Value, ...]:
        return (*self.ptrs, *self.values)


@dataclass(eq=False, slots=True)
class If(Stmt):
    cond: Value = None  # type: ignore[assignment]
    then: Block = field(default_factory=Block)
    orelse: Block = field(default_factory=Block)

    def operands(self) -> tuple[Value, ...]:
        return (self.cond,)

    def blocks(self) -> tuple[Block, ...]:
        return (self.then, self.orelse)


@dataclass(eq=False, slots=True)
class While(Stmt):
    """Loops until a `Break`; the condition of a Python `while` is an `If(..., Break)` at the top."""

    body: Block = field(default_factory=Block)

    def blocks(self) -> tuple[Block, ...]:
        return (self.body,)


@dataclass(frozen=True, slots=True)
class Reduction:
    """A thread-local accumulator of a parallel loop: `*ptr op= (fold of all Reduce values)`."""

    op: str
    ptr: Value
    dtype: PrimitiveType


@dataclass(eq=False, slots=True)
class RangeFor(Value):
    """`for index in range(begin, end)`; the statement itself is the i32 loop index.

    `parallel` loops are the top-level loops of a kernel: their iterations run on all cores, in any order.
    A multi-dimensional loop (`qd.ndrange`, loops over an ndarray) is one flat range over
    `prod(extents)`, and its body reads coordinates with `LoopCoord`; codegen then emits a loop per row with a
    contiguous innermost loop (so it vectorizes) instead of dividing the flat index at every iteration.
    """

    begin: Value = None  # type: ignore[assignment]
    end: Value = None  # type: ignore[assignment]
    body: Block = field(default_factory=Block)
    parallel: bool = False
    reductions: list[Reduction] = field(default_factory=list)
    name: str = ""
    block_dim: int = 0  # GPU threads per block from qd.loop_config (0: the backend's choice)
    extents: tuple[Value, ...] = ()
    # written as `range(...)` (not qd.ndrange, nor a loop over a tensor): reverse mode refuses such an inner loop
    # without the adstack, as Quadrants' frontend does, and takes the others where they carry no local
    python_range: bool = False

    def operands(self) -> tuple[Value, ...]:
        return (self.begin, self.end, *self.extents, *(r.ptr for r in self.reductions))

    def blocks(self) -> tuple[Block, ...]:
        return (self.body,)


@dataclass(eq=False, slots=True)
class LoopCoord(Value):
    """Coordinate `dim` (0-based from the outermost) of the current iteration of multi-dimensional `loop`."""

    loop: RangeFor = None  # type: ignore[assignment]
    dim: int = 0


@dataclass(eq=False, slots=True)
class Break(Stmt):
    pass


@dataclass(eq=False, slots=True)
class Continue(Stmt):
    pass


@dataclass(eq=False, slots=True)
class Return(Stmt):
    """Kernel return: writes `values` to the result buffer and leaves the kernel."""

    values: tuple[Value, ...] = ()

    def operands(self) -> tuple[Value, ...]:
        return self.values


@dataclass(eq=False, slots=True)
class Call(Stmt):
    """Call real function `func` (a `qd.real_func`) with `args` (one per parameter: scalars, ndarray handles,
    pointers); its results are written to `results`, locals (`PtrType`) of its `ret_types`, in order. A failed
    check inside the callee leaves the caller the same way as a failed check of its own."""

    func: Function = None  # type: ignore[assignment]
    args: tuple[Value, ...] = ()
    results: tuple[Value, ...] = ()

    def operands(self) -> tuple[Value, ...]:
        return (*self.args, *self.results)


@dataclass(eq=False, slots=True)
class Print(Stmt):
    """Print `parts` (strings and scalar values) at run time, from whichever thread runs it. `specs`, when
    given, holds one printf spec per part (`.2f`, `e`, `.10d`; "" for a string or a value printed as its dtype
    prints by default), checked against the value's dtype by the frontend (ir/printf.py)."""

    parts: tuple[str | Value, ...] = ()
    specs: tuple[str, ...] = ()

    def operands(self) -> tuple[Value, ...]:
        return tuple(p for p in self.parts if isinstance(p, Stmt))  # type: ignore[misc]


@dataclass(eq=False, slots=True)
class Assert(Stmt):
    """Debug-mode check: when `cond` is 0 the kernel stops and raises QuadrantsAssertionError for `site`
    (reporting `index`, an integer, when there is one: a vector/matrix index out of range; and up to two more
    integers, `extra`, that a "formatted" site's message prints after it)."""

    cond: Value = None  # type: ignore[assignment]
    site: int = -1
    index: Value | None = None
    extra: tuple[Value, ...] = ()

    def operands(self) -> tuple[Value, ...]:
        return (self.cond,) + (() if self.index is None else (self.index,)) + self.extra


@dataclass(eq=False, slots=True)
class AdStack(Value):
    """Reverse mode's adstack (passes/autodiff/adstack.py): a per-thread stack of up to `capacity` values of
    `var_type`, empty where this statement runs. Its value (a PtrType of `var_type`) is read only by the
    three statements below."""

    var_type: PrimitiveType = i32
    capacity: int = 0
    name: str = ""


@dataclass(eq=False, slots=True)
class AdStackPush(Stmt):
    """Push `value` on `stack`; a full stack stops the kernel with the error of `site` (kind "adstack")."""

    stack: Value = None  # type: ignore[assignment]
    value: Value = None  # type: ignore[assignment]
    site: int = -1

    def operands(self) -> tuple[Value, ...]:
        return (self.stack, self.value)


@dataclass(eq=False, slots=True)
class AdStackPop(Stmt):
    """Drop the top of `stack` (never empty here: the adstack pass pairs each pop with an earlier push)."""

    stack: Value = None  # type: ignore[assignment]

    def operands(self) -> tuple[Value, ...]:
        return (self.stack,)


@dataclass(eq=False, slots=True)
class AdStackTop(Value):
    """The value on top of `stack` (not removed)."""

    stack: Value = None  # type: ignore[assignment]

    def operands(self) -> tuple[Value, ...]:
        return (self.stack,)


# ---- the kernel --------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Param:
    name: str
    type: PrimitiveType | NdType
    # a member of a dataclass / data_oriented argument: not passed when the kernel never reads it (prune_args)
    member: bool = False


@dataclass(frozen=True, slots=True)
class Site:
    """A runtime check location: what is checked and where, for the error message."""

    # "bounds" (an ndarray/field index), "matrix_bounds" (a vector/matrix index), "assert", "formatted" (an
    # assert whose detail has `%d`s for its index and extra values: a BufferView's), "message" (an assert whose
    # message has run-time values: JSON of a template and the values' kinds), "adstack" (a full adstack in a
    # reverse-mode kernel), "sparse_pool" (an allocation from a sparse tree's pool that can fail: an activating
    # qd.activate / qd.append, or the kernel's marker when its field writes activate) or "overflow" (a
    # debug-mode integer overflow: not an error, the launcher warns)
    kind: str
    loc: SourceLoc | None
    detail: str = ""  # ndarray name for bounds checks, message for asserts
    owner: str = ""  # "" in the kernel, else the func's "module:qualname": where the line is found again
    first_line: int = 0  # the owner's first line (its code object's), so the line is kept relative to it


@dataclass(frozen=True, slots=True)
class FuncParam:
    """A real function's parameter: a scalar, an ndarray handle, or the address of a `qd.ref` scalar."""

    name: str
    type: IRType


@dataclass(eq=False, slots=True)
class Function:
    """A real function (`qd.real_func` at one signature): a body of its own, reached only through `Call`s, so
    it may call itself. Its `Arg`s read its parameters; a `Return` (anywhere in it, loops included) writes
    `ret_types` to the caller's result locals and leaves it. Values never cross between a function and the
    kernel: fields it reads have their own `GlobalNd` in its body."""

    name: str  # unique in its kernel (the func's qualname and a number)
    params: list[FuncParam]
    ret_types: tuple[PrimitiveType, ...]  # flat, as a kernel's
    body: Block


@dataclass(frozen=True, slots=True)
class GraphLevel:
    """A `while qd.graph.do_while(flag):` loop: `flag` as written, the enclosing loop's level (-1: none), and
    the index of the flag's `Arg` (a 0-d i32 ndarray)."""

    name: str
    parent: int
    arg: int


@dataclass(frozen=True, slots=True)
class Checkpoint:
    """A stage of a checkpoints kernel, in source order: `label` is the user's cp_id (None for a for-loop the
    frontend wrapped implicitly), `enum` the "module:qualname" of its IntEnum class ("" for a plain int),
    `yield_on` its flag as written and `arg` the flag's `Arg` index (None / -1: a stage that never yields)."""

    label: int | None
    enum: str
    yield_on: str | None
    arg: int


@dataclass(eq=False, slots=True)
class Kernel:
    name: str
    params: list[Param]
    ret_types: tuple[PrimitiveType, ...]  # flat: a vector result contributes one entry per element
    body: Block
    sites: list[Site] = field(default_factory=list)
    ret_shapes: tuple[tuple[int, ...], ...] = ()  # per declared result: () for a scalar
    functions: list[Function] = field(default_factory=list)  # the real functions its code calls
    # primal handle (an ndarray Arg, a field's GlobalNd) -> its gradient's handle (passes/autodiff)
    grads: dict[Value, Value] = field(default_factory=dict)
    # primal handle (a field's GlobalNd) -> its `.dual`'s handle (forward mode: passes/autodiff/forward.py)
    duals: dict[Value, Value] = field(default_factory=dict)
    # primal handle -> its u8 check-bit field's handle (Tape validation: passes/autodiff/validation.py)
    checkbits: dict[Value, Value] = field(default_factory=dict)
    mode: str = ""  # "", "reverse" (adjoint), "forward" (dual kernel), "validation": printed in its text
    # graph constructs (frontend/graph.py), printed in its text (they are part of what the cache keys cover)
    graph_levels: list[GraphLevel] = field(default_factory=list)  # its `qd.graph.do_while` loops, in order
    checkpoints: list[Checkpoint] = field(default_factory=list)  # its stages, explicit and implicit, in order
    resume_arg: int = -1  # checkpoints=True: the index of the hidden i32 parameter, the stage to resume from
    # After passes/prune_args.py left out members the kernel never reads: the specialization's leaf each
    # remaining parameter reads (its index among the leaves, lang/args.py). None: one leaf per parameter, in order.
    leaves: tuple[int, ...] | None = None
    # The specialization's guards (its compiled-in values, lang/args.py) the code depends on, by index, where the
    # kernel left some struct members' compiled-in values unread (driver/build.py). None: all of them.
    guards: tuple[int, ...] | None = None


def walk(block: Block) -> Iterator[Stmt]:
    """Every statement in `block` and its nested blocks, in program order."""
    for s in block.stmts:
        yield s
        for b in s.blocks():
            yield from walk(b)


__all__ = [
    "NdType", "PtrType", "IRType", "Stmt", "Value", "Block", "Const", "Arg", "GlobalNd", "NdShape", "Binary", "Unary",
    "Cast", "Select", "ExtPtr", "SNodeOp", "SNodeLevel", "SNODE_OPS", "Alloca", "Load", "AtomicRMW", "Random",
    "Reduce", "Store", "If", "While", "Reduction", "RangeFor", "LoopCoord", "Break", "Continue", "Return", "Call",
    "Print", "Assert", "AdStack", "AdStackPush", "AdStackPop", "AdStackTop", "Param", "Site",
    "FuncParam", "Function", "GraphLevel", "Checkpoint", "Kernel", "walk",
    "RANDOM_TYPES", "ARITH_OPS", "BIT_OPS", "CMP_OPS", "BINARY_OPS", "UNARY_OPS", "FLOAT_ONLY_UNARY", "u1",
]  # fmt: skip
