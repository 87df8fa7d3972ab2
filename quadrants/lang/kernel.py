"""`@qd.kernel`: specialize on argument types, compile through the driver, launch.

Consumes a Python function and, at each call, its arguments; produces results (and side effects on ndarrays).
The call path: a generated fast path for the argument types of the previous call (identity checks and one
ctypes call), else the general path: bind and check arguments, look the specialization up, compile it on
first use, launch.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from quadrants.errors import QuadrantsCompilationError, QuadrantsRuntimeTypeError, QuadrantsSyntaxError, SourceLoc
from quadrants.frontend.source import FunctionSource, read_function
from quadrants.frontend.visitor import ParamSpec
from quadrants.lang import program
from quadrants.runtime.launch import MISS, Launcher, external_array
from quadrants.runtime.ndarray import Ndarray, nd_type
from quadrants.types import annotations as ann
from quadrants.types import dtypes
from quadrants.types.dtypes import PrimitiveType


@dataclass
class Param:
    name: str
    kind: str  # "ndarray", "scalar" or "template"
    annotation: Any
    default: Any = inspect.Parameter.empty


@dataclass
class SrcLlCacheObservations:
    """What fastcache did for this kernel (kept from the first call of the process)."""

    cache_key_generated: bool = False
    cache_validated: bool = False
    cache_loaded: bool = False
    cache_stored: bool = False


class Kernel:
    __qd_kernel__ = True

    def __init__(self, fn: Callable[..., Any], fastcache: bool = False) -> None:
        self.fn = fn
        self.fastcache = fastcache
        self._primal = self
        self._source: FunctionSource | None = None
        self._params: list[Param] | None = None
        self._generation = -1
        self._launchers: dict[Any, Launcher | QuadrantsCompilationError] = {}
        self._fast: Callable[..., Any] | None = None
        self._ret_types: tuple[Any, ...] = ()
        self.src_ll_cache_observations = SrcLlCacheObservations()
        functools.update_wrapper(self, fn)  # type: ignore[arg-type]

    def __repr__(self) -> str:
        return f"<qd.kernel {self.fn.__qualname__}>"

    # ---- call path --------------------------------------------------------------------------------------

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        fast = self._fast
        if fast is not None and not kwargs:
            try:
                r = fast(*args)
            except TypeError:  # wrong number of arguments: the general path explains
                r = MISS
            if r is not MISS:
                return r
        return self._call(args, kwargs)

    def forget(self) -> None:
        """Drop compiled code (called by qd.init / qd.reset)."""
        self._launchers.clear()
        self._fast = None

    def _call(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        prog = program.get()
        if self._generation != prog.generation:
            self.forget()
            program.register(self)
            self._generation = prog.generation
            self._ret_types = ann.return_types(
                ann.resolve(self.fn.__annotations__.get("return"), self.fn.__globals__),
                prog.config.default_ip,
                prog.config.default_fp,
            )
        params = self.params
        values = self._bind(params, args, kwargs)
        key, kinds, specs = self._specialize(params, values, prog.config)
        entry = self._launchers.get(key)
        if entry is None:
            entry = self._compile(specs, prog)
            self._launchers[key] = entry
        if isinstance(entry, QuadrantsCompilationError):
            raise type(entry)(entry.message, entry.loc) from None
        self._fast = entry.fast_path(kinds)
        runtime_args = [v for v, p in zip(values, params) if p.kind != "template"]
        return entry.call(runtime_args)

    def _compile(self, specs: list[ParamSpec], prog: program.Program) -> Launcher | QuadrantsCompilationError:
        from quadrants import driver
        from quadrants.runtime.loader import OrcLoader

        try:
            compiled = driver.compile_kernel(self.source, self.fn.__qualname__, specs, self._ret_types, prog.config)
        except QuadrantsCompilationError as e:
            return e
        loaded = OrcLoader.load(compiled.object_code, compiled.abi.symbol)
        launcher = Launcher(compiled.abi, loaded, prog.config.num_threads)
        launcher.compiled = compiled  # type: ignore[attr-defined]
        return launcher

    # ---- parameters -------------------------------------------------------------------------------------

    @property
    def source(self) -> FunctionSource:
        if self._source is None:
            self._source = read_function(self.fn, "kernel")
        return self._source

    def def_loc(self) -> SourceLoc | None:
        try:
            return self.source.loc(self.source.tree)
        except QuadrantsCompilationError:
            return None

    @property
    def params(self) -> list[Param]:
        if self._params is None:
            self._params = self._read_params()
        return self._params

    def _read_params(self) -> list[Param]:
        out = []
        closure: dict[str, Any] = {}
        for p in inspect.signature(self.fn).parameters.values():
            if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
                raise QuadrantsSyntaxError(
                    f"kernel {self.fn.__qualname__!r} cannot take *args or **kwargs", self.def_loc()
                )
            a = (
                ann.normalize(ann.resolve(p.annotation, self.fn.__globals__, closure))
                if p.annotation is not p.empty
                else p.empty
            )
            if a is p.empty:
                raise QuadrantsSyntaxError(
                    f"parameter {p.name!r} of kernel {self.fn.__qualname__!r} needs a type annotation", self.def_loc()
                )
            if ann.is_template(a):
                kind = "template"
            elif isinstance(a, ann.NdarrayType):
                kind = "ndarray"
            elif ann.is_scalar_annotation(a):
                kind = "scalar"
            else:
                raise QuadrantsSyntaxError(
                    f"parameter {p.name!r} of kernel {self.fn.__qualname__!r} has an unsupported annotation {a!r}",
                    self.def_loc(),
                )
            out.append(Param(p.name, kind, a, p.default))
        return out

    def _bind(self, params: list[Param], args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[Any]:
        if not kwargs and len(args) == len(params):
            return list(args)
        values: list[Any] = list(args)
        if len(args) > len(params):
            raise QuadrantsRuntimeTypeError(
                f"kernel {self.fn.__qualname__!r} takes {len(params)} argument(s) but {len(args)} were given",
                self.def_loc(),
            )
        for p in params[len(args) :]:
            if p.name in kwargs:
                values.append(kwargs.pop(p.name))
            elif p.default is not inspect.Parameter.empty:
                values.append(p.default)
            else:
                raise QuadrantsRuntimeTypeError(
                    f"kernel {self.fn.__qualname__!r} is missing argument {p.name!r}", self.def_loc()
                )
        if kwargs:
            raise QuadrantsRuntimeTypeError(
                f"kernel {self.fn.__qualname__!r} got unexpected argument(s) {sorted(kwargs)}", self.def_loc()
            )
        return values

    def _specialize(
        self, params: list[Param], values: list[Any], config: Any
    ) -> tuple[tuple[Any, ...], list[tuple[str, Any]], list[ParamSpec]]:
        key: list[Any] = []
        kinds: list[tuple[str, Any]] = []
        specs: list[ParamSpec] = []
        for p, v in zip(params, values):
            if p.kind == "template":
                try:
                    hash(v)
                    key.append(("t", type(v), v))
                except TypeError:
                    key.append(("t", type(v), id(v)))
                kinds.append(("template", v))
                specs.append(ParamSpec(p.name, "template", value=v))
            elif p.kind == "ndarray":
                t, kind = self._ndarray_type(p, v)
                key.append(t)
                kinds.append(kind)
                specs.append(ParamSpec(p.name, "ndarray", type=t))
            else:
                dtype = dtypes.to_dtype(p.annotation, config.default_ip, config.default_fp)
                kinds.append(("scalar", None))
                specs.append(ParamSpec(p.name, "scalar", type=dtype))
        return tuple(key), kinds, specs

    def _ndarray_type(self, p: Param, v: Any) -> tuple[Any, tuple[str, Any]]:
        annotation: ann.NdarrayType = p.annotation
        want_dtype = annotation.dtype
        elem_shape: tuple[int, ...] = ()
        want_prim: PrimitiveType | None = None
        if want_dtype is not None:
            if isinstance(want_dtype, PrimitiveType):
                want_prim = want_dtype
            else:
                want_prim, elem_shape = want_dtype.dtype, tuple(want_dtype.shape)
        if isinstance(v, Ndarray):
            t = v._spec
            if want_prim is not None and (t.dtype is not want_prim or t.elem_shape != elem_shape):
                raise QuadrantsRuntimeTypeError(
                    f"argument {p.name!r}: expected an ndarray of {want_dtype!r}, got {t!r}", self.def_loc()
                )
            if annotation.ndim is not None and t.ndim != annotation.ndim:
                raise QuadrantsRuntimeTypeError(
                    f"argument {p.name!r}: expected an ndarray with {annotation.ndim} dimension(s), got {t.ndim}",
                    self.def_loc(),
                )
            return t, ("ndarray", t)
        if isinstance(v, np.ndarray) or hasattr(v, "__qd_numpy_view__"):
            arr = external_array(v)
            prim = dtypes.from_numpy(arr.dtype)
            if want_prim is not None and prim is not want_prim:
                raise ValueError(
                    f"argument {p.name!r} of kernel {self.fn.__qualname__!r}: expected a {want_prim} array, "
                    f"got {arr.dtype}"
                )
            ndim = arr.ndim - len(elem_shape)
            if annotation.ndim is not None and ndim != annotation.ndim:
                raise ValueError(
                    f"argument {p.name!r} of kernel {self.fn.__qualname__!r}: expected {annotation.ndim} "
                    f"dimension(s), got {ndim}"
                )
            if tuple(arr.shape[ndim:]) != elem_shape:
                raise ValueError(f"argument {p.name!r}: element shape {arr.shape[ndim:]} != {elem_shape}")
            t = nd_type(prim, ndim, elem_shape)
            if isinstance(v, np.ndarray):
                return t, ("numpy", (arr.dtype, ndim))
            return t, ("external", None)
        raise QuadrantsRuntimeTypeError(
            f"argument {p.name!r} of kernel {self.fn.__qualname__!r} must be an ndarray, got {type(v).__name__}",
            self.def_loc(),
        )


def kernel(fn: Callable[..., Any] | None = None, *, fastcache: bool = False, pure: bool | None = None) -> Any:
    """Decorator: `@qd.kernel` or `@qd.kernel(fastcache=True)`."""
    if pure is not None:
        fastcache = fastcache or pure

    def wrap(f: Callable[..., Any]) -> Kernel:
        return Kernel(f, fastcache=fastcache)

    return wrap(fn) if fn is not None else wrap
