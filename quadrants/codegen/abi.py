"""A lowered kernel's calling convention (`runtime.abi.KernelABI`), read off its IR: parameters, results,
which ndarray parameters it writes, its check sites, and whether it takes the hidden parameters of `qd.random()`
(the seed and the launch number, last: passes/random_streams.py). Shared by every backend; no llvmlite."""

from __future__ import annotations

from quadrants.ir import nodes as ir
from quadrants.passes.random_streams import HIDDEN_PARAMS
from quadrants.runtime.abi import ALWAYS_CHECKED, ArgABI, GraphABI, KernelABI, SiteABI


def error_checks(kernel: ir.Kernel, bounds_checked: bool) -> bool:
    """Whether the kernel's launches read its error record: checks compiled in (`bounds_checked`), an adstack
    (passes/autodiff/adstack.py), whose overflow is always an error, or an allocation from a sparse tree's pool,
    which fails when the pool is full (codegen/sparse_pool.py)."""
    return bounds_checked or any(s.kind in ALWAYS_CHECKED for s in kernel.sites)


def make_abi(kernel: ir.Kernel, symbol: str, keep_sites: bool = True) -> KernelABI:
    """The kernel's calling convention. Check sites only matter when checks are compiled in (`debug`,
    `check_out_of_bound`); without them the ABI stays small (it is read at every cache hit)."""
    args = []
    written = written_params(kernel)
    params = [p for p in kernel.params if p.name not in HIDDEN_PARAMS]
    for k, p in enumerate(params):
        if isinstance(p.type, ir.NdType):
            args.append(ArgABI(p.name, "ndarray", p.type.dtype.name, p.type.ndim, p.type.elem_shape, k in written))
        else:
            args.append(ArgABI(p.name, "scalar", p.type.name))
    sites = site_abis(kernel) if keep_sites else ()
    bodies = [kernel.body, *(fn.body for fn in kernel.functions)]
    has_print = any(isinstance(s, ir.Print) for body in bodies for s in ir.walk(body))
    return KernelABI(symbol=symbol, args=tuple(args), rets=tuple(t.name for t in kernel.ret_types),
                     sites=sites, has_print=has_print, ret_shapes=kernel.ret_shapes,
                     random=len(params) < len(kernel.params), tasks=offloaded_tasks(kernel.body),
                     graph=graph_abi(kernel), leaves=kernel.leaves, guards=kernel.guards)  # fmt: skip


def graph_abi(kernel: ir.Kernel) -> GraphABI | None:
    if not kernel.graph_levels and not kernel.checkpoints and kernel.resume_arg < 0:
        return None
    levels = tuple((lv.name, lv.parent, lv.arg) for lv in kernel.graph_levels)
    cps = tuple((None if c.label is None else int(c.label), c.enum, c.yield_on, c.arg) for c in kernel.checkpoints)
    return GraphABI(levels, cps, kernel.resume_arg)


def offloaded_tasks(block: ir.Block) -> int:
    """The tasks a launch runs, counted as Quadrants offloads a kernel: one per parallel loop, one per run of
    serial statements between them; a statement holding parallel loops (a `qd.graph.do_while`, a checkpoint's
    gate) counts what its blocks hold."""
    count, serial = 0, False
    for s in block.stmts:
        if isinstance(s, ir.RangeFor) and s.parallel:
            count, serial = count + 1, False
        elif isinstance(s, (ir.While, ir.If)) and any(_has_parallel(b) for b in s.blocks()):
            count, serial = count + sum(offloaded_tasks(b) for b in s.blocks()), False
        elif not isinstance(s, (ir.Arg, ir.Const, ir.Alloca)) and not serial:
            count, serial = count + 1, True
    return count


def _has_parallel(block: ir.Block) -> bool:
    return any(isinstance(s, ir.RangeFor) and s.parallel for s in ir.walk(block))


def site_abis(kernel: ir.Kernel) -> tuple[SiteABI, ...]:
    """The kernel's check sites as the ABI records them (relative to the kernel or func they are in)."""
    sites = []
    for s in kernel.sites:
        loc = s.loc
        if loc is None:
            sites.append(SiteABI(s.kind, s.detail, "", 0, 0, 0, "", ""))
        else:
            offset = loc.lineno - s.first_line if s.first_line else -1
            sites.append(SiteABI(s.kind, s.detail, loc.filename, loc.lineno, loc.col, loc.end_col, loc.line_text,
                                 loc.func_name, s.owner, offset))  # fmt: skip
    return tuple(sites)


def written_params(kernel: ir.Kernel) -> set[int]:
    """Indices of the ndarray parameters the kernel may write (stores, atomics, reductions into them, and the
    real functions it passes them to that write them, found for all functions together: they may recurse)."""
    by_function: dict[int, set[int]] = {id(fn): set() for fn in kernel.functions}
    changed = True
    while changed:
        changed = False
        for fn in kernel.functions:
            found = _written_args(fn.body, by_function)
            if found != by_function[id(fn)]:
                by_function[id(fn)] = found
                changed = True
    return _written_args(kernel.body, by_function)


def _written_args(body: ir.Block, by_function: dict[int, set[int]]) -> set[int]:
    """The `Arg` indices of the ndarrays `body` writes, given which parameters each real function writes."""
    out: set[int] = set()

    def mark(ptr: ir.Value) -> None:
        if isinstance(ptr, ir.ExtPtr) and isinstance(ptr.arr, ir.Arg):  # an element of an ndarray argument
            out.add(ptr.arr.index)

    for s in ir.walk(body):
        if isinstance(s, (ir.Store, ir.AtomicRMW)):
            mark(s.ptr)
        elif isinstance(s, ir.RangeFor):
            for r in s.reductions:
                mark(r.ptr)
        elif isinstance(s, ir.Call):
            written = by_function.get(id(s.func), set())
            out.update(a.index for k, a in enumerate(s.args) if k in written and isinstance(a, ir.Arg))
    return out
