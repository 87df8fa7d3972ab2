"""The AST visitor: one method per supported Python construct, statements here, expressions, calls and loops
in the mixins it is built from.

Consumes a kernel's `FunctionSource` and its specialized parameters; produces an `ir.Kernel`. Anything the
kernel language does not support raises a Quadrants error carrying the node's `file:line:col`.
"""

from __future__ import annotations

import ast
import builtins
from dataclasses import dataclass, field
from typing import Any

from quadrants._logging import warn
from quadrants.errors import QuadrantsCompilationError, QuadrantsNameError, QuadrantsSyntaxError, SourceLoc
from quadrants.frontend.calls import CallMixin
from quadrants.frontend.expressions import ExprMixin
from quadrants.frontend.loops import LoopMixin
from quadrants.frontend.ops import TypedOps, is_static_number
from quadrants.frontend.scope import MISSING, Fixed, Frame, Scope, Var, closure_of
from quadrants.frontend.source import FunctionSource
from quadrants.ir import nodes as ir
from quadrants.ir.builder import Builder
from quadrants.types.dtypes import PrimitiveType, to_dtype


@dataclass(frozen=True)
class ParamSpec:
    """A kernel parameter after specialization: a runtime scalar, a runtime ndarray, or a template value."""

    name: str
    kind: str  # "scalar", "ndarray" or "template"
    type: Any = None  # PrimitiveType or ir.NdType
    value: Any = None  # the template argument


@dataclass(frozen=True)
class Capture:
    """A name a kernel or func read from outside its own body (closure or module globals)."""

    name: str
    value: Any
    where: str  # "closure", "global" or "builtin"
    func: str  # qualified name of the function that read it
    loc: SourceLoc | None
    static: bool = False  # read inside qd.static(...)


@dataclass
class FrontendOptions:
    default_ip: PrimitiveType
    default_fp: PrimitiveType
    debug: bool = False
    unrolling_limit: int = 32


@dataclass
class FrontendResult:
    kernel: ir.Kernel
    captures: list[Capture] = field(default_factory=list)
    funcs: list[FunctionSource] = field(default_factory=list)  # every qd.func inlined, once each


def build_kernel(
    source: FunctionSource,
    name: str,
    params: list[ParamSpec],
    ret_types: tuple[PrimitiveType, ...],
    options: FrontendOptions,
) -> FrontendResult:
    kernel = ir.Kernel(
        name=name,
        params=[ir.Param(p.name, p.type) for p in params if p.kind != "template"],
        ret_types=ret_types,
        body=ir.Block(),
    )
    v = Visitor(kernel, options)
    v.translate_kernel(source, params)
    return FrontendResult(kernel=kernel, captures=v.captures, funcs=list(v.funcs_seen.values()))


class Visitor(ExprMixin, CallMixin, LoopMixin):
    def __init__(self, kernel: ir.Kernel, options: FrontendOptions) -> None:
        self.kernel = kernel
        self.options = options
        self.b = Builder(kernel.body)
        self.ops = TypedOps(self.b, options.default_ip, options.default_fp)
        self.frames: list[Frame] = []
        self.runtime_depth = 0  # enclosing runtime if/loop bodies; 0 is the kernel's top level
        self.loops: list[str] = []  # "parallel", "serial", "while", "static" from outer to inner
        self.parallel_id = 0  # id of the enclosing parallel loop (0: none)
        self._next_parallel_id = 0
        self.captures: list[Capture] = []
        self.funcs_seen: dict[int, FunctionSource] = {}

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
            self.captures.append(Capture(name, v, where, fr.source.name, self.loc(node), static))
        return v

    def read(self, binding: Any) -> Any:
        """The value a name's binding has when read in an expression."""
        if isinstance(binding, Var):
            return self.b.load(binding.ptr)
        if isinstance(binding, Fixed):
            return binding.value
        return binding

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
            self.assign_var(binding, value, node)
            return
        if static or not _becomes_variable(value):
            (scope or self.frame.scope).names[name] = value
            return
        self.define_var(name, value, node)

    # ---- entry points -----------------------------------------------------------------------------------

    def translate_kernel(self, source: FunctionSource, params: list[ParamSpec]) -> None:
        fr = Frame(source=source, scope=Scope(), is_kernel=True, entry_depth=0, closure=closure_of(source.fn))
        self.frames.append(fr)
        args = source.tree.args
        if args.vararg or args.kwarg or args.kwonlyargs:
            raise self.error(source.tree, "kernels take positional parameters only (no *args, **kwargs)")
        index = 0
        for p in params:
            if p.kind == "template":
                fr.scope.names[p.name] = p.value
                continue
            arg = self.b.emit(ir.Arg(index=index, name=p.name, type=p.type, loc=source.loc(source.tree)))
            index += 1
            fr.scope.names[p.name] = Fixed(arg, "kernel argument")
        self.new_scope()
        self.stmts(_strip_docstring(source.tree.body))
        self.frames.pop()

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
            raise self.error(node, f"return inside a runtime if/for/while of a {what} is not supported")
        value = self.expr(node.value) if node.value is not None else None
        if fr.is_kernel:
            self._kernel_return(value, node)
        else:
            fr.returned = self._func_return_value(value, node)
        fr.terminated = True

    def _kernel_return(self, value: Any, node: ast.Return) -> None:
        rets = self.kernel.ret_types
        values = list(value) if isinstance(value, (tuple, list)) and len(rets) != 1 else [value]
        if value is None:
            values = []
        if len(values) != len(rets):
            raise self.error(node, f"kernel returns {len(values)} value(s) but its annotation declares {len(rets)}")
        loc = self.loc(node)
        out = tuple(self.ops.cast(v, t, loc) for v, t in zip(values, rets))
        self.b.emit(ir.Return(values=out))

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
        self.kernel.sites.append(ir.Site("assert", self.loc(node), msg or ast.unparse(node.test)))
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
        elif isinstance(target, ast.Subscript):
            self.store_subscript(target, value)
        else:
            raise self.error(target, f"cannot assign to {type(target).__name__} in a kernel")

    def unpack(self, value: Any, n: int, node: ast.AST) -> list[Any]:
        if hasattr(value, "unpack_values"):
            value = value.unpack_values()
        if not isinstance(value, (tuple, list)):
            raise self.error(node, f"cannot unpack {type(value).__name__} into {n} names")
        if len(value) != n:
            raise self.error(node, f"cannot unpack {len(value)} values into {n} names")
        return list(value)

    AUG_OPS = {
        ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "truediv", ast.FloorDiv: "floordiv",
        ast.Mod: "mod", ast.Pow: "pow", ast.BitAnd: "and", ast.BitOr: "or", ast.BitXor: "xor",
        ast.LShift: "shl", ast.RShift: "shr",
    }  # fmt: skip
    ATOMIC_AUG = {"add", "sub", "and", "or", "xor"}

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        op = self.AUG_OPS.get(type(node.op))
        if op is None:
            raise self.error(node, f"operator {type(node.op).__name__} is not supported")
        value = self.expr(node.value)
        if isinstance(node.target, ast.Name):
            _, binding = self.frame.scope.find(node.target.id)
            if isinstance(binding, Var):
                shared = self.parallel_id != 0 and binding.parallel_id != self.parallel_id
                if shared and op in self.ATOMIC_AUG:
                    self.atomic(op, binding.ptr, value, self.loc(node))
                else:
                    self.assign_var(binding, self.binary(op, self.b.load(binding.ptr), value, node), node)
                return
            if isinstance(binding, Fixed):
                raise self.error(node, f"cannot assign to {binding.what} {node.target.id!r}")
            current = self.read(self.lookup(node.target.id, node.target))
            self.assign_name(node.target.id, self.binary(op, current, value, node), node.target)
        elif isinstance(node.target, ast.Subscript):
            self.augassign_subscript(node.target, op, value, node)
        else:
            raise self.error(node, f"cannot assign to {type(node.target).__name__} in a kernel")

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
            raise self.error(node, f"'{word}' in a qd.static(...) for loop is not supported")
        if kind == "parallel" and word == "break":
            raise self.error(node, "'break' is not allowed in the outermost (parallel) for loop of a kernel")
        self.b.emit(cls())


def _becomes_variable(value: Any) -> bool:
    """Assigning a runtime scalar or a Python number to a new name creates a local variable; anything else
    (ndarrays, tuples, Python objects) binds the name to the object itself."""
    if isinstance(value, ir.Value):
        return isinstance(value.type, PrimitiveType)
    return is_static_number(value)


def _is_static_call(node: ast.expr, v: Visitor) -> bool:
    if not isinstance(node, ast.Call):
        return False
    try:
        fn = v.static_eval(node.func, record=False)
    except Exception:
        return False
    return getattr(fn, "__qd_intrinsic__", None) == "static"


def _strip_docstring(body: list[ast.stmt]) -> list[ast.stmt]:
    if body and isinstance(body[0], ast.Expr) and isinstance(getattr(body[0], "value", None), ast.Constant):
        if isinstance(body[0].value.value, str):  # type: ignore[attr-defined]
            return body[1:]
    return body
