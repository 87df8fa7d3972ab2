"""The frontend's state while it translates one kernel: what every construct reads and writes.

`FrontendBuilder` holds the kernel being built, the IR builder (`b`), the typed operations (`ops`), the stack of
frames (the kernel and the `qd.func`s inlined into it, each with its scopes), the loop context and what the
translation records for the caches (captures, compile-time calls, funcs seen, fields used). Its `expr(node)` and
`stmt(node)` hand a node to the construct function the dispatcher's tables name for its class (the tables are
given at construction: this module imports no construct module, so any construct module can import it).

Consumes a kernel's `ir.Kernel` shell and `FrontendOptions`; the construct modules (`statements.py`,
`expressions.py`, `calls.py`, `loops.py`, ...) are free functions taking the builder first.
"""

from __future__ import annotations

import ast
import builtins
from collections.abc import Callable, Mapping
from typing import Any

from quadrants._logging import warn
from quadrants.errors import QuadrantsCompilationError, QuadrantsNameError, QuadrantsSyntaxError, SourceLoc
from quadrants.frontend.graph_state import GraphState
from quadrants.frontend.ops import TypedOps
from quadrants.frontend.records import Capture, FrontendOptions, StaticCall
from quadrants.frontend.scope import MISSING, Frame, MatVar, Scope, Var
from quadrants.frontend.source import FunctionSource
from quadrants.frontend.values import Matrix, matrix_dtype
from quadrants.ir import nodes as ir
from quadrants.ir.builder import Builder
from quadrants.types.dtypes import PrimitiveType

StmtFn = Callable[["FrontendBuilder", Any], None]
ExprFn = Callable[["FrontendBuilder", Any], Any]



class StaticJump(Exception):
    """A `break`/`continue` of a static (unrolled) for loop, under static conditions only: unwinds the
    statements of the current iteration up to `loops.static_for`, which stops unrolling or goes on."""

    def __init__(self, word: str) -> None:
        super().__init__(word)
        self.word = word

class FrontendBuilder:
    def __init__(
        self,
        kernel: ir.Kernel,
        options: FrontendOptions,
        returns: tuple[Any, ...],
        statements: Mapping[type, StmtFn],
        expressions: Mapping[type, ExprFn],
    ) -> None:
        self.kernel = kernel
        self.options = options
        self.statements = statements  # AST statement class -> its construct function (dispatch.py)
        self.expressions = expressions
        self.b = Builder(kernel.body)
        self.ops = TypedOps(self.b, options.default_ip, options.default_fp)
        self.frames: list[Frame] = []
        self.runtime_depth = 0  # enclosing runtime if/loop bodies; 0 is the kernel's top level
        self.static_loop_depths: list[int] = []  # runtime_depth at each enclosing static for (break/continue)
        self.loops: list[str] = []  # "parallel", "serial", "while", "static" from outer to inner
        # compile-time `if`s folded around the current top level (statements.transform_if): a parallel loop there
        # ("parallel-folded") that breaks becomes serial, as under the runtime `if` Quadrants 1.3.3 compiles
        self.folded_ifs = 0
        self.loop_config: dict[str, Any] | None = None  # qd.loop_config(...) for the next loop
        self.parallel_id = 0  # id of the enclosing parallel loop (0: none)
        self.next_parallel_id = 0
        self.mesh_patches: list[Any] = []  # the patch of each enclosing mesh-for's element (frontend/mesh.py)
        self.captures: list[Capture] = []
        self.static_calls: list[StaticCall] = []
        # paths in the specialization of the struct parameters' members the code reads (frontend/values.py Struct)
        self.member_reads: set[tuple[Any, ...]] = set()
        self.funcs_seen: dict[int, FunctionSource] = {}
        self.fields_used: dict[tuple[Any, ...], ir.GlobalNd] = {}
        self.components: dict[int, tuple[ir.Value, ...]] = {}  # a matrix field placed by component: theirs
        self.clamped: set[int] = set()  # ids of the ndarray arguments declared boundary="clamp"
        self.field_offsets: dict[int, tuple[int, ...]] = {}  # id of a field's handle -> its domain offset
        # qd.stop_grad(x) in an adjoint: id of the IR block it was called in -> field handle -> the alias its
        # element pointers use there and in nested blocks (not in `kernel.grads`: no adjoint; ndarrays.py)
        self.stop_grads: dict[int, dict[ir.Value, ir.Value]] = {}
        self.returns = returns  # the kernel's declared results: dtypes or MatrixTypes
        self.global_insert_pos = 0  # where field handles go: after the arguments, before everything else
        self.globals_block = kernel.body  # the block they go in (a real function's body while it is translated)
        self.real_funcs: dict[Any, Any] = {}  # signature -> the real function translated for it (real_funcs.py)
        self.graph: GraphState | None = None  # the graph constructs' state (frontend/graph.py)

    # ---- locations and errors -------------------------------------------------------------------------

    @property
    def frame(self) -> Frame:
        return self.frames[-1]

    def loc(self, node: ast.AST) -> SourceLoc:
        return self.frame.source.loc(node)

    def error(self, node: ast.AST, message: str, cls: type = QuadrantsSyntaxError) -> QuadrantsCompilationError:
        return cls(message, self.loc(node))  # type: ignore[no-any-return]

    def site(self, kind: str, loc: SourceLoc, detail: str) -> ir.Site:
        """A runtime check site, located relative to the kernel or func it is in (a kernel loaded from a cache
        reports the line where that code is now)."""
        fr = self.frame
        fn = fr.source.fn
        owner = "" if fr.is_kernel else f"{fn.__module__}:{fn.__qualname__}"
        return ir.Site(kind, loc, detail, owner, fn.__code__.co_firstlineno)

    # ---- dispatch -------------------------------------------------------------------------------------

    def stmt(self, node: ast.stmt) -> None:
        fn = self.statements.get(type(node))
        if fn is None:
            raise self.error(node, unsupported_node(node))
        try:
            with self.b.at(self.loc(node)):
                fn(self, node)
        except QuadrantsCompilationError as e:
            if e.loc is None:
                raise type(e)(e.message, self.loc(node)) from None
            raise

    def stmts(self, body: list[ast.stmt]) -> None:
        for node in body:
            if self.frame.terminated:
                return
            self.stmt(node)

    def expr(self, node: ast.expr) -> Any:
        fn = self.expressions.get(type(node))
        if fn is None:
            raise self.error(node, unsupported_node(node))
        try:
            return fn(self, node)
        except QuadrantsCompilationError as e:
            if e.loc is None:
                raise type(e)(e.message, self.loc(node)) from None
            raise

    # ---- scopes ---------------------------------------------------------------------------------------

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

    # ---- names ----------------------------------------------------------------------------------------

    def lookup(self, name: str, node: ast.AST, static: bool = False) -> Any:
        """The binding of `name`: a local, else a closure, global or builtin (a capture is recorded for the
        closure and global ones: fastcache re-checks them)."""
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
            if type(v) is float and self.options.raise_on_templated_floats:  # compiled in: each value recompiles
                raise self.error(node, f"{where} variable {name!r} is a float ({v!r}), compiled into the kernel; "
                                 "raise_on_templated_floats=True refuses that: pass it as an argument",
                                 QuadrantsCompilationError)  # fmt: skip
            self.captures.append(Capture(name, v, where, fr.source.fn, self.loc(node), static))
        return v

    def record_class_read(self, cls: type, name: str, value: Any) -> None:
        """A class attribute read at compile time: a capture fastcache re-checks through the class's name."""
        fr = self.frame
        self.captures.append(Capture(f"{cls.__module__}:{cls.__qualname__}", value, "class", fr.source.fn, None,
                                     chain=(name,)))  # fmt: skip

    # ---- local variables ------------------------------------------------------------------------------

    def new_var(self, name: str, value: ir.Value, dtype: PrimitiveType) -> Var:
        """A local variable of `dtype` holding `value` (not bound to a name)."""
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

    def new_matrix_var(self, name: str, value: Matrix) -> MatVar:
        """A vector/matrix local variable holding `value` (not bound to a name)."""
        dtype = matrix_dtype(value)
        return MatVar(value.shape, [self.new_var(f"{name}[{k}]", e, dtype) for k, e in enumerate(value.elements)])

    def define_matrix_var(self, name: str, value: Matrix) -> MatVar:
        mv = self.frame.scope.names[name] = self.new_matrix_var(name, value)
        return mv

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


def unsupported_node(node: ast.AST) -> str:
    """The error for Python the kernel language has no rule for (Quadrants' words first); `qd audit` reports the
    same text without compiling."""
    name = type(node).__name__
    what = "statements" if isinstance(node, ast.stmt) else "expressions"
    return f'Unsupported node "{name}": {name} {what} are not supported in kernels'
