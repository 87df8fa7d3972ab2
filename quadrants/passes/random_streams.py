"""Give every `qd.random()` draw its place in the counter-based stream (the first pass: codegen needs it).

The frontend emits `Random` statements without operands. A draw's value is a pure function (Philox-4x32-10,
codegen/random.py) of the launch's key, its stream, its iteration index and its counter, so it is the same
whichever thread runs the iteration, however many threads there are, and on every backend:

- the key mixes two hidden u64 parameters appended to the kernel's parameters, the seed (`qd.init(random_seed=)`)
  and the launch number (the program's count of launches of kernels that draw), both passed by the launcher at
  every call: neither is compiled in, so cached code serves every seed (`KernelABI.random` says to pass them);
- each parallel loop draws from stream k (its position among the kernel's parallel loops, from 1), indexed by
  its iteration index, with a u32 counter local to the iteration (zero at its start); serial code draws from
  stream 0 with one counter for the whole launch. A parallel loop under serial control flow (a graph kernel's
  do-while, which may run it many times a launch) mixes the number of such runs so far into its key.

    before:  %2 = for range(%0, %1) parallel:
               %3 = random stream 0 : f32
    after:   %0 = arg 1 qd.rand_seed : u64                  (the key: splitmix64 finalizers of seed and launch)
             %1 = arg 2 qd.rand_launch : u64
             ...
             %k = xor ... : u64
             %2 = for range(...) parallel:
               %c = alloca u32 rand.counter : ptr<u32>
               %z = const 0 : u32
               store %c, %z
               %n = load %c : u32
               %3 = random stream 1 %k, %2, %n : f32
               %o = const 1 : u32
               %m = add %n, %o : u32
               store %c, %m
"""

from __future__ import annotations

from quadrants.errors import SourceLoc
from quadrants.ir import nodes as ir
from quadrants.types.dtypes import u32, u64

SEED_PARAM = "qd.rand_seed"  # not identifiers: no user parameter has these names
LAUNCH_PARAM = "qd.rand_launch"
HIDDEN_PARAMS = (SEED_PARAM, LAUNCH_PARAM)

GOLDEN_GAMMA = 0x9E3779B97F4A7C15  # splitmix64's increment
_MIX = ((30, 0xBF58476D1CE4E5B9), (27, 0x94D049BB133111EB), (31, 0))  # splitmix64's finalizer: shift, multiplier


def run(kernel: ir.Kernel) -> None:
    if not any(isinstance(s, ir.Random) for s in ir.walk(kernel.body)):
        return
    key, prologue = _launch_key(kernel)
    st = _Streams(key, prologue)
    body = _streams(kernel.body.stmts, st, nested=False)
    kernel.body.stmts = prologue + body


class _Streams:
    """The launch's key, the parallel loops numbered so far, and the kernel-level counters (in the prologue)."""

    def __init__(self, key: ir.Value, prologue: list[ir.Stmt]) -> None:
        self.key = key
        self.prologue = prologue
        self.ordinal = 0
        self._serial: ir.Alloca | None = None
        self._passes: ir.Alloca | None = None

    def serial(self, out: list[ir.Stmt], nested: bool, loc: SourceLoc | None) -> ir.Alloca:
        """The serial code's draw counter (one for the launch), made where it is first needed (in the prologue
        when that is inside control flow, which may repeat)."""
        if self._serial is None:
            self._serial, init = _counter(loc)
            (self.prologue if nested else out).extend(init)
        return self._serial

    def pass_key(self, out: list[ir.Stmt], loc: SourceLoc | None) -> ir.Value:
        """A key of its own for this run of a parallel loop that control flow repeats (a graph kernel's
        do-while: frontend/graph.py), so a second pass does not draw the first one's numbers again."""
        if self._passes is None:
            self._passes, init = _counter(None)
            self.prologue += init
        emit = _emitter(out)
        n = emit(ir.Load(ptr=self._passes, type=u32, loc=loc))
        one = emit(ir.Const(value=1, type=u32, loc=loc))
        emit(ir.Store(ptr=self._passes, value=emit(ir.Binary(op="add", lhs=n, rhs=one, type=u32, loc=loc)), loc=loc))
        wide = emit(ir.Cast(value=n, type=u64, loc=loc))
        gamma = emit(ir.Const(value=GOLDEN_GAMMA, type=u64, loc=loc))
        return _mix(out, emit(ir.Binary(op="add", lhs=self.key, rhs=emit(ir.Binary(
            op="mul", lhs=wide, rhs=gamma, type=u64, loc=loc)), type=u64, loc=loc)))  # fmt: skip


def _streams(stmts: list[ir.Stmt], st: _Streams, nested: bool) -> list[ir.Stmt]:
    out: list[ir.Stmt] = []
    for s in stmts:
        if isinstance(s, ir.RangeFor) and s.parallel:
            st.ordinal += 1
            if _draws(s.body):
                key = st.pass_key(out, s.loc) if nested else st.key
                counter, init = _counter(s.loc)
                s.body.stmts = init + _bind(s.body.stmts, key, s, counter, st.ordinal)
        elif isinstance(s, (ir.While, ir.If)) and any(_holds_parallel(b) for b in s.blocks()):
            for b in s.blocks():  # serial control flow around parallel loops: bind each part in place
                b.stmts = _streams(b.stmts, st, nested=True)
        elif _draws(ir.Block([s])):
            out += _bind([s], st.key, None, st.serial(out, nested, s.loc), 0)
            continue
        out.append(s)
    return out


def _holds_parallel(block: ir.Block) -> bool:
    return any(isinstance(s, ir.RangeFor) and s.parallel for s in ir.walk(block))


def _emitter(out: list[ir.Stmt]):  # type: ignore[no-untyped-def]
    def emit(s: ir.Value) -> ir.Value:
        out.append(s)
        return s

    return emit


def _mix(out: list[ir.Stmt], z: ir.Value) -> ir.Value:
    """splitmix64's finalizer of `z`, its statements appended to `out`."""
    emit = _emitter(out)
    for shift, mul in _MIX:
        z = emit(ir.Binary(op="xor", lhs=z, rhs=emit(ir.Binary(op="lshr", lhs=z, rhs=emit(ir.Const(
            value=shift, type=u64)), type=u64)), type=u64))  # fmt: skip
        if mul:
            z = emit(ir.Binary(op="mul", lhs=z, rhs=emit(ir.Const(value=mul, type=u64)), type=u64))
    return z


def _draws(block: ir.Block) -> bool:
    return any(isinstance(s, ir.Random) for s in ir.walk(block))


def _launch_key(kernel: ir.Kernel) -> tuple[ir.Value, list[ir.Stmt]]:
    """Append the hidden parameters; the statements computing the launch's key from them:
    `mix(mix(seed) + launch * GOLDEN_GAMMA)`, distinct for every launch of one seed."""
    n = len(kernel.params)
    kernel.params += [ir.Param(SEED_PARAM, u64), ir.Param(LAUNCH_PARAM, u64)]
    seed = ir.Arg(index=n, name=SEED_PARAM, type=u64)
    launch = ir.Arg(index=n + 1, name=LAUNCH_PARAM, type=u64)
    stmts: list[ir.Stmt] = [seed, launch]

    def emit(s: ir.Value) -> ir.Value:
        stmts.append(s)
        return s

    def const(v: int) -> ir.Value:
        return emit(ir.Const(value=v, type=u64))

    def binary(op: str, a: ir.Value, b: ir.Value) -> ir.Value:
        return emit(ir.Binary(op=op, lhs=a, rhs=b, type=u64))

    key = _mix(stmts, binary("add", _mix(stmts, seed), binary("mul", launch, const(GOLDEN_GAMMA))))
    return key, stmts


def _counter(loc: SourceLoc | None) -> tuple[ir.Alloca, list[ir.Stmt]]:
    """A u32 draw counter and the statements that create it at zero."""
    counter = ir.Alloca(var_type=u32, name="rand.counter", type=ir.PtrType(u32), loc=loc)
    zero = ir.Const(value=0, type=u32, loc=loc)
    return counter, [counter, zero, ir.Store(ptr=counter, value=zero, loc=loc)]


def _bind(stmts: list[ir.Stmt], key: ir.Value, index: ir.Value | None, counter: ir.Alloca,
          stream: int) -> list[ir.Stmt]:  # fmt: skip
    """`stmts` with each draw given its operands and followed by the counter's increment (nested blocks too)."""
    out: list[ir.Stmt] = []
    for s in stmts:
        for b in s.blocks():
            b.stmts = _bind(b.stmts, key, index, counter, stream)
        if not isinstance(s, ir.Random):
            out.append(s)
            continue
        loc = s.loc
        n = ir.Load(ptr=counter, type=u32, loc=loc)
        s.key, s.index, s.counter, s.stream = key, index, n, stream
        one = ir.Const(value=1, type=u32, loc=loc)
        nxt = ir.Binary(op="add", lhs=n, rhs=one, type=u32, loc=loc)
        out += [n, s, one, nxt, ir.Store(ptr=counter, value=nxt, loc=loc)]
    return out
