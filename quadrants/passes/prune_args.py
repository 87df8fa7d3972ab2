"""Leave out the members of dataclass and data_oriented arguments that the kernel never reads (as Quadrants
prunes them): such a member is not a native argument, so its launches neither marshal nor check it.

Runs last, on the finished IR (after `qd.static` branches were dropped and funcs inlined, so what is read is
exactly what the code uses). A parameter marked `member` (frontend/visitor.runtime_params) whose `Arg` no
statement refers to is removed with its `Arg`; the remaining `Arg`s are renumbered in order, and
`Kernel.leaves` records, for each remaining parameter the launch passes, which leaf of the specialization it
reads (the launcher picks those: runtime/abi.KernelABI.passed). The printer writes `leaves(...)`, so the
offline key holds it. Nothing changes when no member goes unread.

Before (a dataclass `s` with members `a` and `b`; only `a` is read):

    kernel k(s.a: ndarray[i32, 1], s.b: ndarray[i32, 1]) -> ()
      %0 = arg 0 s.a : ndarray[i32, 1]
      %1 = arg 1 s.b : ndarray[i32, 1]
      %2 = const 0 : i32
      %3 = extptr %0[%2] !site 0 : ptr<i32>
      ...

After:

    kernel k(s.a: ndarray[i32, 1]) -> () leaves(0)
      %0 = arg 0 s.a : ndarray[i32, 1]
      %1 = const 0 : i32
      %2 = extptr %0[%1] !site 0 : ptr<i32>
      ...
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any

from quadrants.errors import SourceLoc
from quadrants.ir import nodes as ir
from quadrants.passes.random_streams import HIDDEN_PARAMS
from quadrants.types.dtypes import PrimitiveType


def run(kernel: ir.Kernel) -> None:
    args = [s for s in ir.walk(kernel.body) if isinstance(s, ir.Arg)]
    members = {id(a) for a in args if kernel.params[a.index].member}
    if not members:
        return
    read = _referenced(kernel, members)
    keep = [k for k, p in enumerate(kernel.params)
            if not p.member or k in _graph_args(kernel) or any(id(a) in read for a in args if a.index == k)]  # fmt: skip
    if len(keep) == len(kernel.params):
        return
    renumber = {old: new for new, old in enumerate(keep)}
    dropped = {id(a) for a in args if a.index not in renumber}
    _drop(kernel.body, dropped)
    for a in args:
        if a.index in renumber:
            a.index = renumber[a.index]
    prior = kernel.leaves
    # the hidden parameters (random streams, a checkpoints kernel's resume stage) are no leaves: their
    # launchers append them
    kernel.leaves = tuple(k if prior is None else prior[k] for k in keep
                          if kernel.params[k].name not in HIDDEN_PARAMS and k != kernel.resume_arg)  # fmt: skip
    kernel.params = [kernel.params[k] for k in keep]
    kernel.graph_levels = [dataclasses.replace(lv, arg=renumber[lv.arg]) for lv in kernel.graph_levels]
    kernel.checkpoints = [dataclasses.replace(c, arg=renumber.get(c.arg, c.arg)) for c in kernel.checkpoints]
    if kernel.resume_arg >= 0:
        kernel.resume_arg = renumber[kernel.resume_arg]
    kernel.grads = {p: g for p, g in kernel.grads.items() if id(p) not in dropped and id(g) not in dropped}


def _graph_args(kernel: ir.Kernel) -> set[int]:
    """The parameters the graph constructs name by index (frontend/graph.py): flags and the resume stage."""
    flags = {lv.arg for lv in kernel.graph_levels} | {c.arg for c in kernel.checkpoints if c.arg >= 0}
    return flags | ({kernel.resume_arg} if kernel.resume_arg >= 0 else set())


def _drop(block: ir.Block, dropped: set[int]) -> None:
    block.stmts = [s for s in block.stmts if id(s) not in dropped]
    for s in block.stmts:
        for b in s.blocks():
            _drop(b, dropped)


def _referenced(kernel: ir.Kernel, candidates: set[int]) -> set[int]:
    """The ids of the `candidates` (the kernel's `Arg`s) that any statement of the kernel or of its real
    functions refers to: in its operands, or anywhere in its fields (a loop's reduction records, a call's
    arguments), so no use is missed whatever the statement's class lists as operands."""
    found: set[int] = set()
    bodies = [kernel.body, *(fn.body for fn in kernel.functions)]
    for body in bodies:  # the operands first: cheap, and where nearly every use is
        for s in ir.walk(body):
            for v in s.operands():
                if id(v) in candidates:
                    found.add(id(v))
                    if len(found) == len(candidates):
                        return found
    for body in bodies:  # then, for the rest, every field of every statement
        for s in ir.walk(body):
            for name in _field_names(type(s)):
                for v in _values(getattr(s, name)):
                    if id(v) in candidates:
                        found.add(id(v))
    return found


_FIELD_NAMES: dict[type, tuple[str, ...]] = {}


def _field_names(cls: type) -> tuple[str, ...]:
    names = _FIELD_NAMES.get(cls)
    if names is None:
        names = _FIELD_NAMES[cls] = tuple(f.name for f in dataclasses.fields(cls))  # type: ignore[arg-type]
    return names


# what holds no statement: scalars, source locations, check sites, types (so the walk skips them whole)
_LEAVES = (str, int, float, SourceLoc, ir.Site, PrimitiveType, ir.NdType, ir.PtrType)


def _values(x: Any) -> Iterator[Any]:
    """`x` and the values inside it: tuples, lists, and records that are not statements or blocks."""
    if x is None or isinstance(x, _LEAVES):
        return
    if isinstance(x, (tuple, list)):
        for y in x:
            yield from _values(y)
    elif isinstance(x, ir.Stmt):
        yield x
    elif dataclasses.is_dataclass(x) and not isinstance(x, (type, ir.Block)):
        for f in dataclasses.fields(x):
            yield from _values(getattr(x, f.name))
