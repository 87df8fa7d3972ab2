"""Graph kernels' constructs (`@qd.kernel(graph=True)`, lang/graph.py, lang/checkpoint.py) as structured IR.

The constructs keep the kernel's top level where they stand: loops in their bodies stay parallel. What the
CUDA graph machinery of Quadrants does at launch time is ordinary control flow here, in the kernel:

- `while qd.graph.do_while(flag):` is a do-while: `While { body; if flag[()] == 0: break }` (levels nest, and
  sit among other statements, which run once);
- `with qd.graph.parallel_context():` / `with qd.graph.parallel():` run their sections in order (Quadrants runs
  them concurrently; the results are the same), after checking the region's shape as Quadrants does;
- in a `checkpoints=True` kernel, each `with qd.checkpoint(cp_id, yield_on=flag):` and each for-loop directly in
  the kernel's (or a do-while's) body that no checkpoint holds is a stage k, in source order:

      if yielded < 0 and resume <= k:      # (resume: the hidden i32 argument, 0 for a plain call)
          body
          if flag[()] != 0: yielded = k    # (a stage with a flag)

  a do-while's iteration ends with `resume = 0` and leaves the loop once a stage yielded; the kernel returns
  `yielded` as a hidden i32 result (lang/kernel.py turns it into a `qd.GraphStatus`). Statements outside stages
  run on every launch, as in Quadrants.

Consumes the kernel's AST through the builder; records the levels and stages on the `ir.Kernel`.
"""

from __future__ import annotations

import ast
import enum
from typing import Any

from quadrants.errors import QuadrantsCompilationError
from quadrants.frontend import graph_api, loops
from quadrants.frontend.builder import FrontendBuilder
from quadrants.frontend.graph_state import GraphState, kernel_flags
from quadrants.ir import nodes as ir
from quadrants.types.dtypes import i32, u1

RESUME_PARAM = "qd.resume_from"

_BARE_FIX = (
    "every top-level statement of a checkpoint must be inside a for-loop (or another control-flow construct), "
    "so that it runs as part of the checkpoint's stage. Wrap the statement in `for _ in range(1):`:\n\n"
    "    with qd.checkpoint(cp_id, yield_on=flag):\n"
    "        for _ in range(1):\n"
    "            <your statement here>\n"
)


# ---- the kernel ----------------------------------------------------------------------------------------------


def begin_kernel(fb: FrontendBuilder, fn: Any, body: list[ast.stmt], next_arg: int) -> None:
    """Before the kernel's body: its flags, and for a checkpoints kernel the hidden resume argument (index
    `next_arg`, after the user's), the gate locals and the hidden result."""
    graph, checkpoints = kernel_flags(fn)
    st = fb.graph = GraphState(graph=graph, checkpoints=checkpoints)
    check_stream_blocks(fb, body)
    if not checkpoints:
        return
    if fb.returns:
        raise fb.error(fb.frame.source.tree, "a checkpoints=True kernel cannot return values (it returns a GraphStatus)")
    k = fb.kernel
    k.params.append(ir.Param(RESUME_PARAM, i32))
    k.resume_arg = next_arg
    k.ret_types = (*k.ret_types, i32)
    k.ret_shapes = (*k.ret_shapes, ())
    resume = fb.b.emit(ir.Arg(index=next_arg, name=RESUME_PARAM, type=i32))
    st.resume, st.yielded = fb.b.alloca(i32, "qd.resume"), fb.b.alloca(i32, "qd.yielded")
    fb.b.store(st.resume, resume)
    fb.b.store(st.yielded, fb.b.const(-1, i32))
    st.implicit_fors = _implicit_fors(body)


def end_kernel(fb: FrontendBuilder) -> None:
    st = fb.graph
    if st is not None and st.yielded is not None:
        fb.b.emit(ir.Return(values=(fb.b.load(st.yielded),)))


def _implicit_fors(body: list[ast.stmt]) -> set[int]:
    """The for-loops a checkpoints kernel makes stages of: those directly in its body or a do-while's."""
    out: set[int] = set()
    for s in body:
        if isinstance(s, ast.For):
            out.add(id(s))
        elif isinstance(s, ast.While) and isinstance(s.test, ast.Call) and graph_api.matches(s.test.func, "do_while"):
            out |= _implicit_fors(s.body)
    return out


def _state(fb: FrontendBuilder) -> GraphState:
    if fb.graph is None:  # a real function's body, translated on its own
        fb.graph = GraphState()
    return fb.graph


def _intrinsic(fb: FrontendBuilder, node: ast.expr) -> str | None:
    """The construct a call names (`graph_do_while`, `graph_parallel`, `checkpoint`, ...), or None."""
    if not isinstance(node, ast.Call) or not isinstance(node.func, (ast.Name, ast.Attribute)):
        return None
    try:
        callee = fb.expr(node.func)
    except Exception:  # noqa: BLE001 - not a compile-time name: not a construct
        return None
    name = getattr(callee, "__qd_intrinsic__", None)
    return name if isinstance(name, str) else None


# ---- statements: the dispatch table's entries for `for`, `while` and `with` -----------------------------------


def transform_for(fb: FrontendBuilder, node: ast.For) -> None:
    st = _state(fb)
    if id(node) in st.implicit_fors and not st.in_checkpoint:
        _stage(fb, node, None, lambda: loops.transform_for(fb, node))
    else:
        loops.transform_for(fb, node)


def transform_while(fb: FrontendBuilder, node: ast.While) -> None:
    if _intrinsic(fb, node.test) == "graph_do_while":
        _do_while(fb, node)
    else:
        loops.transform_while(fb, node)


def transform_with(fb: FrontendBuilder, node: ast.With) -> None:
    if len(node.items) != 1:
        raise fb.error(node, "'with' in Quadrants kernels only supports a single context manager")
    if node.items[0].optional_vars is not None:
        raise fb.error(node, "'with ... as ...' is not supported in Quadrants kernels")
    call = node.items[0].context_expr
    if not isinstance(call, ast.Call):
        raise fb.error(node, "'with' in Quadrants kernels requires a call expression")
    what = _intrinsic(fb, call)
    if what not in ("checkpoint", "graph_parallel_context", "graph_parallel", "stream_parallel"):
        raise fb.error(node, "'with' in Quadrants kernels only supports qd.stream_parallel(), qd.checkpoint(), "
                             "qd.graph.parallel_context(), or qd.graph.parallel()")  # fmt: skip
    if what == "stream_parallel":
        _stream_block(fb, node, call)
    elif what == "checkpoint":
        _checkpoint(fb, node, call)
    elif what == "graph_parallel_context":
        _region(fb, node, call)
    else:
        _section(fb, node, call)


# ---- qd.graph.do_while ------------------------------------------------------------------------------------------


def _do_while(fb: FrontendBuilder, node: ast.While) -> None:
    test = node.test
    assert isinstance(test, ast.Call)
    st = _state(fb)
    if not st.graph:  # as Quadrants: a flag is a graph's construct
        raise fb.error(test, "qd.graph.do_while / qd.graph_do_while requires @qd.kernel(graph=True)")
    if st.in_section:
        raise fb.error(node, "qd.graph.do_while() cannot appear inside a qd.graph.parallel() section")
    if node.orelse:
        raise fb.error(node, "while qd.graph.do_while(...): ... else is not supported")
    if fb.runtime_depth != fb.folded_ifs:
        raise fb.error(node, "qd.graph.do_while() must be at the kernel top level (or directly in another "
                             "qd.graph.do_while body), not inside a runtime for/if/while")  # fmt: skip
    if len(test.args) != 1 or test.keywords:
        raise fb.error(test, "qd.graph.do_while takes one argument: a 0-d qd.i32 ndarray parameter")
    graph_api.warn_if_deprecated(test.func, "do_while")
    flag = _flag(fb, test.args[0], "qd.graph.do_while(...)")
    k = fb.kernel
    level = len(k.graph_levels)
    k.graph_levels.append(ir.GraphLevel(ast.unparse(test.args[0]), st.level, flag.index))
    loop = fb.b.emit(ir.While())
    scope = fb.new_scope()
    st.levels.append(level)
    try:
        with fb.b.into(loop.body):
            fb.stmts(node.body)
            if st.yielded is not None:
                assert st.resume is not None
                fb.b.store(st.resume, fb.b.const(0, i32))  # a resumed launch skips stages in its first pass only
                _break_if(fb, fb.ops.binary("ge", fb.b.load(st.yielded), 0, fb.b.loc))
            _break_if(fb, fb.ops.binary("eq", _read_flag(fb, flag), 0, fb.b.loc))
    finally:
        st.levels.pop()
        fb.pop_scope(scope)


def _break_if(fb: FrontendBuilder, cond: ir.Value) -> None:
    stop = fb.b.emit(ir.If(cond=cond))
    stop.then.stmts.append(ir.Break(loc=fb.b.loc))


def _flag(fb: FrontendBuilder, node: ast.expr, what: str) -> ir.Arg:
    """A construct's flag: a 0-d i32 ndarray the kernel receives (a parameter, a data_oriented member, a
    dataclass parameter's member)."""
    text = ast.unparse(node)
    try:
        v = fb.expr(node)
    except QuadrantsCompilationError:
        v = None
    t = getattr(v, "type", None)
    if not isinstance(v, ir.Arg) or not isinstance(t, ir.NdType):
        raise fb.error(node, f"{what}: `{text}` does not resolve to an ndarray kernel parameter (pass the flag as a "
                             "0-d qd.i32 ndarray parameter, or a member of one)")  # fmt: skip
    if t.ndim != 0 or t.dtype is not i32 or t.elem_shape:
        raise fb.error(node, f"{what}: `{text}` must be a 0-d qd.i32 ndarray, not {t!r}")
    return v


def _read_flag(fb: FrontendBuilder, flag: ir.Arg) -> ir.Value:
    return fb.b.load(fb.b.emit(ir.ExtPtr(arr=flag, indices=(), type=ir.PtrType(i32))))


# ---- qd.checkpoint --------------------------------------------------------------------------------------------


def _checkpoint(fb: FrontendBuilder, node: ast.With, call: ast.Call) -> None:
    st = _state(fb)
    if st.in_section:
        raise fb.error(node, "qd.checkpoint() cannot appear inside a qd.graph.parallel() section")
    if not st.graph:
        raise fb.error(call, "qd.checkpoint() requires @qd.kernel(graph=True, checkpoints=True); the resume model "
                             "only applies to graph kernels")  # fmt: skip
    if not st.checkpoints:
        raise fb.error(call, f"qd.checkpoint() found in kernel {fb.kernel.name!r}, which was not decorated with "
                             "`checkpoints=True`: add it (`@qd.kernel(graph=True, checkpoints=True)`) to opt into "
                             "the pause / resume model")  # fmt: skip
    if st.in_checkpoint:
        raise fb.error(node, "qd.checkpoint() cannot be nested inside another qd.checkpoint(); checkpoints must be "
                             "flat siblings (one inside qd.graph.do_while is fine)")  # fmt: skip
    if len(fb.frames) != 1 or fb.runtime_depth != fb.folded_ifs:
        raise fb.error(node, "qd.checkpoint() must be at the kernel top level (or in a qd.graph.do_while body)")
    label_node, flag_node = _checkpoint_args(fb, call)
    label = _label(fb, label_node)
    flag = _flag(fb, flag_node, "qd.checkpoint(yield_on=...)")
    if any(c.label is not None and c.label == label for c in fb.kernel.checkpoints):
        raise fb.error(call, f"qd.checkpoint(cp_id={label!r}, ...) declares a cp_id that is already used by another "
                             f"checkpoint in kernel {fb.kernel.name!r}: each cp_id must be unique")  # fmt: skip
    for s in node.body:
        bare = isinstance(s, (ast.Assign, ast.AugAssign, ast.AnnAssign)) or (
            isinstance(s, ast.Expr) and not isinstance(s.value, ast.Constant)
        )
        if bare:
            raise fb.error(s, f"qd.checkpoint() body cannot contain a bare top-level {type(s).__name__} statement: "
                              + _BARE_FIX)  # fmt: skip
    body = [s for s in node.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
    _stage(fb, node, (label, flag_node, flag), lambda: fb.stmts(body))


def _checkpoint_args(fb: FrontendBuilder, call: ast.Call) -> tuple[ast.expr, ast.expr]:
    if not call.args and not call.keywords:
        raise fb.error(call, "qd.checkpoint() takes two arguments: `qd.checkpoint(cp_id, yield_on=flag)`")
    if len(call.args) > 2:
        raise fb.error(call, "qd.checkpoint() takes at most 2 positional arguments (cp_id, yield_on)")
    given: dict[str, ast.expr] = dict(zip(("cp_id", "yield_on"), call.args))
    for kw in call.keywords:
        if kw.arg not in ("cp_id", "yield_on"):
            raise fb.error(call, f"qd.checkpoint() got an unexpected keyword argument {kw.arg!r}; only 'cp_id' and "
                                 "'yield_on' are supported")  # fmt: skip
        if kw.arg in given:
            raise fb.error(call, f"qd.checkpoint() got `{kw.arg}` both positionally and as a keyword")
        given[kw.arg] = kw.value
    for name in ("cp_id", "yield_on"):
        if name not in given:
            raise fb.error(call, f"qd.checkpoint() is missing required argument `{name}` (e.g. "
                                 "`qd.checkpoint(0, yield_on=flag)`)")  # fmt: skip
    if not isinstance(given["yield_on"], (ast.Name, ast.Attribute)):
        raise fb.error(given["yield_on"], "qd.checkpoint(yield_on=...) must reference a kernel ndarray argument "
                                          "(`yield_on=flag`, `yield_on=self.flag`, `yield_on=params.flag`); "
                                          "arbitrary expressions are not supported")  # fmt: skip
    return given["cp_id"], given["yield_on"]


def _label(fb: FrontendBuilder, node: ast.expr) -> int:
    try:
        v = fb.expr(node)
    except QuadrantsCompilationError:
        v = None
    if not isinstance(v, int) or isinstance(v, bool):
        raise fb.error(node, "qd.checkpoint() first argument must be an int literal or an IntEnum value (e.g. "
                             "`Stage.SIM`), known when the kernel compiles")  # fmt: skip
    return v


def _stage(fb: FrontendBuilder, node: ast.stmt, explicit: tuple[int, ast.expr, ir.Arg] | None, body: Any) -> None:
    """Stage k (the next one): its gate, its body (`body()` translates it), and its yield check."""
    st = _state(fb)
    assert st.resume is not None and st.yielded is not None
    k = len(fb.kernel.checkpoints)
    if explicit is None:
        fb.kernel.checkpoints.append(ir.Checkpoint(None, "", None, -1))
    else:
        label, flag_node, flag = explicit
        enum_name = f"{type(label).__module__}:{type(label).__qualname__}" if isinstance(label, enum.Enum) else ""
        fb.kernel.checkpoints.append(ir.Checkpoint(label, enum_name, ast.unparse(flag_node), flag.index))
    loc = fb.loc(node)
    not_yet = fb.ops.binary("lt", fb.b.load(st.yielded), 0, loc)
    reached = fb.ops.binary("le", fb.b.load(st.resume), k, loc)
    gate = fb.b.emit(ir.If(cond=fb.b.emit(ir.Binary(op="and", lhs=not_yet, rhs=reached, type=u1))))
    scope = fb.new_scope()
    st.in_checkpoint = True
    try:
        with fb.b.into(gate.then):
            body()
            if explicit is not None:
                raised = fb.b.emit(ir.If(cond=fb.ops.binary("ne", _read_flag(fb, explicit[2]), 0, loc)))
                with fb.b.into(raised.then):
                    fb.b.store(st.yielded, fb.b.const(k, i32))
    finally:
        st.in_checkpoint = False
        fb.pop_scope(scope)


# ---- qd.stream_parallel ----------------------------------------------------------------------------------------


def _is_stream_block(fb: FrontendBuilder, s: ast.stmt) -> bool:
    return (isinstance(s, ast.With) and len(s.items) == 1
            and _intrinsic(fb, s.items[0].context_expr) == "stream_parallel")  # fmt: skip


def check_stream_blocks(fb: FrontendBuilder, body: list[ast.stmt]) -> None:
    """A kernel that has a `with qd.stream_parallel():` block at its top level has nothing else there."""
    if not any(_is_stream_block(fb, s) for s in body):
        return
    for s in body:
        if not _is_stream_block(fb, s):
            raise fb.error(s, "When using qd.stream_parallel(), all top-level statements in the kernel must be "
                              "'with qd.stream_parallel():' blocks. Move non-parallel code to a separate kernel.")  # fmt: skip


def _stream_block(fb: FrontendBuilder, node: ast.With, call: ast.Call) -> None:
    """`with qd.stream_parallel():` - Quadrants may give the block's loops a stream of their own; here the blocks
    run in order (lang/stream.py)."""
    if not fb.frame.is_kernel:
        raise fb.error(node, "qd.stream_parallel() can only be used inside @qd.kernel, not @qd.func")
    if _state(fb).graph:
        raise fb.error(node, "qd.stream_parallel() is not compatible with graph=True kernels. Streams and graphs "
                             "cannot be combined; remove graph=True or the qd.stream_parallel() block.")  # fmt: skip
    if call.args or call.keywords:
        raise fb.error(call, "qd.stream_parallel() takes no arguments")
    scope = fb.new_scope()
    try:
        fb.stmts(node.body)
    finally:
        fb.pop_scope(scope)


# ---- qd.graph.parallel_context / qd.graph.parallel -------------------------------------------------------------


_REGION_RULE = ("qd.graph.parallel_context() may contain only `with qd.graph.parallel():` sections (and "
                "`for ... in qd.static(...)` / `if qd.static(...)` around them)")  # fmt: skip


def _region(fb: FrontendBuilder, node: ast.With, call: ast.Call) -> None:
    st = _state(fb)
    if not st.graph:
        raise fb.error(call, "qd.graph.parallel_context() requires @qd.kernel(graph=True)")
    if st.checkpoints:
        raise fb.error(call, "qd.graph.parallel_context() is not supported in a @qd.kernel(graph=True, "
                             "checkpoints=True) kernel: its sections would escape the checkpoint stages")  # fmt: skip
    if st.in_region or st.in_section:
        raise fb.error(node, "qd.graph.parallel_context() regions cannot be nested")
    if call.args or call.keywords:
        raise fb.error(call, "qd.graph.parallel_context() takes no arguments")
    graph_api.warn_if_deprecated(call.func, "parallel_context")
    _check_region_body(fb, node.body)
    st.in_region = True
    try:
        fb.stmts(node.body)
    finally:
        st.in_region = False


def _check_region_body(fb: FrontendBuilder, body: list[ast.stmt]) -> None:
    """A region holds sections, under static fors and ifs only (checked before anything is translated)."""
    for s in body:
        if isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant) or isinstance(s, ast.Pass):
            continue
        if isinstance(s, ast.With) and len(s.items) == 1 and _intrinsic(fb, s.items[0].context_expr) == "graph_parallel":
            _check_section_body(fb, s.body)
            continue
        if isinstance(s, ast.For) and _intrinsic(fb, s.iter) == "static" and not s.orelse:
            _check_region_body(fb, s.body)
            continue
        if isinstance(s, ast.If) and _intrinsic(fb, s.test) == "static":
            _check_region_body(fb, s.body)
            _check_region_body(fb, s.orelse)
            continue
        raise fb.error(s, _REGION_RULE)


def _check_section_body(fb: FrontendBuilder, body: list[ast.stmt]) -> None:
    """A section is straight-line work: no do-while, checkpoint, region or section inside (at any depth)."""
    for s in body:
        for n in ast.walk(s):
            if not isinstance(n, ast.Call):
                continue
            if graph_api.matches(n.func, "do_while"):
                raise fb.error(n, "qd.graph.do_while() cannot appear inside a qd.graph.parallel() section")
            if graph_api.matches(n.func, "parallel_context"):
                raise fb.error(n, "qd.graph.parallel_context() regions cannot be nested (found one inside a "
                                  "qd.graph.parallel() section)")  # fmt: skip
            if graph_api.matches(n.func, "parallel"):
                raise fb.error(n, "qd.graph.parallel() sections cannot be nested")
            f = n.func
            if (isinstance(f, ast.Attribute) and f.attr == "checkpoint") or (isinstance(f, ast.Name) and f.id == "checkpoint"):
                raise fb.error(n, "qd.checkpoint() cannot appear inside a qd.graph.parallel() section")


def _section(fb: FrontendBuilder, node: ast.With, call: ast.Call) -> None:
    st = _state(fb)
    if not st.graph:
        raise fb.error(call, "qd.graph.parallel() requires @qd.kernel(graph=True)")
    if not st.in_region:
        raise fb.error(node, "qd.graph.parallel() can only be used as `with qd.graph.parallel():` directly inside a "
                             "qd.graph.parallel_context() region")  # fmt: skip
    if call.args or call.keywords:
        raise fb.error(call, "qd.graph.parallel() takes no arguments")
    graph_api.warn_if_deprecated(call.func, "parallel")
    scope = fb.new_scope()
    st.in_region, st.in_section = False, True
    try:
        fb.stmts(node.body)
    finally:
        st.in_region, st.in_section = True, False
        fb.pop_scope(scope)
