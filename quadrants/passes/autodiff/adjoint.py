"""The adjoint of one body (a top-level loop's, or a kernel's without loops): replay, then the reverse sweep.

Consumes a body of straight-line code and runtime `if`s (funcs inlined, `qd.static` unrolled, vectors
scalarized by the frontend) and the kernel's `grads` (primal array handle -> grad handle); rewrites the body in
place into

    <adjoint locals, zeroed>                     one per float value / float local variable that gets one
    <the forward body>                           stores and atomics into differentiable arrays erased
    <the reverse sweep>                          the forward statements' adjoints, last statement first

Before (a loop body)          After
    %1 = load x[i]                %a = alloca f32 ; store %a, 0.0    (the adjoint of %2)
    %2 = sin %1                   %1 = load x[i] ; %2 = sin %1
    store y[i], %2                %g = load y.grad[i] ; %a += %g ; store y.grad[i], 0.0
                                  %c = cos %1 ; atomic add x.grad[i], load(%a) * %c

A forward value defined inside an `if` branch that the sweep needs is spilled: a local written right after it
and read where the sweep needs it (the sweep's mirrored `if` is another block, which the value does not
dominate). Unsupported forms raise `QuadrantsCompilationError` at their statement's source location.
"""

from __future__ import annotations

import copy
from typing import Any

from quadrants.errors import QuadrantsCompilationError, QuadrantsRuntimeError
from quadrants.ir import nodes as ir
from quadrants.passes.autodiff import adstack, derivatives
from quadrants.passes.autodiff.emitter import Emitter
from quadrants.passes.autodiff.emitter import is_float as _is_float
from quadrants.types.dtypes import PrimitiveType, u1

_NO_ADJOINT = (ir.Const, ir.Arg, ir.GlobalNd, ir.NdShape, ir.LoopCoord, ir.ExtPtr, ir.Alloca, ir.Random, ir.Print,
               ir.Assert)  # fmt: skip


class AdjointBuilder(Emitter):
    def __init__(self, kernel: ir.Kernel, body: ir.Block, independent_loops: bool = False,
                 parent: AdjointBuilder | None = None, stack_size: int = 0) -> None:  # fmt: skip
        """`independent_loops` (`ad_stack_experimental_enabled`): dynamic inner loops are differentiated, each
        the body of a child builder, with the adstack (adstack.py, `stack_size` slots; 0: its default) for
        the locals of the enclosing code they use."""
        self.kernel = kernel
        self.grads = kernel.grads
        self.grad_handles = set(kernel.grads.values())
        self.body = body
        self.independent_loops = independent_loops
        self.parent = parent
        self.defined: set[ir.Value] = set()  # the values this body defines (not those of its inner loops)
        self.prologue: list[ir.Stmt] = []
        self.adj: dict[ir.Value, ir.Alloca] = {}  # float value -> its adjoint local
        self.local_adj: dict[ir.Value, ir.Alloca] = {}  # float local variable (an Alloca) -> its adjoint local
        self.nested: set[ir.Value] = set()  # forward values defined inside an `if` of the body
        self.spills: dict[ir.Value, ir.Alloca] = {}
        self.stack_size = stack_size
        self.stacked: dict[ir.RangeFor, adstack.LoopStacks] = {}  # this body's inner loops that use the adstack
        self.cur = ir.Block()

    # ---- the body ---------------------------------------------------------------------------------------

    def run(self, prologue_at: int = 0) -> None:
        """Rewrite the body; its first `prologue_at` statements (declarations; a reversed loop's index and
        restored locals) stay first, before the adjoint locals, and have no adjoint."""
        for s in self.body.stmts:
            for inner in s.blocks() if isinstance(s, ir.If) else ():
                self._hoist_allocas(inner)
        forward = list(self.body.stmts)
        self._scan(forward, depth=0)
        sweep = self.cur
        self._reverse(forward[prologue_at:])
        self._erase_and_spill(self.body)
        stmts = self.body.stmts
        self.body.stmts = stmts[:prologue_at] + self.prologue + stmts[prologue_at:] + sweep.stmts

    def _hoist_allocas(self, block: ir.Block) -> None:
        """Move the locals declared inside an `if` of the body to its prologue: the sweep (another block) and
        the copies of inner loops it emits may use them. Where a local is declared changes no code (every
        backend allocates locals at the function's entry), only what the IR verifier sees."""
        keep: list[ir.Stmt] = []
        for s in block.stmts:
            if isinstance(s, ir.Alloca):
                self.prologue.append(s)
                continue
            keep.append(s)
            for inner in s.blocks() if isinstance(s, ir.If) else ():
                self._hoist_allocas(inner)
        block.stmts = keep

    def _scan(self, stmts: list[ir.Stmt], depth: int) -> None:
        """Refuse what reverse mode cannot differentiate; note the values defined inside `if`s."""
        for s in stmts:
            if isinstance(s, ir.RangeFor):
                self._check_inner_loop(s)
                continue
            if isinstance(s, ir.While):
                raise QuadrantsCompilationError("WhileStmt is not supported in AutoDiff.", s.loc)
            if isinstance(s, ir.Break):
                raise QuadrantsCompilationError("WhileControlStmt (break) is not supported in AutoDiff.", s.loc)
            if isinstance(s, ir.Continue):
                raise QuadrantsCompilationError("ContinueStmt is not supported in AutoDiff.", s.loc)
            if isinstance(s, ir.Call):
                raise QuadrantsCompilationError("a qd.real_func call cannot be differentiated (reverse mode)", s.loc)
            if isinstance(s, ir.Random):  # a replay would draw other numbers than the primal did
                raise QuadrantsRuntimeError(f"{_where(s)}RandStmt not supported in AutoDiff: qd.random() in a "
                                            "kernel that is differentiated")  # fmt: skip
            if isinstance(s, ir.Return):
                raise QuadrantsCompilationError("a kernel that returns a value cannot be differentiated", s.loc)
            if isinstance(s, ir.AtomicRMW) and self.differentiable(s.ptr) and s.op not in ("add", "sub"):
                raise QuadrantsCompilationError(f"atomic {s.op} on data that has a gradient cannot be differentiated "
                                                "(only += and -= can)", s.loc)  # fmt: skip
            if isinstance(s, (ir.Load, ir.Store, ir.AtomicRMW)) and getattr(s.ptr, "arr", None) in self.grad_handles:
                raise QuadrantsRuntimeError(f"{_where(s)}Cannot automatically differentiate through a grad tensor: "
                                            "this kernel reads or writes a `.grad` itself")  # fmt: skip
            if isinstance(s, ir.Value):
                self.defined.add(s)
                if depth:
                    self.nested.add(s)
            if isinstance(s, ir.If):
                self._scan(s.then.stmts, depth + 1)
                self._scan(s.orelse.stmts, depth + 1)

    def _check_inner_loop(self, loop: ir.RangeFor) -> None:
        """An inner runtime loop without `ad_stack_experimental_enabled`: a `range()` loop is refused, as
        Quadrants' frontend refuses it; a `qd.ndrange` loop is taken where it carries no local of the enclosing
        code (it needs no adstack then; Quadrants takes it, and with a carried local would differentiate it
        wrongly, so that is refused here too)."""
        if self.independent_loops:
            return
        if loop.python_range or self._carried(loop)[0]:
            raise QuadrantsCompilationError("Cannot use non static range in Backwards mode (an inner runtime loop "
                                            "of a reverse-mode kernel needs the adstack: qd.init(ad_stack_experim"
                                            "ental_enabled=True), or QD_AD_STACK_EXPERIMENTAL_ENABLED=1)", loop.loc)  # fmt: skip

    @staticmethod
    def _carried(loop: ir.RangeFor) -> tuple[list[ir.Alloca], set[ir.Alloca]]:
        """The locals of the enclosing code `loop` carries from iteration to iteration (those whose values an
        iteration's replay needs at its start), and those it writes (adstack.outer_locals)."""
        uses = _uses(loop.body)
        accumulators = {v for v in uses if isinstance(v, ir.Alloca) and _accumulates_only(v, loop.body, uses)}
        return adstack.outer_locals(loop, accumulators)

    def _inner_loop(self, loop: ir.RangeFor) -> None:
        """The adjoint of an inner loop: a serial loop over its iterations last to first (a chain through
        global data, `out[i] = out[i - 1] + v`, is swept from its end), each the forward body replayed and
        then swept (a child builder: its adjoint locals are zeroed per iteration). The locals of the enclosing
        code the loop uses go through the adstack (adstack.py), which gives each iteration's replay their
        values at its start; not those it only accumulates into (`s += v`: no iteration needs their value,
        and their adjoint is the same in every iteration)."""
        outer, written = self._carried(loop)
        if outer:
            for var in outer:  # a store is swept before the reads of later iterations: its adjoint local first
                if _is_float(var.var_type):
                    owner = self._owner(var)
                    owner._slot(owner.local_adj, var, var.var_type)
            ls = self.stacked[loop] = adstack.plan(self, loop, outer, written, self.stack_size)
        else:
            ls = adstack.LoopStacks(loop)  # no stacks
        rev, head = adstack.reversed_loop(self, loop, ls, lambda b, m: self._outer_primals(_clone_block(b, m)))
        self._child(rev.body, prologue_at=head)

    def _child(self, body: ir.Block, prologue_at: int = 0) -> None:
        AdjointBuilder(self.kernel, body, self.independent_loops, parent=self, stack_size=self.stack_size).run(
            prologue_at=prologue_at)

    def _outer_primals(self, block: ir.Block) -> ir.Block:
        """`block` (a copy of an inner loop's body, emitted in the sweep) reading the forward values of the
        enclosing code defined inside an `if` through their spills (the sweep is in another block)."""
        inside = {s for s in ir.walk(block) if isinstance(s, ir.Value)}
        subst: dict[ir.Value, ir.Value] = {}
        for s in ir.walk(block):
            for v in s.operands():
                if v in inside or v in subst or isinstance(v, (ir.Alloca, ir.AdStack)):
                    continue
                p = self.primal(v)
                if p is not v:
                    subst[v] = p
        if subst:
            for s in ir.walk(block):
                s.replace_operands(subst)
        return block

    def _erase_and_spill(self, block: ir.Block) -> None:
        """Stores and atomics into differentiable arrays leave the replay; spilled values get their store;
        inner loops that use the adstack get their pushes."""
        out: list[ir.Stmt] = []
        for s in block.stmts:
            if isinstance(s, (ir.Store, ir.AtomicRMW)) and self.differentiable(s.ptr):
                continue
            ls = self.stacked.get(s) if isinstance(s, ir.RangeFor) else None
            if ls is not None:
                out += adstack.instrument(ls)
            out.append(s)
            for inner in s.blocks():
                self._erase_and_spill(inner)
            slot = self.spills.get(s) if isinstance(s, ir.Value) else None
            if slot is not None and isinstance(s, ir.Value):
                out.append(ir.Store(ptr=slot, value=s, loc=s.loc))
        block.stmts = out

    # ---- the reverse sweep ------------------------------------------------------------------------------

    def _reverse(self, stmts: list[ir.Stmt]) -> None:
        for s in reversed(stmts):
            self._stmt(s)

    def _stmt(self, s: ir.Stmt) -> None:  # noqa: C901 - one case per statement class
        if isinstance(s, _NO_ADJOINT):
            return
        if isinstance(s, ir.RangeFor):
            self._inner_loop(s)
        elif isinstance(s, ir.If):
            mirror = ir.If(cond=self.primal(s.cond), loc=s.loc)
            self.emit(mirror)
            outer = self.cur
            for fwd, rev in ((s.then, mirror.then), (s.orelse, mirror.orelse)):
                self.cur = rev
                self._reverse(list(fwd.stmts))
            self.cur = outer
        elif isinstance(s, ir.Load):
            self._load(s)
        elif isinstance(s, ir.Store):
            self._store(s)
        elif isinstance(s, ir.AtomicRMW):
            self._atomic(s)
        elif isinstance(s, (ir.Unary, ir.Binary, ir.Select, ir.Cast)):
            self._op(s)

    def _op(self, s: ir.Unary | ir.Binary | ir.Select | ir.Cast) -> None:
        if isinstance(s, ir.Unary) and s.op in derivatives.ZERO_UNARY:
            return
        if isinstance(s, ir.Binary) and s.op in derivatives.ZERO_BINARY:
            return
        g = self.adjoint(s)
        if g is None:
            return
        if isinstance(s, ir.Select):
            derivatives.select(self, s, g)
        elif isinstance(s, ir.Cast):
            derivatives.cast(self, s, g)
        else:
            table: dict[str, Any] = derivatives.UNARY if isinstance(s, ir.Unary) else derivatives.BINARY
            rule = table.get(s.op)
            if rule is None:
                raise QuadrantsCompilationError(f"the gradient of {s.op} is not supported (reverse mode)", s.loc)
            rule(self, s, g)

    def _load(self, s: ir.Load) -> None:
        g = self.adjoint(s)
        if g is None:
            return
        if isinstance(s.ptr, ir.Alloca):
            self.acc_local(s.ptr, g)
        elif self.differentiable(s.ptr):
            self.emit(ir.AtomicRMW(op="add", ptr=self.grad_ptr(s.ptr), value=g, type=g.type, loc=s.loc))

    def _store(self, s: ir.Store) -> None:
        if isinstance(s.ptr, ir.Alloca) and s.ptr in self._owner(s.ptr).local_adj:
            slot = self._owner(s.ptr).local_adj[s.ptr]
            self.acc(s.value, self.emit(ir.Load(ptr=slot, type=slot.var_type)))
            self.emit(ir.Store(ptr=slot, value=self.const(0, slot.var_type)))
        elif self.differentiable(s.ptr):  # y[I] = v: v_bar += y_bar[I]; y_bar[I] = 0
            gp = self.grad_ptr(s.ptr)
            t = s.value.type
            if self.active(s.value):
                self.acc(s.value, self.emit(ir.Load(ptr=gp, type=t, loc=s.loc)))
            self.emit(ir.Store(ptr=self.grad_ptr(s.ptr), value=self.const(0, t), loc=s.loc))

    def _atomic(self, s: ir.AtomicRMW) -> None:
        if isinstance(s.ptr, ir.Alloca):  # a += v on a local: v_bar += a_bar; then the old value's adjoint
            slot = self._owner(s.ptr).local_adj.get(s.ptr)
            if slot is not None and s.op in ("add", "sub"):
                g = self.emit(ir.Load(ptr=slot, type=slot.var_type))
                self.acc(s.value, g if s.op == "add" else self.un("neg", g))
            elif slot is not None:
                raise QuadrantsCompilationError(f"atomic {s.op} on a float local cannot be differentiated", s.loc)
            old = self.adjoint(s)
            if old is not None:
                self.acc_local(s.ptr, old)
        elif self.differentiable(s.ptr):  # y[I] += v: v_bar += y_bar[I]
            if self.active(s.value):
                g = self.emit(ir.Load(ptr=self.grad_ptr(s.ptr), type=s.value.type, loc=s.loc))
                self.acc(s.value, g if s.op == "add" else self.un("neg", g))

    # ---- adjoints and forward values --------------------------------------------------------------------

    def differentiable(self, ptr: ir.Value) -> bool:
        """A pointer into an array that has a gradient, of a real element type."""
        return isinstance(ptr, ir.ExtPtr) and ptr.arr in self.grads and _is_float(ptr.type.pointee)  # type: ignore[union-attr]

    def grad_ptr(self, ptr: ir.Value) -> ir.ExtPtr:
        assert isinstance(ptr, ir.ExtPtr)
        indices = tuple(self.primal(i) for i in ptr.indices)
        return self.emit(ir.ExtPtr(arr=self.grads[ptr.arr], indices=indices, elem=ptr.elem, site=ptr.site,
                                   type=ptr.type, loc=ptr.loc))  # fmt: skip

    def active(self, v: Any) -> bool:
        """Whether `v` can carry a gradient: a float value that is not a constant or a kernel argument."""
        return isinstance(v, ir.Value) and _is_float(v.type) and not isinstance(v, (ir.Const, ir.Arg))

    def _owner(self, v: ir.Value) -> AdjointBuilder:
        """The builder whose body defines `v` (the outermost for values defined outside every body): it keeps
        `v`'s adjoint and spill locals, zeroed where `v` is defined."""
        b = self
        while b.parent is not None and v not in b.defined:
            b = b.parent
        return b

    def adjoint(self, v: ir.Value) -> ir.Value | None:
        slot = self._owner(v).adj.get(v)
        return None if slot is None else self.emit(ir.Load(ptr=slot, type=slot.var_type))

    def acc(self, v: ir.Value, contribution: ir.Value) -> None:
        if self.active(v):
            owner = self._owner(v)
            self._add_into(owner._slot(owner.adj, v, v.type), contribution)  # type: ignore[arg-type]

    def acc_local(self, var: ir.Alloca, contribution: ir.Value) -> None:
        if _is_float(var.var_type):
            owner = self._owner(var)
            self._add_into(owner._slot(owner.local_adj, var, var.var_type), contribution)

    def _add_into(self, slot: ir.Alloca, contribution: ir.Value) -> None:
        old = self.emit(ir.Load(ptr=slot, type=slot.var_type))
        self.emit(ir.Store(ptr=slot, value=self.bin("add", old, contribution)))

    def _slot(self, table: dict[ir.Value, ir.Alloca], key: ir.Value, t: PrimitiveType) -> ir.Alloca:
        slot = table.get(key)
        if slot is None:
            slot = table[key] = self._local(t, "adj")
        return slot

    def _local(self, t: PrimitiveType, name: str) -> ir.Alloca:
        """A local at the top of the body, zeroed there (allocas are not cleared per iteration)."""
        slot = ir.Alloca(var_type=t, name=name, type=ir.PtrType(t))
        zero = ir.Const(value=False if t is u1 else 0, type=t)
        self.prologue += [slot, zero, ir.Store(ptr=slot, value=zero)]
        return slot

    def primal(self, v: Any) -> Any:
        """Forward value `v` where the sweep is: itself, or a reload of its spill if an `if` branch defined it."""
        if not isinstance(v, ir.Value):
            return v
        owner = self._owner(v)
        if v not in owner.nested:
            return v
        slot = owner.spills.get(v)
        if slot is None:
            slot = owner.spills[v] = owner._local(v.type, "spill")  # type: ignore[arg-type]
        return self.emit(ir.Load(ptr=slot, type=v.type))

    # ---- emitting ---------------------------------------------------------------------------------------

    def emit(self, s: Any) -> Any:
        self.cur.stmts.append(s)
        return s



def _where(s: ir.Stmt) -> str:
    """`file:line:col: ` of a statement, for the errors that Quadrants raises as runtime errors."""
    return f"{s.loc.short()}: " if s.loc is not None else ""


def _clone_block(block: ir.Block, mapping: dict[ir.Value, ir.Value]) -> ir.Block:
    """A copy of `block` whose statements use each other's copies (`mapping` grows as values are copied)."""
    out = []
    for s in block.stmts:
        if s in mapping:  # given its replacement (a reversed loop's coordinates)
            continue
        c = copy.copy(s)
        c.replace_operands(mapping)  # type: ignore[arg-type]
        if isinstance(c, ir.LoopCoord) and c.loop in mapping:
            c.loop = mapping[c.loop]  # type: ignore[assignment]
        if isinstance(s, ir.Value):
            mapping[s] = c  # type: ignore[assignment]
        if isinstance(c, ir.If) and isinstance(s, ir.If):
            c.then, c.orelse = _clone_block(s.then, mapping), _clone_block(s.orelse, mapping)
        elif isinstance(c, (ir.RangeFor, ir.While)) and isinstance(s, (ir.RangeFor, ir.While)):
            c.body = _clone_block(s.body, mapping)
        out.append(c)
    return ir.Block(out)


def _uses(block: ir.Block) -> dict[ir.Value, list[ir.Stmt]]:
    """The statements of `block` (nested blocks included) that use each value."""
    out: dict[ir.Value, list[ir.Stmt]] = {}
    for s in ir.walk(block):
        for v in s.operands():
            out.setdefault(v, []).append(s)
    return out


def _accumulates_only(var: ir.Alloca, body: ir.Block, uses: dict[ir.Value, list[ir.Stmt]]) -> bool:
    """Whether every access to local `var` in `body` is an accumulation `var = var +/- v` (through float casts:
    `s += x` of an f32 `s` and an f64 `x`), or an atomic add whose old value is unused; the loaded value used by
    nothing else."""
    for s in uses.get(var, []):
        if isinstance(s, ir.AtomicRMW):
            if s.op not in ("add", "sub") or uses.get(s):
                return False
        elif isinstance(s, ir.Store):
            b = _up(s.value)
            if not (isinstance(b, ir.Binary) and b.op in ("add", "sub") and _down(b, uses) is s.value):
                return False
            if uses.get(s.value) != [s] or b.lhs is b.rhs:
                return False
            own = [x for x in ((b.lhs, b.rhs) if b.op == "add" else (b.lhs,)) if _loads(x, var, uses, b)]
            if len(own) != 1:
                return False
        elif isinstance(s, ir.Load):
            consumers = uses.get(_down(s, uses), [])
            if len(consumers) != 1 or not isinstance(consumers[0], ir.Binary):
                return False
            stores = uses.get(_down(consumers[0], uses), [])
            if not (len(stores) == 1 and isinstance(stores[0], ir.Store) and stores[0].ptr is var):
                return False
        else:
            return False
    return True


def _up(v: ir.Value) -> ir.Value:
    """`v` without the numeric casts around it."""
    while isinstance(v, ir.Cast) and not v.bitcast:
        v = v.value
    return v


def _down(v: ir.Value, uses: dict[ir.Value, list[ir.Stmt]]) -> ir.Value:
    """The last of the casts that use `v` alone, one after another (`v` itself if none)."""
    while True:
        us = uses.get(v, [])
        if len(us) == 1 and isinstance(us[0], ir.Cast) and not us[0].bitcast:
            v = us[0]
        else:
            return v


def _loads(x: ir.Value, var: ir.Alloca, uses: dict[ir.Value, list[ir.Stmt]], consumer: ir.Stmt) -> bool:
    """Whether operand `x` of `consumer` is a load of `var` (through casts used by nothing else)."""
    load = _up(x)
    return isinstance(load, ir.Load) and load.ptr is var and _down(load, uses) is x and uses.get(x) == [consumer]
