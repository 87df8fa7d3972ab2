"""`@qd.kernel`: specialize on arguments, compile through the driver, launch.

Consumes a Python function and, at each call, its arguments; produces results (and side effects on ndarrays
and fields). The call path: a generated fast path for the previous call's specialization (identity checks and
one ctypes call), else the general path: bind arguments, specialize (lang/args.py), look the specialization
up, compile it on first use, launch.
"""

from __future__ import annotations

import dataclasses
import functools
import sys
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from quadrants._stats import STATS
from quadrants.errors import (
    MissingGradientError,
    QuadrantsArgumentError,
    QuadrantsCompilationError,
    QuadrantsRuntimeError,
    QuadrantsRuntimeTypeError,
    QuadrantsSyntaxError,
    SourceLoc,
)
from quadrants.frontend.source import FunctionSource, read_function
from quadrants.lang import program
from quadrants.lang import tape as _tape
from quadrants.lang._kernel_types import (
    CompiledKernelData,
    FeLlCacheObservations,
    LaunchObservations,
    LaunchStats,
    SrcLlCacheObservations,
    TemplateMapper,
    launch_stats,
    used_members,
)
from quadrants.lang._perf_dispatch import refuse_registered
from quadrants.lang.args import ParamKind, Specialization, Specializer
from quadrants.lang.call_request import CallRequest
from quadrants.lang.checkpoint import LAST_CALL, DoWhileLevel, GraphRecords
from quadrants.lang.data_oriented import is_data_oriented
from quadrants.lang.fast_paths import FastPaths, SharedCode
from quadrants.lang.params import Param, bind, read_params
from quadrants.lang.struct import result_regrouper
from quadrants.runtime import python_backend
from quadrants.runtime.launch import MISS, Launcher, scalar_arg
from quadrants.types import annotations as ann
from quadrants.types.compound import MatrixType
from quadrants.types.dtypes import PrimitiveType, to_dtype
from quadrants.types.struct import StructType


def _no_recorder(path: str, kernel: Any, params: list[Any], values: list[Any], cache_dir: str | None) -> None:
    raise RuntimeError("no signature recorder was installed (quadrants/__init__.py installs aot.record's)")


# Called at the first call of each specialization while `qd record` runs the program (config.record: the file).
# aot/record.py writes the signature; the package installs it (aot builds on lang, so lang does not import it).
RECORDER: Callable[[str, Any, list[Any], list[Any], str | None], None] = _no_recorder


class Kernel:
    __qd_kernel__ = True

    def __init__(
        self, fn: Callable[..., Any], fastcache: bool = False, def_locals: dict[str, Any] | None = None,
        mode: str = "",
    ) -> None:
        self.fn = fn
        self.fastcache = fastcache
        self.mode = mode  # "reverse": the adjoint of `_primal` (kernel.grad); "forward": its dual (qd.ad.FwdMode)
        self._adjoint: Kernel | None = None
        self._dual: Kernel | None = None
        self._checked: Kernel | None = None
        self.mode_override: Any = None  # the AutodiffMode a validating Tape reports while it records this kernel
        # Names visible where the kernel was defined: string annotations (PEP 563) may refer to them.
        self._def_locals = def_locals or {}
        self._primal = self
        self._source: FunctionSource | None = None
        self._params: list[Param] | None = None
        self._generation = -1
        self._launchers: dict[Any, Launcher | QuadrantsCompilationError] = {}
        self._fast = FastPaths()  # the recent specializations' launches that skip the general path
        self._shared = SharedCode()  # launchers by the compiled-in values their code read
        self._returns: tuple[Any, ...] = ()
        self.src_ll_cache_observations = SrcLlCacheObservations()
        self.fe_ll_cache_observations = FeLlCacheObservations()
        self.launch_stats = LaunchStats()  # the last specialization launched through the general path
        self._graph = GraphRecords()  # what the last compile recorded of its graph constructs
        self._observed = False
        # Quadrants' names for what this program compiled: specialization key -> its code, the last one obtained,
        # the key of the last launch and whether that launch found its code compiled already
        self.compiled_kernel_data_by_key: dict[Any, CompiledKernelData] = {}
        self._last_compiled_kernel_data: CompiledKernelData | None = None
        self._last_launch_key: Any = None
        self._found_compiled = False
        functools.update_wrapper(self, fn)  # type: ignore[arg-type]

    def __repr__(self) -> str:
        return f"<qd.kernel {self.fn.__qualname__}>"

    def __get__(self, obj: Any, objtype: Any = None) -> Any:
        """A kernel defined in a @qd.data_oriented class, called on an instance: `sim.step()`."""
        if obj is None:
            return self
        return BoundKernel(self, obj)

    @property
    def grad(self) -> Kernel:
        """`kernel.grad(*args)`: the reverse-mode adjoint, called with the primal's arguments. It is compiled
        separately (passes/autodiff on the typed IR) and cached under keys of its own (the mode is in both);
        it accumulates into the `.grad` of the fields and ndarrays the kernel reads."""
        if self.mode:
            raise QuadrantsRuntimeError(f"{self.fn.__qualname__}.grad is already an adjoint (no second order)")
        if self._adjoint is None:
            self._adjoint = Kernel(self.fn, self.fastcache, self._def_locals, mode="reverse")
            self._adjoint._primal = self
        return self._adjoint

    @property
    def dual(self) -> Kernel:
        """The forward-mode (dual) kernel that a call inside `qd.ad.FwdMode` runs: the primal's effects plus the
        tangents it carries into the `.dual` of the fields it writes (passes/autodiff/forward.py); compiled
        and cached separately, as the adjoint is."""
        if self.mode:
            raise QuadrantsRuntimeError(f"{self.fn.__qualname__} is already differentiated (mode {self.mode})")
        if self._dual is None:
            self._dual = Kernel(self.fn, self.fastcache, self._def_locals, mode="forward")
            self._dual._primal = self
        return self._dual

    @property
    def checked(self) -> Kernel:
        """The validation kernel a `qd.ad.Tape(validation=True)` runs under debug=True: the primal, plus a check
        that no element of a field with a gradient is written after it was read (passes/autodiff/validation.py)."""
        if self._checked is None:
            self._checked = Kernel(self.fn, self.fastcache, self._def_locals, mode="validation")
            self._checked._primal = self
        return self._checked

    @property
    def autodiff_mode(self) -> Any:
        """Quadrants' `AutodiffMode` of this kernel object (NONE for a primal; VALIDATION while a validating
        Tape records it)."""
        from quadrants.types.enums import AutodiffMode

        if self.mode_override is not None:
            return self.mode_override
        modes = {"": AutodiffMode.NONE, "reverse": AutodiffMode.REVERSE, "forward": AutodiffMode.FORWARD,
                 "validation": AutodiffMode.VALIDATION}  # fmt: skip
        return modes[self.mode]

    # ---- call path --------------------------------------------------------------------------------------

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if kwargs and "qd_stream" in kwargs:  # every launch runs in order here (lang/stream.py)
            s = kwargs.pop("qd_stream")
            if s is not None:
                from quadrants.lang import stream

                stream.check_launch(self.fn.__qualname__, s, graph=getattr(self.fn, "__qd_graph__", False),
                                    autodiff=bool(self.mode), taped=bool(_tape.ACTIVE))  # fmt: skip
        if _tape.ACTIVE and not self.mode:  # a qd.ad.Tape records the call; qd.ad.FwdMode runs the dual kernel
            target = _tape.ACTIVE[-1].capture(self, args, kwargs)
            if target is not self:
                return target(*args, **kwargs)
        paths = self._fast
        fast = paths.latest
        params = self._params
        if (kwargs or (params is not None and len(args) != len(params))) and paths:
            try:  # keywords (Genesis passes them) and defaults: bound here, then the fast path
                args, kwargs = tuple(self._bind(self.params, args, dict(kwargs))), {}
            except QuadrantsArgumentError:  # the general path raises it
                return self._call(args, kwargs)
        if fast is not None and not kwargs:
            try:
                r = fast(*args)
            except (TypeError, AttributeError):  # another arity or shape of arguments: the general path explains
                r = MISS
            if r is not MISS:
                return r
        if paths.others and not kwargs:
            r, key, entry = paths.launch_other(args)
            if r is not MISS:  # the records the general path keeps of the last launch follow it
                self.launch_stats, LAST_CALL.tasks = entry.launch_stats, entry.tasks
                self._last_launch_key, self._found_compiled = key, True
                return r
        return self._call(args, kwargs)

    def forget(self) -> None:
        """Drop compiled code and what fastcache observed (called by qd.init / qd.reset: a new program observes
        afresh, as in Quadrants)."""
        self._launchers.clear()
        self._fast.clear()
        self._shared.clear()
        self.src_ll_cache_observations = SrcLlCacheObservations()
        self.fe_ll_cache_observations = FeLlCacheObservations()
        self._observed = False
        self.compiled_kernel_data_by_key.clear()
        self._last_compiled_kernel_data = None

    # ---- Quadrants' internal views of the specializations (tests and tools read them) -------------------

    @property
    def func(self) -> Callable[..., Any]:
        """The Python function (Quadrants' name for it)."""
        return self.fn

    @property
    def launch_observations(self) -> LaunchObservations:
        return LaunchObservations(self._found_compiled)

    @property
    def mapper(self) -> TemplateMapper:
        return TemplateMapper(self._launchers)

    @property
    def materialized_kernels(self) -> dict[Any, Any]:
        """The specializations compiled (or loaded) in this program: key -> launcher."""
        return {k: e for k, e in self._launchers.items() if not isinstance(e, QuadrantsCompilationError)}

    @property
    def used_py_dataclass_parameters_by_key_enforcing(self) -> dict[Any, set[str]]:
        """Per specialization, the dataclass / data_oriented members its launches pass (under Quadrants'
        flattened names): those the kernel reads, after passes/prune_args.py."""
        structs = {p.name for p in self.params if p.kind in (ParamKind.DATACLASS, ParamKind.SELF, ParamKind.TEMPLATE)}
        return {k: used_members(e.abi, structs) for k, e in self.materialized_kernels.items()}

    def launch_kernel(self, key: Any, t_kernel: Launch, compiled_kernel_data: CompiledKernelData | None,
                      *args: Any, qd_stream: Any = None) -> Any:  # fmt: skip
        """The general path's launch of specialization `key`, under Quadrants' name and parameters (programs
        and tests wrap it): `t_kernel` is the launcher with the leaves it passes, `compiled_kernel_data` the code
        `compiled_kernel_data_by_key` held for `key` before this call (None: this call compiled it), `args` the
        argument values bound to the parameters. Later calls of the same specialization take the fast path."""
        return t_kernel.run(list(args))

    def resume(self, *args: Any, from_checkpoint: Any, **kwargs: Any) -> Any:
        """Launch again from the checkpoint labelled `from_checkpoint` (a `qd.checkpoint` cp_id): the stages
        declared before it are skipped (lang/checkpoint.py)."""
        if not isinstance(from_checkpoint, int) or isinstance(from_checkpoint, bool):
            raise RuntimeError(f"kernel.resume(from_checkpoint=...) must be an int or IntEnum value (a qd.checkpoint "
                               f"cp_id), not {from_checkpoint!r}")  # fmt: skip
        return self._call(args, kwargs, resume=from_checkpoint)

    # Quadrants' records of a graph kernel's constructs (of its last compiled specialization)
    @property
    def checkpoint_user_labels_by_cp_id(self) -> list[Any]:
        return self._graph.labels

    @property
    def checkpoint_yield_on_args(self) -> list[str | None]:
        return self._graph.yield_on

    @property
    def checkpoint_yield_on_cpp_arg_ids(self) -> list[int]:
        return self._graph.yield_ids

    @property
    def graph_do_while_levels(self) -> list[DoWhileLevel]:
        return self._graph.levels

    @property
    def graph_do_while_arg(self) -> str | None:
        return self._graph.levels[0].cond_arg_name if self._graph.levels else None

    def _call(self, args: tuple[Any, ...], kwargs: dict[str, Any], resume: Any = None) -> Any:
        """The general path: specialize, find (or compile) the launcher, then run. The seconds before the run are
        `qd.stats()["stage_seconds"]["prepare"]`: quadrants' whole cost of a kernel's first calls."""
        t0 = time.perf_counter()
        prog = program.get()
        config = prog.config
        if python_backend.active():  # qd.init(arch=qd.python): nothing is compiled, the function runs as Python
            return self._run_as_python(args, kwargs, config)
        if len(prog.made_fields) != prog.checked_fields:  # fields declared since the last launch
            from quadrants.lang.snode import materialize

            materialize()
        if self._generation != prog.generation:
            self.forget()
            program.register(self)
            self._generation = prog.generation
            self._returns = self._resolve_returns(config)
        values, spec = self._specialize(args, kwargs, config, self._returns)
        entry = self._launchers.get(spec.key)
        if entry is None:
            entry = self._shared.find(spec)
        found = entry is not None
        if entry is None:
            self.materialize(spec.key, spec, values)
            entry = self._launchers[spec.key]
            self._shared.add(spec, entry)
        if isinstance(entry, MissingGradientError) and not self._passes_grads():
            self._grads_cached = True  # a func the source scan did not follow reads a `.grad`: pass them
            del self._launchers[spec.key]
            return self._call(args, kwargs, resume)
        if isinstance(entry, QuadrantsCompilationError):
            raise type(entry)(entry.message, entry.loc) from None
        data = self.compiled_kernel_data_by_key.get(spec.key)
        self.launch_stats = entry.launch_stats  # type: ignore[union-attr,attr-defined]
        LAST_CALL.tasks = entry.tasks  # type: ignore[union-attr,attr-defined]
        self._last_launch_key, self._found_compiled = spec.key, found
        leaves = entry.abi.passed(spec.leaves)  # members the kernel never reads are not passed
        checked = entry.abi.checked(spec.guards)  # type: ignore[union-attr]
        fast = entry.fast_path(len(values), leaves, checked)
        regroup = result_regrouper(self._returns)
        if fast is not None and regroup is not None:
            fast = _regrouped(fast, regroup)  # struct results: qd.Struct values
        self._fast.install(fast if fast is None or found else self._noting_found(fast), spec.key, entry, checked)
        STATS.time("prepare", time.perf_counter() - t0)
        stage = None
        if resume is not None:
            if not hasattr(entry, "on_result") or not any(n is not None for n in self._graph.yield_on):
                raise RuntimeError("`from_checkpoint=` is only valid for kernels that contain at least one "
                                   "qd.checkpoint(yield_on=...) block; this kernel has none.")  # fmt: skip
            stage = self._graph.stage_of(resume, self.fn.__name__)
        launch = Launch(entry, leaves, regroup, stage)
        return self.launch_kernel(spec.key, launch, data if found or (data and data.loaded) else None, *values)

    def materialize(self, key: Any, spec: Specialization, values: list[Any]) -> None:
        """Compile specialization `key` (or load it from a cache) into `materialized_kernels`, under Quadrants'
        name: the general path calls it on the first call of each specialization (tests wrap it to count)."""
        config = program.get().config
        if config.record:  # an adjoint / dual kernel as `name.grad` / `name.dual` (aot/record.py)
            RECORDER(config.record, self, self.params, values, config.offline_cache_file_path)  # `qd record` runs
        _warn_dataclass_templates(self, values)
        self._launchers[key] = self._compile(spec, program.get())

    def _noting_found(self, fast: Callable[..., Any]) -> Callable[..., Any]:
        """`fast`, which on its first launch notes that the launch found its code compiled (the fast path only
        ever runs compiled code), then steps aside: no cost to the calls after it."""

        def first(*args: Any) -> Any:
            r = fast(*args)
            if r is not MISS:
                self._found_compiled = True
                if self._fast.latest is first:
                    self._fast.latest = fast
            return r

        return first

    def _run_as_python(self, args: tuple[Any, ...], kwargs: dict[str, Any], config: Any) -> Any:
        """The python backend's call: the arguments bound, and scalars checked and converted, as for a compiled
        call (`x: qd.f32` given 0.1 sees 0.1 rounded to f32; a float for an `i32` is refused), then the function
        itself (a tensor passed for a scalar, an element of a field, is passed as it is). A scalar result is a
        Python number of the declared type, as a compiled kernel's is."""
        values = self._bind(self.params, args, kwargs)
        for k, p in enumerate(self.params):
            if p.kind is ParamKind.SCALAR and not python_backend.is_tensor(values[k]):
                prim = to_dtype(p.annotation, config.default_ip, config.default_fp)
                values[k] = prim(scalar_arg(values[k], prim, p.name))
        result = self.fn(*values)
        returns = self._resolve_returns(config)
        if len(returns) == 1 and isinstance(returns[0], PrimitiveType) and not isinstance(result, (tuple, list)):
            return returns[0](result)
        return result

    def _resolve_returns(self, config: Any) -> tuple[Any, ...]:
        raw = ann.return_types(
            ann.resolve(self.fn.__annotations__.get("return"), self.fn.__globals__, self._def_locals),
            config.default_ip,
            config.default_fp,
        )
        return tuple(
            MatrixType(r.shape, r.resolve(config.default_ip, config.default_fp)) if isinstance(r, MatrixType)
            else r.resolve(config.default_ip, config.default_fp) if isinstance(r, StructType)
            else r
            for r in raw
        )  # fmt: skip

    def request(self, spec: Specialization, config: Any, returns: tuple[Any, ...] | None = None) -> CallRequest:
        """What the driver needs to find or compile `spec` under `config`."""
        return CallRequest(self, spec, config, self._resolve_returns(config) if returns is None else returns)

    def precompile(self, args: tuple[Any, ...], kwargs: dict[str, Any], driver: Any) -> Any:
        """Compile the specialization `args` select with `driver` (a `quadrants.driver.Driver`), or find it in its
        cache, without running anything; returns the pipeline's `Outcome`. `qd precompile` calls this."""
        return driver.obtain(self.request(self.specialize(args, kwargs, driver.config), driver.config))

    def probe(self, args: tuple[Any, ...], kwargs: dict[str, Any], driver: Any) -> tuple[str | None, str | None]:
        """Whether a fresh process would find this call's code in `driver`'s cache without compiling: (fastcache
        key or None, None if found else why not). A kernel without fastcache runs the frontend to find its
        offline key."""
        return driver.probe(self.request(self.specialize(args, kwargs, driver.config), driver.config))

    def specialize(self, args: tuple[Any, ...], kwargs: dict[str, Any], config: Any) -> Specialization:
        """The specialization a call with these arguments selects under `config` (what its keys are made of)."""
        return self._specialize(tuple(args), dict(kwargs), config, self._resolve_returns(config))[1]

    def _specialize(
        self, args: tuple[Any, ...], kwargs: dict[str, Any], config: Any, returns: tuple[Any, ...]
    ) -> tuple[list[Any], Specialization]:
        """The call's argument values (bound to the parameters) and the specialization they select."""
        params = self.params
        values = self._bind(params, args, kwargs)
        try:
            spec = Specializer(self.fn.__qualname__, config.default_ip, config.default_fp,
                               self._passes_grads).specialize(params, values)  # fmt: skip
        except (QuadrantsRuntimeTypeError, QuadrantsSyntaxError) as e:
            raise type(e)(e.message, e.loc or self.def_loc()) from None
        spec.returns = returns
        return values, spec

    def _passes_grads(self) -> bool:
        """Whether ndarray arguments pass their `.grad` as hidden arguments: for the adjoint, and for a kernel
        whose source, or a func it calls, reads a `.grad` (frontend/grad_reads.py; a primal that does not keeps
        the signature a manifest writes, so a precompiled program whose ndarrays have grads still hits)."""
        cached = getattr(self, "_grads_cached", None)
        if cached is None:
            from quadrants.frontend.grad_reads import reads_grad

            cached = self._grads_cached = self.mode == "reverse" or reads_grad(self.fn)
        return bool(cached)

    def _compile(self, spec: Specialization, prog: program.Program) -> Launcher | QuadrantsCompilationError:
        from quadrants.driver import driver_for

        driver = driver_for(prog)
        try:
            outcome = driver.obtain(self.request(spec, prog.config, self._returns))
        except QuadrantsCompilationError as e:
            return e
        if not self._observed:
            self._observed = True
            obs = self.src_ll_cache_observations
            obs.cache_key_generated, obs.cache_validated = outcome.key_generated, outcome.validated
            obs.cache_loaded, obs.cache_stored = outcome.loaded and outcome.validated, outcome.stored
        if outcome.offline_hit:
            self.fe_ll_cache_observations.cache_hit = True
        art = outcome.artifact
        assert art.loaded is not None  # this process's driver loads what it finds
        launcher: Launcher = driver.backend.launcher(art.abi, art.loaded, prog)
        launcher.compiled = art.compiled  # type: ignore[attr-defined]
        launcher.launch_stats = launch_stats(art.abi.args)  # type: ignore[attr-defined]
        data = CompiledKernelData(art.offline_key, art.abi, outcome.loaded and outcome.validated)
        self.compiled_kernel_data_by_key[spec.key] = self._last_compiled_kernel_data = data
        launcher.locate = self._locate_site
        # errors name the kernel as the program does (`Sim.step`), not by its symbol or the enclosing functions
        launcher.kernel_name = self.fn.__qualname__.rsplit("<locals>.", 1)[-1]
        launcher.tasks = art.abi.tasks  # type: ignore[attr-defined]
        self._graph = records = GraphRecords.from_abi(art.abi.graph)
        if art.abi.graph is not None and art.abi.graph.resume >= 0:  # checkpoints: a resume argument, a status
            from quadrants.runtime.checkpoints import CheckpointLauncher

            return CheckpointLauncher(launcher, records.status)  # type: ignore[return-value]
        return launcher

    def _locate_site(self, site: Any) -> SourceLoc | None:
        """Where a check site's line is in this process: the code may come from a cache filled when the kernel
        sat elsewhere (other lines above it, another file with the same kernel). None: keep the recorded place."""
        import linecache

        from quadrants.cache.source import resolve_name

        if site.offset < 0:
            return None
        fn = self.fn if site.owner == "" else resolve_name(site.owner)
        code = getattr(fn, "__code__", None)
        if code is None:
            return None
        lineno = code.co_firstlineno + site.offset
        text = linecache.getline(code.co_filename, lineno) or site.line_text
        return SourceLoc(code.co_filename, lineno, site.col, lineno, site.end_col, text, site.func_name)

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
        return read_params(self.fn, self._def_locals, self.def_loc)

    def _bind(self, params: list[Param], args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[Any]:
        return bind(params, args, kwargs, self.fn.__qualname__, self.def_loc)


def _warn_dataclass_templates(kernel: Kernel, values: list[Any]) -> None:
    """A plain dataclass passed to a template parameter: deprecated in Quadrants (the dataclass type is the
    annotation to use), which warns once per specialization, as here (on the first call that compiles it)."""
    for p, v in zip(kernel.params, values):
        if p.kind is ParamKind.TEMPLATE and dataclasses.is_dataclass(v) and not isinstance(v, type):
            if is_data_oriented(v):
                continue
            name = kernel.fn.__name__
            warnings.warn(
                f"Kernel {kernel.fn.__qualname__!r} parameter {p.name!r}: passing a @dataclasses.dataclass instance "
                "into a qd.Template-annotated kernel parameter was never intended to be supported, and only works "
                f"inadvertently. Use the dataclass type itself as the annotation instead (e.g. `def {name}({p.name}: "
                f"{type(v).__name__}, ...)`). In a future release this will become an error.",
                DeprecationWarning,
                stacklevel=5,
            )


class BoundKernel:
    """A data_oriented kernel bound to its instance."""

    __qd_kernel__ = True
    __slots__ = ("kernel", "obj")

    def __init__(self, kernel: Kernel, obj: Any) -> None:
        self.kernel = kernel
        self.obj = obj

    @property
    def _primal(self) -> Kernel:
        return self.kernel

    @property
    def grad(self) -> BoundKernel:
        return BoundKernel(self.kernel.grad, self.obj)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.kernel(self.obj, *args, **kwargs)

    def resume(self, *args: Any, from_checkpoint: Any, **kwargs: Any) -> Any:
        return self.kernel.resume(self.obj, *args, from_checkpoint=from_checkpoint, **kwargs)


def kernel(fn: Callable[..., Any] | None = None, *, fastcache: bool = False, pure: bool | None = None,
           gpu_graph: bool = False, graph: bool = False, checkpoints: bool = False) -> Any:  # fmt: skip
    """Decorator: `@qd.kernel` or `@qd.kernel(fastcache=True)`. `graph=True` (and its older name `gpu_graph`:
    Quadrants captures such a kernel's launches into a CUDA graph) allows the graph constructs (`qd.graph.*`,
    frontend/graph.py); its loops launch one by one, in order, on every backend (as 1.3.3 does on the CPU).
    `checkpoints=True` (with graph=True) makes the kernel's stages `qd.checkpoint`s: a call returns a
    `qd.GraphStatus`, `kernel.resume(...)` starts from a stage. Both flags are in the fastcache key."""
    if checkpoints and not (graph or gpu_graph):
        raise QuadrantsSyntaxError("@qd.kernel(checkpoints=True) requires graph=True: the pause / resume model only "
                                   "applies to graph kernels (use @qd.kernel(graph=True, checkpoints=True))")  # fmt: skip
    if pure is not None:
        fastcache = fastcache or pure
    if fn is not None and getattr(fn, "is_pure", False):  # @qd.kernel over @qd.pure
        fastcache = True

    frame = sys._getframe(1)
    def_locals = dict(frame.f_locals) if frame.f_code.co_name != "<module>" else None

    def wrap(f: Callable[..., Any]) -> Kernel:
        refuse_registered(f)
        if graph or gpu_graph:  # the frontend reads the flags (frontend/graph_state.kernel_flags)
            f.__qd_graph__ = True  # type: ignore[attr-defined]
        if checkpoints:
            f.__qd_checkpoints__ = True  # type: ignore[attr-defined]
        return Kernel(f, fastcache=fastcache, def_locals=def_locals)

    return wrap(fn) if fn is not None else wrap


@dataclass(frozen=True)
class Launch:
    """A general-path launch: the launcher, the leaves it passes and the regrouping of struct results."""

    entry: Any  # runtime.launch.Launcher, a CUDA launcher or a CheckpointLauncher
    leaves: list[Any]
    regroup: Callable[[Any], Any] | None
    resume: int | None = None  # a checkpoints kernel's `kernel.resume(...)`: the stage to start from

    def run(self, values: list[Any]) -> Any:
        if self.resume is not None:
            r = self.entry.call(values, self.leaves, resume=self.resume)
        else:
            r = self.entry.call(values, self.leaves)
        return r if self.regroup is None else self.regroup(r)


def _regrouped(fast: Callable[..., Any], regroup: Callable[[Any], Any]) -> Callable[..., Any]:
    def call(*args: Any) -> Any:
        r = fast(*args)
        return r if r is MISS else regroup(r)

    return call
