"""Text form of the IR, for dumps (`qd.init(print_ir=True)`, `dump="ir"`) and golden tests.

Consumes an `ir.Kernel`; produces a string. Values are numbered `%0, %1, ...` in program order, so the text
of a kernel is stable across runs and processes. The real functions a kernel calls follow it (`func ...`), each
numbered from `%0`: the offline cache key is made of this text, so it covers the callees' code.
"""

from __future__ import annotations

from quadrants.ir import nodes as ir


class _Namer:
    def __init__(self) -> None:
        self.names: dict[int, str] = {}

    def define(self, v: ir.Value) -> str:
        name = f"%{len(self.names)}"
        self.names[id(v)] = name
        return name

    def __call__(self, v: ir.Value) -> str:
        return self.names.get(id(v), "%?")


def format_kernel(kernel: ir.Kernel) -> str:
    namer = _Namer()
    params = ", ".join(f"{p.name}: {p.type!r}" for p in kernel.params)
    rets = ", ".join(map(repr, kernel.ret_types))
    mode = f" [{kernel.mode}]" if kernel.mode else ""
    # the leaves the parameters read are in the text, hence the offline key: the code of two specializations
    # whose unread members differ may be the same, but the arguments their launches pass are not
    leaves = f" leaves({', '.join(map(str, kernel.leaves))})" if kernel.leaves is not None else ""
    if kernel.guards is not None:  # likewise: which compiled-in values a launch checks
        leaves += f" guards({', '.join(map(str, kernel.guards))})"
    lines = [f"kernel {kernel.name}{mode}({params}) -> ({rets}){leaves}"]
    for lv in kernel.graph_levels:
        lines.append(f"  graph do_while {lv.name!r} (arg {lv.arg}) in level {lv.parent}")
    for k, cp in enumerate(kernel.checkpoints):
        label = "implicit" if cp.label is None else f"label {int(cp.label)} {cp.enum}".rstrip()
        lines.append(f"  checkpoint {k}: {label}, yield_on {cp.yield_on!r} (arg {cp.arg})")
    if kernel.resume_arg >= 0:
        lines.append(f"  resume from arg {kernel.resume_arg}")
    _block(kernel.body, namer, 1, lines)
    for fn in kernel.functions:  # the real functions it calls: their code is part of the kernel's text
        fn_params = ", ".join(f"{p.name}: {p.type!r}" for p in fn.params)
        lines.append(f"func {fn.name}({fn_params}) -> ({', '.join(map(repr, fn.ret_types))})")
        _block(fn.body, _Namer(), 1, lines)
    return "\n".join(lines) + "\n"


def _block(block: ir.Block, n: _Namer, depth: int, out: list[str]) -> None:
    pad = "  " * depth
    for s in block.stmts:
        out.append(pad + _stmt(s, n))
        if isinstance(s, ir.If):
            _block(s.then, n, depth + 1, out)
            if s.orelse.stmts:
                out.append(pad + "else:")
                _block(s.orelse, n, depth + 1, out)
        else:
            for b in s.blocks():
                _block(b, n, depth + 1, out)


def _stmt(s: ir.Stmt, n: _Namer) -> str:  # noqa: C901 - one case per node class, flat
    ops = ", ".join(n(v) for v in s.operands())
    if isinstance(s, ir.RangeFor):
        head = f"{n.define(s)} = for range({n(s.begin)}, {n(s.end)})"
        if s.extents:
            head += " extents(" + ", ".join(n(e) for e in s.extents) + ")"
        if s.parallel:
            head += " parallel"
        if s.reductions:
            head += " reduce[" + ", ".join(f"{r.op} {n(r.ptr)}: {r.dtype}" for r in s.reductions) + "]"
        return head + ":"
    if isinstance(s, ir.Value):
        lhs = n.define(s)
        t = repr(s.type)
        if isinstance(s, ir.Const):
            return f"{lhs} = const {s.value!r} : {t}"
        if isinstance(s, ir.GlobalNd):
            terms = f" terms {s.terms}" if s.terms else ""
            if s.levels:  # the whole path's layout: a changed tree never shares a cache entry
                terms += f" leaf {s.leaf} levels {s.levels}"
            if s.bits is not None:  # a quantized field: its word's layout
                terms += f" bits {s.bits}"
            return f"{lhs} = field region {s.region} offset {s.offset} shape {s.shape}{terms} : {t}"
        if isinstance(s, ir.Arg):
            return f"{lhs} = arg {s.index} {s.name} : {t}"
        if isinstance(s, ir.LoopCoord):
            return f"{lhs} = coord {n(s.loop)}, {s.dim} : {t}"
        if isinstance(s, ir.NdShape):
            return f"{lhs} = shape {n(s.arr)}, {s.dim} : {t}"
        if isinstance(s, ir.Binary) and s.site >= 0:
            return f"{lhs} = {s.op} {ops} : {t} !overflow site {s.site}"
        if isinstance(s, (ir.Binary, ir.Unary)):
            return f"{lhs} = {s.op} {ops} : {t}"
        if isinstance(s, ir.Cast):
            return f"{lhs} = {'bitcast' if s.bitcast else 'cast'} {ops} : {t}"
        if isinstance(s, ir.ExtPtr):
            idx = ", ".join(n(v) for v in s.indices)
            el = "" if not s.elem else "." + ".".join(map(str, s.elem))
            chk = f" !site {s.site}" if s.site >= 0 else ""
            act = " activate" if s.activate else ""
            return f"{lhs} = extptr {n(s.arr)}[{idx}]{el}{act}{chk} : {t}"
        if isinstance(s, ir.SNodeOp):
            chk = f" !site {s.site}" if s.site >= 0 else ""
            return f"{lhs} = snode.{s.op} depth {s.depth} places {s.places} {ops}{chk} : {t}"
        if isinstance(s, ir.Alloca):
            return f"{lhs} = alloca {s.var_type} {s.name} : {t}"
        if isinstance(s, ir.AdStack):
            return f"{lhs} = adstack {s.var_type} x {s.capacity} {s.name} : {t}"
        if isinstance(s, ir.AtomicRMW):
            return f"{lhs} = atomic {s.op} {ops} : {t}"
        if isinstance(s, ir.SharedArray):
            return f"{lhs} = shared_array shape {s.shape} : {t}"
        if isinstance(s, ir.Simt):
            return f"{lhs} = simt {s.op}{' ' + ops if ops else ''} : {t}"
        if isinstance(s, ir.Load) and s.volatile:  # Quadrants' printer's words for it
            return f"{lhs} = global load volatile {ops} : {t}"
        if isinstance(s, ir.Random):
            bound = f" {ops}" if ops else ""
            return f"{lhs} = random stream {s.stream}{bound} : {t}"
        return f"{lhs} = {type(s).__name__.lower()} {ops} : {t}"
    if isinstance(s, ir.If):
        return f"if {ops}:"
    if isinstance(s, ir.While):
        return "while:"
    if isinstance(s, ir.Reduce):
        return f"reduce.{s.slot} {ops}"
    if isinstance(s, ir.Print):
        specs = s.specs or ("",) * len(s.parts)
        return "print " + ", ".join(
            repr(p) if isinstance(p, str) else n(p) + (f":{spec!r}" if spec else "") for p, spec in zip(s.parts, specs)
        )
    if isinstance(s, ir.AdStackPush):
        return f"adstackpush {ops} !site {s.site}"
    if isinstance(s, ir.Assert):
        return f"assert {ops} !site {s.site}"
    if isinstance(s, ir.Call):
        args = ", ".join(n(v) for v in s.args)
        results = ", ".join(n(v) for v in s.results)
        return f"call {s.func.name}({args}) -> ({results})"
    word = type(s).__name__.lower()
    return f"{word} {ops}".rstrip()
