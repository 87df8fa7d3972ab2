"""The AST visitor: one method per supported Python construct, statements here, expressions, calls and loops
in the mixins it is built from.

Consumes a kernel's `FunctionSource` and its specialized parameters; produces an `ir.Kernel`. Anything the
kernel language does not support raises a Quadrants error carrying the node's `file:line:col`.
"""

from __future__ import annotations

import ast
import builtins
from typing import Any

from quadrants._logging import warn
from quadrants.errors import (
    QuadrantsCompilationError,
    QuadrantsNameError,
    QuadrantsSyntaxError,
    QuadrantsTypeError,
    SourceLoc,
)
from quadrants.frontend.calls import CallMixin
from quadrants.frontend.expressions import ExprMixin
from quadrants.frontend.loops import LoopMixin
from quadrants.frontend.lvalues import LValueMixin, MatrixRef
from quadrants.frontend.matrix_ops import MatrixMixin
from quadrants.frontend.ops import TypedOps, is_static_number
from quadrants.frontend.records import Capture, FrontendOptions, FrontendResult, ParamSpec, StaticCall
from quadrants.frontend.scope import MISSING, Alias, Fixed, Frame, MatVar, Scope, Var, closure_of
from quadrants.frontend.source import FunctionSource
from quadrants.frontend.values import Matrix, Struct
from quadrants.ir import nodes as ir
from quadrants.ir.builder import Builder
from quadrants.types.compound import MatrixType
from quadrants.types.dtypes import PrimitiveType, to_dtype


def build_kernel(
    source: FunctionSource,
    name: str,
    params: list[ParamSpec],
    returns: tuple[Any, ...],
    options: FrontendOptions,
) -> FrontendResult:
    """`returns`: per declared result, a dtype or a MatrixType of a concrete dtype."""
    flat: list[PrimitiveType] = []
    shapes: list[tuple[int, ...]] = []
    for r in returns:
        if isinstance(r, MatrixType):
            flat.extend([r.dtype] * r.size)
            shapes.append(r.shape)
        else:
            flat.append(r)
            shapes.append(())
    kernel = ir.Kernel(name=name, params=runtime_params(params), ret_types=tuple(flat), body=ir.Block(),
                       ret_shapes=tuple(shapes))  # fmt: skip
    v = Visitor(kernel, options)
    v.returns = returns
    v.translate_kernel(source, params)
    return FrontendResult(
        kernel=kernel, captures=v.captures, funcs=list(v.funcs_seen.values()), static_calls=v.static_calls
    )


def runtime_params(params: list[ParamSpec], prefix: str = "") -> list[ir.Param]:
    """The runtime parameters of a specialization, depth first: the native function's arguments."""
    out: list[ir.Param] = []
    for p in params:
        name = prefix + p.name
        if p.kind in ("scalar", "ndarray"):
            out.append(ir.Param(name, p.type))
        elif p.kind == "matrix":
            shape, dtype = p.type
            out.extend(ir.Param(f"{name}[{k}]", dtype) for k in range(_size(shape)))
        elif p.kind == "struct":
            out.extend(runtime_params(list(p.members), name + "."))
    return out


def _size(shape: tuple[int, ...]) -> int:
    n = 1
    for s in shape:
        n *= s
    return n


class Visitor(ExprMixin, CallMixin, LoopMixin, MatrixMixin, LValueMixin):
    def __init__(self, kernel: ir.Kernel, options: FrontendOptions) -> None:
        self.kernel = kernel
        self.options = options
        self.b = Builder(kernel.body)
        self.ops = TypedOps(self.b, options.default_ip, options.default_fp)
        self.frames: list[Frame] = []
        self.runtime_depth = 0  # enclosing runtime if/loop bodies; 0 is the kernel's top level
        self.loops: list[str] = []  # "parallel", "serial", "while", "static" from outer to inner
        self.loop_config: dict[str, Any] | None = None  # qd.loop_config(...) for the next loop
        self.parallel_id = 0  # id of the enclosing parallel loop (0: none)
        self._next_parallel_id = 0
        self.captures: list[Capture] = []
        self.static_calls: list[StaticCall] = []
        self.funcs_seen: dict[int, FunctionSource] = {}
        self.fields_used: dict[tuple[int, int], ir.GlobalNd] = {}
        self.returns: tuple[Any, ...] = ()
        self.global_insert_pos = 0  # where field handles go: after the arguments, before everything else

    # ---- infrastructure ---------------------------------------------------------------------------------

    @property
    def frame(self) -> Frame:
        return self.frames[-1]

    def loc(self, node: ast.AST) -> SourceLoc:
        return self.frame.source.loc(node)

    def error(self, node: ast.AST, message: str, cls: type = QuadrantsSyntaxError) -> QuadrantsCompilationError:
        return cls(message, self.loc(node))  # type: ignore[no-any-return]

    def stmt(self, node: ast.stmt) -> None:
        method = getattr(self, "visit_" + type(node).__name__, None)
        if method is None:
            raise self.error(node, f"{type(node).__name__} statements are not supported in kernels")
        try:
            with self.b.at(self.loc(node)):
                method(node)
        except QuadrantsCompilationError as e:
            if e.loc is None:
                raise type(e)(e.message, self.loc(node)) from None
            raise

    def stmts(self, body: list[ast.stmt]) -> None:
        for node in body:
            if self.frame.terminated:
                return
            self.stmt(node)

    def new_scope(self) -> Scope:
        self.frame.scope = Scope(parent=self.frame.scope)
        return self.frame.scope

    def pop_scope(self, scope: Scope) -> None:
        assert scope.parent is not None
        self.frame.scope = scope.parent

    def runtime_block(self, block: ir.Block, body: list[ast.stmt]) -> None:
        """Translate `body` into `block` as a nested runtime scope."""
        scope = self.new_scope()
        self.runtime_depth += 1
        try:
            with self.b.into(block):
                self.stmts(body)
        finally:
            self.runtime_depth -= 1
            self.pop_scope(scope)

    # ---- names ------------------------------------------------------------------------------------------

    def lookup(self, name: str, node: ast.AST, static: bool = False) -> Any:
        _, v = self.frame.scope.find(name)
        if v is not MISSING:
            return v
        fr = self.frame
        where = "closure"
        if name in fr.closure:
            v = fr.closure[name]
        elif name in fr.globals:
            v, where = fr.globals[name], "global"
        elif hasattr(builtins, name):
            v, where = getattr(builtins, name), "builtin"
        else:
            raise self.error(node, f'Name "{name}" is not defined', QuadrantsNameError)
        if where != "builtin":
            self.captures.append(Capture(name, v, where, fr.source.fn, self.loc(node), static))
        return v

    def read(self, binding: Any) -> Any:
        """The value a name's binding has when read in an expression."""
        if isinstance(binding, Var):
            return self.b.load(binding.ptr)
        if isinstance(binding, MatVar):
            return Matrix(binding.shape, [self.b.load(v.ptr) for v in binding.vars])
        if isinstance(binding, Fixed):
            return binding.value
        if isinstance(binding, Alias):
            return self.load_ref(binding.ref, binding.node)
        return binding

    def define_matrix_var(self, name: str, value: Matrix, node: ast.AST) -> MatVar:
        dtype = self.matrix_dtype(value)
        mv = MatVar(value.shape, [self._new_var(f"{name}[{k}]", e, dtype) for k, e in enumerate(value.elements)])
        self.frame.scope.names[name] = mv
        return mv

    def _new_var(self, name: str, value: ir.Value, dtype: PrimitiveType) -> Var:
        ptr = self.b.alloca(dtype, name)
        self.b.store(ptr, self.b.cast(value, dtype))
        return Var(ptr=ptr, dtype=dtype, name=name, parallel_id=self.parallel_id)

    def define_var(self, name: str, value: Any, node: ast.AST, dtype: PrimitiveType | None = None) -> Var:
        loc = self.loc(node)
        if dtype is None:
            v = self.ops.value(value, loc)
            assert isinstance(v.type, PrimitiveType)
            dtype = v.type
        else:
            v = self.ops.cast(value, dtype, loc)
        ptr = self.b.alloca(dtype, name)
        self.b.store(ptr, v)
        var = Var(ptr=ptr, dtype=dtype, name=name, parallel_id=self.parallel_id)
        self.frame.scope.names[name] = var
        return var

    def assign_var(self, var: Var, value: Any, node: ast.AST) -> None:
        v = self.ops.value(value, self.loc(node))
        assert isinstance(v.type, PrimitiveType)
        if v.type.is_float and not var.dtype.is_float:
            warn(
                f"{self.loc(node).short()}: assigning a {v.type} value to local variable {var.name!r} of type "
                f"{var.dtype} truncates it (a local's type is fixed by its first assignment)",
                tag="frontend",
            )
        self.b.store(var.ptr, self.b.cast(v, var.dtype))

    def assign_name(self, name: str, value: Any, node: ast.AST, static: bool = False) -> None:
        scope, binding = self.frame.scope.find(name)
        if isinstance(binding, Fixed):
            raise self.error(node, f"cannot assign to {binding.what} {name!r}")
        if isinstance(binding, Var) and not static:
            self.store_ref(self.var_ref(binding), value, node)
            return
        if isinstance(binding, MatVar) and not static:
            self.store_ref(MatrixRef(binding.shape, [self.var_ref(v) for v in binding.vars]), value, node)
            return
        if isinstance(binding, Alias):
            if static:
                raise self.error(node, f"cannot bind a compile-time value to {name!r}, a reference parameter")
            self.store_ref(binding.ref, value, node)
            return
        if static or not _becomes_variable(value):
            (scope or self.frame.scope).names[name] = value
            return
        m = self.as_matrix(value, node)
        if m is not None:
            self.define_matrix_var(name, m, node)
        else:
            self.define_var(name, value, node)

    # ---- entry points -----------------------------------------------------------------------------------

    def translate_kernel(self, source: FunctionSource, params: list[ParamSpec]) -> None:
        fr = Frame(source=source, scope=Scope(), is_kernel=True, entry_depth=0, closure=closure_of(source.fn))
        self.frames.append(fr)
        args = source.tree.args
        if args.vararg or args.kwarg or args.kwonlyargs:
            raise self.error(source.tree, "kernels take positional parameters only (no *args, **kwargs)")
        counter = [0]
        for p in params:
            fr.scope.names[p.name] = self._bind_param(p, p.name, counter, source.loc(source.tree))
        self.global_insert_pos = len(self.kernel.body.stmts)
        self.new_scope()
        self.stmts(_strip_docstring(source.tree.body))
        self.frames.pop()

    def _bind_param(self, p: ParamSpec, path: str, counter: list[int], loc: SourceLoc) -> Any:
        """What a kernel parameter's name means inside the kernel; emits its Arg statements in ABI order."""

        def arg(t: Any, name: str) -> ir.Arg:
            a = self.b.emit(ir.Arg(index=counter[0], name=name, type=t, loc=loc))
            counter[0] += 1
            return a

        if p.kind == "template":
            return p.value
        if p.kind in ("scalar", "ndarray"):
            return Fixed(arg(p.type, path), "kernel argument")
        if p.kind == "matrix":
            shape, dtype = p.type
            return Fixed(Matrix(shape, [arg(dtype, f"{path}[{k}]") for k in range(_size(shape))]), "kernel argument")
        members = {m.name: self._bind_param(m, f"{path}.{m.name}", counter, loc) for m in p.members}
        return Struct(cls=p.cls, members=members, obj=p.obj, on_class_read=self.record_class_read)

    def site(self, kind: str, loc: SourceLoc, detail: str) -> ir.Site:
        """A runtime check site, located relative to the kernel or func it is in (a kernel loaded from a cache
        reports the line where that code is now)."""
        fr = self.frame
        fn = fr.source.fn
        owner = "" if fr.is_kernel else f"{fn.__module__}:{fn.__qualname__}"
        return ir.Site(kind, loc, detail, owner, fn.__code__.co_firstlineno)

    def record_class_read(self, cls: type, name: str, value: Any) -> None:
        """A class attribute read at compile time: a capture fastcache re-checks through the class's name."""
        fr = self.frame
        self.captures.append(Capture(f"{cls.__module__}:{cls.__qualname__}", value, "class", fr.source.fn, None,
                                     chain=(name,)))  # fmt: skip

    # ---- simple statements ------------------------------------------------------------------------------

    def visit_Pass(self, node: ast.Pass) -> None:
        pass

    def visit_Expr(self, node: ast.Expr) -> None:
        if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            return  # a docstring or a string used as a comment
        self.expr(node.value)

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        raise self.error(node, "nested function definitions are not supported in kernels; use a qd.func")

    def visit_Return(self, node: ast.Return) -> None:
        fr = self.frame
        if self.runtime_depth != fr.entry_depth:
            what = "kernel" if fr.is_kernel else "qd.func"
            raise self.error(node, f"Return inside non-static if/for is not supported (a return inside a runtime "
                                   f"if/for/while of a {what})")  # fmt: skip
        value = self.expr(node.value) if node.value is not None else None
        if fr.is_kernel:
            self._kernel_return(value, node)
        else:
            fr.returned = self._func_return_value(value, node)
        fr.terminated = True

    def _kernel_return(self, value: Any, node: ast.Return) -> None:
        rets = self.returns
        values = list(value) if isinstance(value, (tuple, list)) and len(rets) != 1 else [value]
        if value is None:
            values = []
        if len(values) != len(rets):
            raise self.error(node, f"kernel returns {len(values)} value(s) but its annotation declares {len(rets)}")
        loc = self.loc(node)
        out: list[ir.Value] = []
        for v, t in zip(values, rets):
            if isinstance(t, MatrixType):
                m = self.as_matrix(v, node)
                if m is None or m.shape != t.shape:
                    got = m.shape if m is not None else "a scalar"
                    raise self.error(node, f"kernel is annotated to return {t!r} but returns {got}", QuadrantsTypeError)
                out.extend(self.ops.cast(e, t.dtype, loc) for e in m.elements)
            else:
                if self.as_matrix(v, node) is not None:
                    raise self.error(
                        node, f"kernel is annotated to return {t} but returns a vector/matrix", QuadrantsTypeError
                    )
                out.append(self.ops.cast(v, t, loc))
        self.b.emit(ir.Return(values=tuple(out)))

    def _func_return_value(self, value: Any, node: ast.Return) -> Any:
        ann = self.frame.return_annotation
        if ann is None or value is None:
            return value
        loc = self.loc(node)
        if isinstance(ann, tuple):
            if not isinstance(value, (tuple, list)) or len(value) != len(ann):
                raise self.error(node, f"qd.func returns {value!r} but is annotated -> {ann}")
            return tuple(self.ops.cast(v, t, loc) if t is not None else v for v, t in zip(value, ann))
        return self.ops.cast(value, ann, loc)

    def visit_Assert(self, node: ast.Assert) -> None:
        cond = self.expr(node.test)
        if not isinstance(cond, ir.Value):
            if not cond:
                msg = self.expr(node.msg) if node.msg is not None else "assertion failed"
                raise self.error(node, f"static assertion failed: {msg}", QuadrantsCompilationError)
            return
        if not self.options.debug:
            return
        msg = ""
        if node.msg is not None:
            m = self.expr(node.msg)
            msg = m if isinstance(m, str) else ast.unparse(node.msg)
        site = len(self.kernel.sites)
        self.kernel.sites.append(self.site("assert", self.loc(node), msg or ast.unparse(node.test)))
        self.b.emit(ir.Assert(cond=self.ops.cond(cond, self.loc(node)), site=site))

    # ---- assignment -------------------------------------------------------------------------------------

    def visit_Assign(self, node: ast.Assign) -> None:
        static = _is_static_call(node.value, self)
        value = self.expr(node.value)
        for target in node.targets:
            self.assign(target, value, node, static)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        if not isinstance(node.target, ast.Name):
            raise self.error(node, "annotated assignment needs a plain name")
        dtype = to_dtype(self.static_eval(node.annotation), self.options.default_ip, self.options.default_fp)
        value = self.expr(node.value) if node.value is not None else 0
        _, binding = self.frame.scope.find(node.target.id)
        if isinstance(binding, Var):
            self.assign_var(binding, value, node)
        else:
            self.define_var(node.target.id, value, node, dtype)

    def assign(self, target: ast.expr, value: Any, node: ast.AST, static: bool = False) -> None:
        if isinstance(target, ast.Name):
            self.assign_name(target.id, value, target, static)
        elif isinstance(target, (ast.Tuple, ast.List)):
            items = self.unpack(value, len(target.elts), target)
            for t, v in zip(target.elts, items):
                self.assign(t, v, node, static)
        else:
            self.assign_target(target, value, target)

    def unpack(self, value: Any, n: int, node: ast.AST) -> list[Any]:
        m = self.as_matrix(value, node) if not isinstance(value, (tuple, list)) else None
        if m is not None:
            value = m.unpack_values()
        if not isinstance(value, (tuple, list)):
            raise self.error(node, f"cannot unpack {type(value).__name__} into {n} names")
        if len(value) != n:
            raise self.error(node, f"cannot unpack {len(value)} values into {n} names")
        return list(value)

    AUG_OPS = {
        ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "truediv", ast.FloorDiv: "floordiv",
        ast.Mod: "mod", ast.Pow: "pow", ast.BitAnd: "and", ast.BitOr: "or", ast.BitXor: "xor",
        ast.LShift: "shl", ast.RShift: "shr", ast.MatMult: "matmul",
    }  # fmt: skip

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        op = self.AUG_OPS.get(type(node.op))
        if op is None:
            raise self.error(node, f"operator {type(node.op).__name__} is not supported")
        value = self.expr(node.value)
        if op == "matmul":
            current = self.expr(node.target)
            self.assign(node.target, self.matmul(current, value, node), node)
            return
        ref = self.resolve_ref(node.target)
        if ref is not None:
            self.augassign_ref(ref, op, value, node)
            return
        # a name bound to a compile-time value: compute and rebind
        assert isinstance(node.target, ast.Name)
        current = self.read(self.lookup(node.target.id, node.target))
        self.assign_name(node.target.id, self.binary(op, current, value, node), node.target)

    # ---- control flow -----------------------------------------------------------------------------------

    def visit_If(self, node: ast.If) -> None:
        if _is_static_call(node.test, self):
            chosen = node.body if self.expr(node.test) else node.orelse
            self.stmts(chosen)
            return
        cond = self.expr(node.test)
        stmt = self.b.emit(ir.If(cond=self.ops.cond(cond, self.loc(node.test))))
        self.runtime_block(stmt.then, node.body)
        if node.orelse:
            self.runtime_block(stmt.orelse, node.orelse)

    def visit_Break(self, node: ast.Break) -> None:
        self._jump(node, ir.Break, "break")

    def visit_Continue(self, node: ast.Continue) -> None:
        self._jump(node, ir.Continue, "continue")

    def _jump(self, node: ast.AST, cls: type, word: str) -> None:
        if not self.loops:
            raise self.error(node, f"'{word}' outside a loop")
        kind = self.loops[-1]
        if kind == "static":
            raise self.error(node, f"You are trying to `{word}` a static `for` loop (qd.static(...)): that is not "
                                   "supported")  # fmt: skip
        if kind == "parallel" and word == "break":
            raise self.error(node, "'break' is not allowed in the outermost (parallel) for loop of a kernel")
        self.b.emit(cls())


def _becomes_variable(value: Any) -> bool:
    """Assigning a runtime scalar or vector, or a Python number, to a new name creates a local variable;
    anything else (ndarrays, tuples, Python objects) binds the name to the object itself."""
    if isinstance(value, ir.Value):
        return isinstance(value.type, PrimitiveType)
    if isinstance(value, Matrix):
        return True
    return is_static_number(value)


def _is_static_call(node: ast.expr, v: Visitor) -> bool:
    return v.is_static_call(node)


def _strip_docstring(body: list[ast.stmt]) -> list[ast.stmt]:
    if body and isinstance(body[0], ast.Expr) and isinstance(getattr(body[0], "value", None), ast.Constant):
        if isinstance(body[0].value.value, str):  # type: ignore[attr-defined]
            return body[1:]
    return body
