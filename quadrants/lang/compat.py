"""Names of real Quadrants' API that programs touch at import and in decorators, with Quadrants' meaning where
this package can give it and a stated one where it cannot.

- `Extension` / `is_extension_supported`: what a backend offers. This package offers 64-bit data, assertions and
  external functions, quantized types, sparse SNodes, meshes and the autodiff stack on both backends;
  block-local storage it does not have, so it is reported unsupported (programs that ask skip it).
- `pure`: the deprecated spelling of `@qd.kernel(fastcache=True)`, with Quadrants' warning.
- `real_func`: a func compiled as a function of its own and called, as in Quadrants (frontend/real_funcs.py):
  it may recurse and return from anywhere.
- `Layout`: SOA/AOS memory layouts of struct fields; accepted (fields here are dense and each member is its own
  array, which is SOA).
"""

from __future__ import annotations

import enum
import warnings
from typing import Any

from quadrants import _config


class Extension(enum.Enum):
    sparse = "sparse"
    quant = "quant"
    mesh = "mesh"
    quant_basic = "quant_basic"
    data64 = "data64"
    adstack = "adstack"
    bls = "bls"
    assertion = "assertion"
    extfunc = "extfunc"


_SUPPORTED = {Extension.data64, Extension.assertion, Extension.extfunc, Extension.adstack, Extension.quant,
              Extension.quant_basic, Extension.sparse, Extension.mesh}  # fmt: skip


def is_extension_supported(arch: Any, ext: Extension) -> bool:
    """Whether `arch` offers `ext` here: only the CPU and CUDA backends exist, with the same extensions."""
    parsed = _config._parse_arch(arch)
    return parsed in (_config.cpu, _config.cuda, _config.gpu) and ext in _SUPPORTED


_WARNED: set[str] = set()


def pure(fn: Any) -> Any:
    """`@qd.pure` (deprecated): marks a kernel fastcache-pure, i.e. `@qd.kernel(fastcache=True)`."""
    message = (
        "Use of @qd.pure is deprecated. Please use @qd.kernel(fastcache=True). @qd.pure is intended to be removed in "
        "v4.0.0"
    )
    if message not in _WARNED:
        _WARNED.add(message)
        warnings.warn(message, stacklevel=2)
    target = getattr(fn, "_primal", fn)
    if hasattr(target, "fastcache"):  # @qd.pure over @qd.kernel
        target.fastcache = True
    else:  # under @qd.kernel: it reads the mark
        fn.is_pure = True
    return fn


def real_func(fn: Any) -> Any:
    """`@qd.real_func`: a func compiled once per signature as a function of its own, and called (so it may
    recurse). As Quadrants requires of a real function, every parameter must be annotated (checked here,
    QuadrantsSyntaxError; a method's `self` is a template) and a function that returns a value must annotate it
    (checked when a kernel compiles it, QuadrantsCompilationError)."""
    import inspect
    import sys

    from quadrants.errors import QuadrantsSyntaxError
    from quadrants.frontend.func import Func

    for k, p in enumerate(inspect.signature(fn).parameters.values()):
        if p.annotation is inspect.Parameter.empty and not (k == 0 and p.name == "self"):
            raise QuadrantsSyntaxError(f"Argument {p.name} of real function {fn.__name__} must be type annotated")
    frame = sys._getframe(1)  # the defining scope: string annotations may name its locals, as for qd.func
    wrapped = Func(fn, dict(frame.f_locals) if frame.f_code.co_name != "<module>" else None)
    wrapped.is_real = True
    return wrapped


class Layout(enum.Enum):
    AOS = "aos"
    SOA = "soa"
    NULL = "null"


__all__ = ["Extension", "is_extension_supported", "pure", "real_func", "Layout"]
