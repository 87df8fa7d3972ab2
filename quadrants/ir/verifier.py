"""IR invariants, checked after the frontend and (in tests/ir/test_verifier.py) after every pass.

Consumes an `ir.Kernel`; raises `IRVerifyError` naming the first broken invariant. A failure here is a bug in
the compiler, never in user code: user errors are reported by the frontend with their source location.
"""

from __future__ import annotations

from quadrants.ir import nodes as ir
from quadrants.types.dtypes import PrimitiveType, i32, i64, u1, u32, u64


class IRVerifyError(AssertionError):
    def __init__(self, message: str, stmt: ir.Stmt | None = None) -> None:
        where = f" at {stmt.loc.short()}" if stmt is not None and stmt.loc is not None else ""
        what = f" in {type(stmt).__name__}" if stmt is not None else ""
        super().__init__(f"IR verification failed{what}{where}: {message}")


def verify(kernel: ir.Kernel) -> None:
    """The kernel's body, then each real function's body: a function sees only its own values (and a kernel
    none of a function's), its `Arg`s name its parameters, and its `Return`s may be anywhere in it."""
    _Verifier(kernel).block(kernel.body, depth=0, loops=(), visible=set())
    names = [fn.name for fn in kernel.functions]
    if len(set(names)) != len(names):
        raise IRVerifyError(f"two real functions share a name: {names}")
    for fn in kernel.functions:
        _Verifier(kernel, fn).block(fn.body, depth=0, loops=(), visible=set())


class _Verifier:
    def __init__(self, kernel: ir.Kernel, function: ir.Function | None = None) -> None:
        self.kernel = kernel
        self.function = function  # None: the kernel's body
        self.defined: set[int] = set()

    def block(self, block: ir.Block, depth: int, loops: tuple[ir.Stmt, ...], visible: set[int]) -> None:
        scope = set(visible)
        for s in block.stmts:
            for v in s.operands():
                if id(v) not in scope:
                    raise IRVerifyError(f"operand {type(v).__name__} is not defined before use", s)
            self.check(s, depth, loops)
            if isinstance(s, ir.RangeFor):
                inner = scope | {id(s)}
                self.block(s.body, depth + 1, loops + (s,), inner)
            elif isinstance(s, ir.While):
                self.block(s.body, depth + 1, loops + (s,), scope)
            else:
                for b in s.blocks():
                    self.block(b, depth + 1, loops, scope)
            if isinstance(s, ir.Value):
                if id(s) in self.defined:
                    raise IRVerifyError("value defined twice", s)
                self.defined.add(id(s))
                scope.add(id(s))

    def check(self, s: ir.Stmt, depth: int, loops: tuple[ir.Stmt, ...]) -> None:  # noqa: C901
        if isinstance(s, ir.Binary):
            lt, rt = s.lhs.type, s.rhs.type
            if s.op in ir.CMP_OPS:
                _expect(lt is rt and s.type is u1, f"compare {lt}/{rt} -> {s.type}", s)
            elif s.op in ("shl", "shr", "lshr"):
                _expect(lt is s.type and _integral(rt), f"shift {lt}/{rt} -> {s.type}", s)
            else:
                _expect(lt is s.type and rt is s.type, f"{s.op} {lt}/{rt} -> {s.type}", s)
                if s.op in ir.BIT_OPS:
                    _expect(_integral(s.type), "bitwise op on a float", s)
        elif isinstance(s, ir.Unary):
            if s.op == "lnot":
                _expect(s.type is u1, "lnot must give u1", s)
            elif s.op == "ffs":
                _expect(_integral(s.operand.type) and s.type is i32, "ffs takes an integer and gives an i32", s)
            else:
                _expect(s.operand.type is s.type, f"{s.op} {s.operand.type} -> {s.type}", s)
        elif isinstance(s, ir.Select):
            _expect(s.cond.type is u1 and s.a.type is s.type and s.b.type is s.type, "select types", s)
        elif isinstance(s, (ir.If, ir.Assert)):
            _expect(s.cond.type is u1, f"condition of type {s.cond.type}", s)
            index = getattr(s, "index", None)
            _expect(index is None or _integral(index.type), "non-integer index reported by an assert", s)
            extra = getattr(s, "extra", ())
            _expect(len(extra) <= 2 and all(_integral(v.type) for v in extra), "an assert reports two integers more", s)
        elif isinstance(s, ir.ExtPtr):
            at = s.arr.type
            _expect(isinstance(at, ir.NdType), "extptr of a non-ndarray", s)
            assert isinstance(at, ir.NdType)
            _expect(len(s.indices) == at.ndim, f"{len(s.indices)} indices for {at.ndim} dims", s)
            _expect(all(_integral(i.type) for i in s.indices), "non-integer index", s)
            _expect(len(s.elem) == len(at.elem_shape), "element index rank", s)
            _expect(all(0 <= e < n for e, n in zip(s.elem, at.elem_shape)), "element index range", s)
            _expect(s.type == ir.PtrType(at.dtype), "extptr type", s)
        elif isinstance(s, ir.SNodeOp):
            arr = s.arr
            _expect(isinstance(arr, ir.GlobalNd) and 1 <= s.depth <= len(arr.levels), "snode op off a sparse path", s)
            _expect(s.op in ir.SNODE_OPS and s.type is i32 and len(s.values) == len(s.places), "snode op form", s)
            _expect(all(_integral(i.type) for i in s.indices), "non-integer index", s)
        elif isinstance(s, ir.Load):
            _expect(isinstance(s.ptr.type, ir.PtrType) and s.ptr.type.pointee is s.type, "load type", s)
        elif isinstance(s, ir.Store):
            pt = s.ptr.type
            _expect(isinstance(pt, ir.PtrType) and pt.pointee is s.value.type, "store type", s)
        elif isinstance(s, ir.Addr):
            _expect(isinstance(s.ptr.type, ir.PtrType) and s.type is u64, "addr of a pointer gives a u64", s)
        elif isinstance(s, ir.BitStore):
            _expect(len(s.ptrs) == len(s.values) >= 2, "bit store operands", s)
            words = {_word(p) for p in s.ptrs}
            _expect(len(words) == 1 and None not in words, "a bit store's pointers address one word", s)
            _expect(all(isinstance(p.type, ir.PtrType) and p.type.pointee is v.type for p, v in zip(s.ptrs, s.values)),
                    "bit store types", s)  # fmt: skip
        elif isinstance(s, ir.AtomicRMW):
            pt = s.ptr.type
            _expect(isinstance(pt, ir.PtrType) and pt.pointee is s.value.type is s.type, "atomic type", s)
        elif isinstance(s, ir.RangeFor):
            _expect(_integral(s.begin.type) and _integral(s.end.type), "range bounds must be integers", s)
            if s.parallel:
                # at the top level, or under the serial control flow of graph constructs (frontend/graph.py)
                outside = self.function is None and not any(isinstance(lp, ir.RangeFor) for lp in loops)
                _expect(outside, "a parallel loop must be at the kernel's top level, outside every loop", s)
        elif isinstance(s, ir.LoopCoord):
            _expect(s.loop in loops and 0 <= s.dim < len(s.loop.extents), "loop coordinate outside its loop", s)
        elif isinstance(s, (ir.Break, ir.Continue)):
            _expect(bool(loops), "break/continue outside a loop", s)
            last = loops[-1]
            _expect(not (isinstance(last, ir.RangeFor) and last.parallel and isinstance(s, ir.Break)),
                    "break in a parallel loop", s)  # fmt: skip
        elif isinstance(s, ir.Return):
            if self.function is None:
                _expect(depth == 0, "return must be at the kernel's top level", s)
            want = self.kernel.ret_types if self.function is None else self.function.ret_types
            _expect(tuple(v.type for v in s.values) == want, "return types", s)
        elif isinstance(s, ir.Call):
            self.check_call(s)
        elif isinstance(s, ir.Arg):
            params = self.kernel.params if self.function is None else self.function.params
            _expect(0 <= s.index < len(params) and params[s.index].type == s.type, "argument index or type", s)
        elif isinstance(s, ir.Random):
            _expect(s.type in ir.RANDOM_TYPES, f"random {s.type}", s)
            if s.key is not None:  # bound by passes/random_streams.py
                _expect(s.key.type is u64 and s.counter is not None and s.counter.type is u32, "random key/counter", s)
                _expect(s.index is None or _integral(s.index.type), "random index", s)
        elif isinstance(s, ir.Simt) and s.op == "clock_counter":
            _expect(s.type is i64 and not s.args, "clock_counter is an i64 of no operands", s)
        elif isinstance(s, (ir.SharedArray, ir.Simt)):
            par = [lp for lp in loops if isinstance(lp, ir.RangeFor) and lp.parallel]
            _expect(bool(par) and self.function is None, "a qd.simt value outside a parallel loop", s)
            if isinstance(s, ir.SharedArray):
                at = s.type
                _expect(isinstance(at, ir.NdType) and at.ndim == len(s.shape) and all(n > 0 for n in s.shape),
                        "shared array shape and type", s)  # fmt: skip
            else:
                _expect(s.op in ir.SIMT_OPS and len(s.args) == ir.SIMT_OPS[s.op][0], f"simt {s.op} operands", s)
                if s.op.startswith("shfl"):
                    _expect(str(s.type) in ir.SHUFFLE_TYPES and s.args[1].type is s.type, "shuffle value type", s)
                elif s.op.startswith(("match", "ballot")):
                    _expect(s.type is u32, f"{s.op} gives a u32", s)
        elif isinstance(s, ir.Reduce):
            par = [lp for lp in loops if isinstance(lp, ir.RangeFor) and lp.parallel]
            _expect(bool(par) and 0 <= s.slot < len(par[0].reductions), "reduce outside its loop", s)
            if par:
                _expect(s.value.type is par[0].reductions[s.slot].dtype, "reduce type", s)

    def check_call(self, s: ir.Call) -> None:
        fn = s.func
        _expect(any(f is fn for f in self.kernel.functions), f"call of {fn.name}, not one of the kernel's functions", s)
        _expect(len(s.args) == len(fn.params), f"{len(s.args)} arguments for {len(fn.params)} parameters", s)
        _expect(all(a.type == p.type for a, p in zip(s.args, fn.params)), "argument types", s)
        _expect(tuple(r.type for r in s.results) == tuple(ir.PtrType(t) for t in fn.ret_types), "result types", s)


def _word(p: ir.Value) -> tuple | None:
    """The word a quantized field element's pointer addresses (None for any other pointer)."""
    if not isinstance(p, ir.ExtPtr) or not isinstance(p.arr, ir.GlobalNd) or p.arr.bits is None:
        return None
    a = p.arr
    return (a.region, a.offset, a.terms, a.levels, a.leaf, tuple(id(i) for i in p.indices))


def _integral(t: object) -> bool:
    return isinstance(t, PrimitiveType) and t.is_integral


def _expect(ok: bool, message: str, s: ir.Stmt) -> None:
    if not ok:
        raise IRVerifyError(message, s)
