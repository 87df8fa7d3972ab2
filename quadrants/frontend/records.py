"""Plain records the frontend consumes and produces (kept apart so every frontend module can import them)."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from quadrants.errors import SourceLoc
from quadrants.types.dtypes import PrimitiveType

if TYPE_CHECKING:  # annotations only: specializing a call must not load the frontend or the IR
    from quadrants.frontend.source import FunctionSource
    from quadrants.ir import nodes as ir


class SpecKind(str, enum.Enum):
    """What a specialized parameter is. A `str` enum: `spec.kind == "matrix"` holds for SpecKind.MATRIX, and
    its text is the word (`f"{kind}"` is "matrix")."""

    SCALAR = "scalar"  # a runtime scalar of `type`
    NDARRAY = "ndarray"  # a runtime ndarray of NdType `type`
    MATRIX = "matrix"  # a runtime vector/matrix: `type` is (shape, dtype), passed as one scalar per element
    TEMPLATE = "template"  # the compile-time `value`
    STRUCT = "struct"  # a dataclass / data_oriented object: `members`, `cls`, `obj`
    ALIAS = "alias"  # a back-reference to the enclosing struct `value` levels up (`sim.solver.sim is sim`)

    __str__ = str.__str__


@dataclass(frozen=True)
class ParamSpec:
    """A kernel parameter (or a member of one) after specialization; `kind` says which fields apply."""

    name: str
    kind: SpecKind
    type: Any = None
    value: Any = None
    members: tuple[ParamSpec, ...] = ()
    cls: Any = None
    obj: Any = None
    grad: ParamSpec | None = None  # an ndarray's `.grad` companion: a hidden parameter right after it


@dataclass(frozen=True)
class Capture:
    """A value a kernel or func read from outside its own body: a closure or global name, possibly followed by
    attributes (`math.pi`, `Mode.FAST`). The fastcache purity check (driver/purity.py) judges these."""

    name: str
    value: Any  # the value read (after the attribute chain)
    where: str  # "closure" or "global"; "class": `name` is a class's module:qualname, `chain` the attribute
    owner: Any  # the Python function (kernel or func) that read it
    loc: SourceLoc | None
    static: bool = False  # read inside qd.static(...)
    chain: tuple[str, ...] = ()


@dataclass(frozen=True)
class StaticCall:
    """A Python function called at compile time (its result is compiled in)."""

    callee: Any
    loc: SourceLoc | None


@dataclass
class FrontendOptions:
    default_ip: PrimitiveType
    default_fp: PrimitiveType
    debug: bool = False
    unrolling_limit: int = 32
    autodiff: str = ""  # "reverse" / "forward": built for its adjoint / dual (fields' grads / duals get handles)
    raise_on_templated_floats: bool = False  # a float read from a global or closure is an error (qd.init option)


@dataclass
class FrontendResult:
    kernel: ir.Kernel
    captures: list[Capture] = field(default_factory=list)
    funcs: list[FunctionSource] = field(default_factory=list)  # every qd.func inlined, once each
    static_calls: list[StaticCall] = field(default_factory=list)
    member_reads: set[tuple[Any, ...]] = field(default_factory=set)  # struct parameters' members the code read
