"""A kernel's parameters, read from its function, and a call's arguments bound to them.

lang/kernel.py reads the parameters once per kernel (`read_params`: name, kind, resolved annotation, default)
and binds each call's positional and keyword arguments and defaults to them (`bind`) before the fast path.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from quadrants.errors import QuadrantsArgumentError, QuadrantsSyntaxError, SourceLoc
from quadrants.lang.args import ParamKind, classify_annotation
from quadrants.types import annotations as ann

EMPTY = inspect.Parameter.empty  # no default / no annotation
_VARARGS = inspect.CO_VARARGS | inspect.CO_VARKEYWORDS
Locate = Callable[[], "SourceLoc | None"]  # the kernel's `def` line, for errors


def _signature(fn: Any) -> list[tuple[str | None, Any, Any]]:
    """(name, annotation, default) per parameter, read from the code object: a kernel's first call on a
    fastcache hit pays for this, and `inspect.signature` costs several times more. A `*args` or `**kwargs`
    parameter gives a None name."""
    code = fn.__code__
    if code.co_flags & _VARARGS:
        return [(None, EMPTY, EMPTY)]
    npos, nkw = code.co_argcount, code.co_kwonlyargcount
    names = code.co_varnames[: npos + nkw]
    annotations = fn.__annotations__
    defaults = fn.__defaults__ or ()
    kwdefaults = fn.__kwdefaults__ or {}
    first_default = npos - len(defaults)
    out = []
    for i, name in enumerate(names):
        if i < npos:
            default = defaults[i - first_default] if i >= first_default else EMPTY
        else:
            default = kwdefaults.get(name, EMPTY)
        out.append((name, annotations.get(name, EMPTY), default))
    return out


@dataclass
class Param:
    name: str
    kind: ParamKind
    annotation: Any
    default: Any = EMPTY


def read_params(fn: Any, def_locals: dict[str, Any], def_loc: Locate) -> list[Param]:
    """The kernel's parameters: each annotated (but a data_oriented method's `self`) with a kind it supports."""
    out = []
    for i, (name, annotation, default) in enumerate(_signature(fn)):
        if name is None:
            raise QuadrantsSyntaxError(f"kernel {fn.__qualname__!r} cannot take *args or **kwargs", def_loc())
        if annotation is EMPTY:
            if i == 0 and name == "self":  # a method of a @qd.data_oriented class
                out.append(Param(name, ParamKind.SELF, None, default))
                continue
            raise QuadrantsSyntaxError(
                f"parameter {name!r} of kernel {fn.__qualname__!r} needs a type annotation", def_loc()
            )
        a = ann.normalize(ann.resolve(annotation, fn.__globals__, def_locals))
        kind = classify_annotation(a)
        if kind is None:
            raise QuadrantsSyntaxError(
                f"parameter {name!r} of kernel {fn.__qualname__!r} has an unsupported annotation {a!r}", def_loc()
            )
        out.append(Param(name, kind, a, default))
    return out


def bind(params: list[Param], args: tuple[Any, ...], kwargs: dict[str, Any], name: str, def_loc: Locate) -> list[Any]:
    """One value per parameter: the positional arguments, then keywords (taken out of `kwargs`) or defaults."""
    if not kwargs and len(args) == len(params):
        return list(args)
    values: list[Any] = list(args)
    if len(args) > len(params):
        raise QuadrantsArgumentError(
            f"Too many arguments: kernel {name!r} takes {len(params)} argument(s) but {len(args)} were given",
            def_loc(),
        )
    for p in params[len(args) :]:
        if p.name in kwargs:
            values.append(kwargs.pop(p.name))
        elif p.default is not EMPTY:
            values.append(p.default)
        else:
            raise QuadrantsArgumentError(f"Missing argument {p.name!r} of kernel {name!r}", def_loc())
    if kwargs:
        names = ", ".join(repr(k) for k in sorted(kwargs))
        raise QuadrantsArgumentError(f"Unexpected argument {names} for kernel {name!r}", def_loc())
    return values
