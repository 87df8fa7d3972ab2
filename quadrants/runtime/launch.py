"""Call a loaded kernel from Python.

Consumes a `KernelABI`, a `Loaded` entry address and the specialization's leaves (where each native argument
comes from in the Python arguments) and guards (the compiled-in values); produces a `Launcher`.
`Launcher.call(values)` is the general path; `Launcher.fast_path()` generates a small Python function for this
specialization that the kernel object tries first on later calls: identity checks, one attribute read per
ndarray, one ctypes call (under a microsecond in all).

Threads: the runtime context (error reports) and the result slots are per calling thread. The thread that
made the launcher uses the ones the fast path has bound in; any other thread gets its own on first use, so
concurrent calls never read each other's results or errors. A kernel with no results and no checks compiled
in never writes its context: its fast path skips the thread check.
"""

from __future__ import annotations

import ctypes
import functools
import json
import struct
import sys
import threading
import types
from collections.abc import Callable
from typing import Any

import numpy as np

from quadrants.errors import (
    QuadrantsArgumentValueError,
    QuadrantsAssertionError,
    QuadrantsIndexError,
    QuadrantsRuntimeError,
    QuadrantsRuntimeTypeError,
    SourceLoc,
)
from quadrants.runtime.abi import CTYPES, KernelABI, SiteABI, packs_args
from quadrants.runtime.context import ERROR_BOUNDS, ERROR_POOL, RESULT_SLOT_BYTES, RuntimeContext
from quadrants.runtime.leaves import (
    ElementLeaf,
    ExternalLeaf,
    Guard,
    GuardKind,
    Leaf,
    NdarrayLeaf,
    NumpyLeaf,
    ScalarLeaf,
    is_torch_tensor,
)
from quadrants.runtime.loader import Loaded
from quadrants.runtime.ndarray import descriptor, ndarray_class
from quadrants.runtime.random_state import RandomState
from quadrants.types import dtypes

MISS = object()  # returned by a fast path that does not apply to the arguments it was given
_PROTOTYPES: dict[tuple[Any, ...], Any] = {}  # ctypes function types by argument types (kernels share them)


class CallState:
    """One calling thread's runtime context and result slots, and the reader of its return value."""

    __slots__ = ("ctx", "ctx_addr", "result", "results", "warned")

    def __init__(self, ctx: RuntimeContext, ctx_addr: int, result: ctypes.Array, results: Callable[[], Any],  # type: ignore[type-arg]
                 warned: Any = None) -> None:  # fmt: skip
        self.ctx = ctx
        self.ctx_addr = ctx_addr
        self.result = result
        self.results = results
        self.warned = warned  # the flags of the non-fatal check sites (ctx.warned points here), or None


class Launcher:
    def __init__(self, abi: KernelABI, loaded: Loaded, num_threads: int, regions_table: int = 0,
                 make_matrix: Callable[[np.ndarray], Any] = np.asarray, rand: RandomState | None = None) -> None:  # fmt: skip
        self.abi = abi
        self.loaded = loaded
        self.rand = rand if rand is not None else RandomState()
        argtypes = (ctypes.c_void_p,) + tuple(ctypes.c_void_p if a.kind == "ndarray" else CTYPES[a.prim] for a in abi.args)
        if abi.random:
            argtypes += (ctypes.c_uint64, ctypes.c_uint64)  # the seed and the launch number
        self._packing: str | None = None  # the struct format of the argument slots of a packed kernel
        if packs_args(len(argtypes) - 1):  # (the random arguments count too)
            self._packing = "".join(f"{t._type_}{(-ctypes.sizeof(t)) % 8}x" for t in argtypes[1:])
            argtypes = (ctypes.c_void_p, ctypes.c_void_p)
        proto = _PROTOTYPES.get(argtypes)
        if proto is None:
            proto = _PROTOTYPES[argtypes] = ctypes.CFUNCTYPE(ctypes.c_int32, *argtypes)
        self.cfunc = proto(loaded.address)
        self._num_threads = num_threads
        self._regions = regions_table
        self._make_matrix = make_matrix
        self.overflow_sites = tuple(k for k, s in enumerate(abi.sites) if s.kind == "overflow")
        self._owner = threading.get_ident()
        self._local = threading.local()
        self.main = self._new_state()
        self.locate: Callable[[Any], SourceLoc | None] | None = None  # a check site -> where its line is now
        self.kernel_name = abi.symbol  # what errors call the kernel: the kernel object sets its Python name

    def _new_state(self) -> CallState:
        ctx = RuntimeContext()
        ctx.num_threads = self._num_threads
        ctx.regions = self._regions
        result = ctypes.create_string_buffer(max(1, len(self.abi.rets)) * RESULT_SLOT_BYTES)
        ctx.result = ctypes.addressof(result)
        warned = (ctypes.c_uint8 * len(self.abi.sites))() if self.overflow_sites else None
        ctx.warned = ctypes.addressof(warned) if warned is not None else None
        reader = self._results_reader(result, self._make_matrix)
        return CallState(ctx, ctypes.addressof(ctx), result, reader, warned)

    def state(self) -> CallState:
        """The calling thread's context and result slots."""
        if threading.get_ident() == self._owner:
            return self.main
        st: CallState | None = getattr(self._local, "state", None)
        if st is None:
            st = self._local.state = self._new_state()
        return st

    def _results_reader(self, buf: ctypes.Array, make_matrix: Callable[[np.ndarray], Any]) -> Callable[[], Any]:  # type: ignore[type-arg]
        """A function returning the kernel's return value, read from the result slots in `buf`."""
        abi = self.abi
        readers = [_reader(buf, k, dtypes.BY_NAME[r]) for k, r in enumerate(abi.rets)]
        rets = [dtypes.BY_NAME[r] for r in abi.rets]
        return _result_builder(readers, rets, abi.ret_shapes or tuple(() for _ in abi.rets), make_matrix)

    # ---- general path -----------------------------------------------------------------------------------

    def call(self, values: list[Any], leaves: list[Leaf]) -> Any:
        """Marshal the kernel's argument `values` (already validated by specialization) and run it. `leaves`
        say where each native argument comes from (one per ABI argument)."""
        if len(leaves) != len(self.abi.args):
            raise ValueError(f"{len(leaves)} argument leaves for {len(self.abi.args)} native arguments")
        st = self.state()
        call_args: list[Any] = [st.ctx_addr]
        keep: list[Any] = []
        writeback: list[tuple[np.ndarray, np.ndarray]] = []
        flat: dict[tuple[Any, ...], list[Any]] = {}
        for leaf, spec in zip(leaves, self.abi.args):
            v = _walk(values, leaf.path)
            if isinstance(leaf, ScalarLeaf):
                call_args.append(scalar_arg(v, spec.prim, spec.name, leaf.wrap))
            elif isinstance(leaf, ElementLeaf):
                if leaf.path not in flat:
                    flat[leaf.path] = _flatten(v)
                call_args.append(scalar_arg(flat[leaf.path][leaf.index], spec.prim, spec.name, leaf.wrap))
            elif isinstance(leaf, NdarrayLeaf):
                call_args.append(getattr(v, "_unwrap", lambda v=v: v)()._desc)
            else:  # numpy, torch
                arr = external_array(getattr(v, "_unwrap", lambda v=v: v)())
                check_external(arr, spec)
                if not arr.flags.c_contiguous:
                    tmp = np.ascontiguousarray(arr)
                    if spec.writes:
                        writeback.append((arr, tmp))
                    arr = tmp
                d = descriptor(arr.ctypes.data, arr.shape[: spec.ndim])
                keep.append((arr, d))
                call_args.append(ctypes.addressof(d))
        if self.abi.random:
            call_args += [self.rand.seed, self.rand.next_launch()]
        if self.abi.has_print:
            sys.stdout.flush()
        if self._packing is not None:  # one buffer of 8-byte slots
            slots = ctypes.create_string_buffer(struct.pack(self._packing, *call_args[1:]), 8 * (len(call_args) - 1))
            call_args = [call_args[0], ctypes.addressof(slots)]
        rc = self.cfunc(*call_args)
        for orig, tmp in writeback:
            orig[...] = tmp
        if st.warned is not None:
            self.report_overflows(st.warned)
        if rc:
            self.raise_error(rc, st.ctx)
        return st.results()

    def site_loc(self, site: SiteABI) -> SourceLoc:
        """Where a check site's line is now (found again in this process), else where it was compiled."""
        loc = self.locate(site) if self.locate is not None else None
        if loc is None:
            loc = SourceLoc(site.filename, site.lineno, site.col, site.lineno, site.end_col, site.line_text,
                            site.func_name)  # fmt: skip
        return loc

    def report_overflows(self, warned: Any = None) -> None:
        """Print Quadrants' warning for each overflow site a launch flagged in `warned` (one byte per site; the
        owner thread's by default) and clear the flags. Printed to stdout, as the kernel's own printf would."""
        warned = warned if warned is not None else self.main.warned
        for k in self.overflow_sites:
            if warned[k]:
                warned[k] = 0
                site = self.abi.sites[k]
                sys.stdout.write(f"{site.detail} overflow detected in {self.site_loc(site).render()}\n\n")
        sys.stdout.flush()

    def raise_error(self, rc: int, ctx: RuntimeContext | None = None) -> None:
        """Raise the error the kernel reported in `ctx` (the owner thread's by default)."""
        ctx = ctx if ctx is not None else self.main.ctx
        site_index, index, dim, extent = ctx.site, ctx.index, ctx.dim, ctx.extent
        ctx.error = 0
        site = self.abi.sites[site_index] if 0 <= site_index < len(self.abi.sites) else None
        loc = self.site_loc(site) if site is not None else None
        if rc == ERROR_BOUNDS:
            what = f"'{site.detail}'" if site is not None else "an ndarray"
            raise QuadrantsIndexError(
                f"Out of bound access: index {index} is out of bounds for axis {dim} with size {extent} of {what} "
                f"(kernel {self.kernel_name!r})",
                loc,
            )
        detail = site.detail if site is not None else ""
        if rc == ERROR_POOL:  # `extent`: the arena's bytes, 0 where pools map chunks (codegen/sparse_pool.py)
            full = f"its tree's pool of {extent} bytes is full" if extent else "the system refused a new chunk (mmap)"
            raise QuadrantsRuntimeError(
                f"Sparse SNode pool exhausted: '{detail}' needs a new cell and {full} (kernel {self.kernel_name!r}); "
                "qd.init(device_memory_GB=...) sizes a tree's pool on the CUDA backend, deactivating cells recycles "
                "them" + (f"\n{loc.render()}" if loc is not None else "")
            )
        if site is not None and site.kind == "adstack":  # a full stack of a reverse-mode kernel
            raise QuadrantsAssertionError(f"Adstack overflow: {detail} (capacity {extent})", loc)
        if site is not None and site.kind == "matrix_bounds":  # Quadrants' words
            raise QuadrantsAssertionError(f"Out of bound access to a {detail} matrix with index [{index}]", loc)
        if site is not None and site.kind == "formatted":  # a message with %d for the index and the two values
            raise QuadrantsAssertionError(_formatted(detail, (index, dim, extent)), loc)
        if site is not None and site.kind == "message":  # an assert's message with run-time values
            raise QuadrantsAssertionError(_message(detail, (index, dim, extent)), loc)
        raise QuadrantsAssertionError(f"assertion failed: {detail}", loc)

    # ---- fast path --------------------------------------------------------------------------------------

    def fast_path(self, nparams: int, leaves: list[Leaf], guards: list[Guard]) -> Callable[..., Any] | None:
        """A function of the kernel's `nparams` arguments that launches directly when they still match the
        specialization `leaves`/`guards` describe (guards hold, ndarrays of the same kinds and types), and
        returns MISS otherwise."""
        env: dict[str, Any] = {"CALL": self.cfunc, "CTX": self.main.ctx_addr, "MISS": MISS,
                               "ELEMS": _elements, "NP": np.ndarray, "NPDESC": _numpy_descriptor, "RAISE": self.raise_error,
                               "ArgumentError": ctypes.ArgumentError, "StructError": struct.error, "FLUSH": sys.stdout.flush,
                               "FLAT": _flatten, "RESULTS": self.main.results, "TID": threading.get_ident,
                               "OWNER": self._owner, "OTHER": lambda *a: self.call(list(a), leaves),
                               "SEED": self.rand.seed, "LAUNCH": self.rand.next_launch,
                               "WARNED": self.report_overflows}  # fmt: skip
        checks: list[str] = []
        pre: list[str] = []
        ranges: list[str] = []  # integer arguments within their type's range (else the general path explains)
        call: list[str] = ["CTX"]
        flats: dict[tuple[Any, ...], str] = {}
        for k, g in enumerate(guards):
            acc = _accessor(g.path)
            if acc is None:
                return None
            if g.kind is GuardKind.ALIAS:  # the same object as an enclosing struct
                target = _accessor(g.value)
                if target is None:
                    return None
                checks.append(f"{acc} is {target}")
                continue
            env[f"G{k}"], env[f"GT{k}"] = g.value, type(g.value)
            if g.kind is GuardKind.MATRIX:  # its elements as Python numbers, listed once
                env[f"GL{k}"] = _elements(g.value)
            checks.append(_GUARD_CHECKS[g.kind](acc, k))
        for k, (leaf, spec) in enumerate(zip(leaves, self.abi.args)):
            acc = _accessor(leaf.path)
            if acc is None:
                return None
            if isinstance(leaf, ScalarLeaf):
                value = acc
            elif isinstance(leaf, ElementLeaf):
                if leaf.path not in flats:
                    flats[leaf.path] = f"e{len(flats)}"
                    pre.append(f"{flats[leaf.path]} = FLAT({acc})")
                value = f"{flats[leaf.path]}[{leaf.index}]"
            elif isinstance(leaf, NdarrayLeaf):
                env[f"S{k}"], env[f"N{k}"] = leaf.nd, ndarray_class(leaf.nd.elem_shape)
                checks.append(f"{acc}.__class__ is N{k} and {acc}._spec is S{k}")
                call.append(f"{acc}._desc")
                continue
            elif isinstance(leaf, NumpyLeaf):
                ndim, elem_shape = leaf.ndim, leaf.nd.elem_shape
                env[f"D{k}"] = leaf.np_dtype
                checks.append(f"{acc}.__class__ is NP and {acc}.dtype == D{k} and {acc}.ndim == {ndim + len(elem_shape)}")
                _array_leaf(k, acc, acc, ndim, elem_shape, spec.writes, env, checks, pre, call)
                continue
            elif isinstance(leaf, ExternalLeaf) and "torch" in sys.modules and leaf.path[-1:] != ("grad",):
                # a CPU torch tensor without a gradient to pass: a numpy view of it, as the general path takes
                torch = sys.modules["torch"]
                ndim, elem_shape = leaf.nd.ndim, leaf.nd.elem_shape
                env["TT"], env["TNP"] = torch.Tensor, _torch_numpy
                env[f"TD{k}"] = torch.from_numpy(np.zeros(0, leaf.dtype.np_dtype)).dtype
                checks.append(f"isinstance({acc}, TT) and {acc}.dtype is TD{k} and {acc}.dim() == "
                              f"{ndim + len(elem_shape)} and {acc}.device.type == 'cpu'")  # fmt: skip
                if leaf.dtype.is_float:  # a tensor that needs its gradient passed takes the general path
                    checks.append(f"not {acc}.requires_grad")
                _array_leaf(k, acc, f"TNP({acc})", ndim, elem_shape, spec.writes, env, checks, pre, call)
                continue
            else:  # another array type, or a tensor with a gradient: the general path marshals it
                return None
            call.append(value)
            lo_hi = int_range(spec.prim)
            if lo_hi is not None and leaf.wrap:  # ctypes keeps the low bits: the wrap the general path does
                ranges.append(f"{value}.__class__ is int")
            elif lo_hi is not None:
                ranges.append(f"{lo_hi[0]} <= {value} <= {lo_hi[1]}")
        if self.abi.random:
            call += ["SEED", "LAUNCH()"]
        names = ", ".join(f"a{i}" for i in range(nparams))
        lines = [f"def fast({names}):", f"    if not ({' and '.join(checks) or 'True'}):", "        return MISS"]
        if self.abi.rets or len(self.abi.sites):  # the kernel writes results or errors into its context
            lines += ["    if TID() != OWNER:", f"        return OTHER({names})"]
        lines += [f"    {p}" for p in pre]
        if ranges:
            lines += [f"    if not ({' and '.join(ranges)}):", "        return MISS"]
        if self.abi.has_print:
            lines.append("    FLUSH()")
        lines += [
            "    try:",
            *self._call_lines(call, env),
            "    except (ArgumentError, StructError):",
            "        return MISS",
            *(["    WARNED()"] if self.overflow_sites else []),
            "    if rc:",
            "        RAISE(rc)",
            "    return RESULTS()",
        ]
        return _make_function("\n".join(lines), env)


    def _call_lines(self, call: list[str], env: dict[str, Any]) -> list[str]:
        """The fast path's native call of the argument expressions `call` (the context first): direct, or through
        a new buffer of 8-byte slots for a kernel of packed arguments (a new one per call: threads may share a
        fast path)."""
        if self._packing is None:
            return [f"        rc = CALL({', '.join(call)})"]
        packer = struct.Struct(self._packing)
        env["PACK"], env["ADDR"] = packer.pack_into, ctypes.addressof
        env["NEWBUF"] = functools.partial(ctypes.create_string_buffer, packer.size)
        return ["        b = NEWBUF()", f"        PACK(b, 0, {', '.join(call[1:])})", f"        rc = CALL({call[0]}, ADDR(b))"]


# The fast path's check of guard number k on the value at `acc` (the guarded value is bound to G<k>, its class
# to GT<k>).
_GUARD_CHECKS: dict[GuardKind, Callable[[str, int], str]] = {
    GuardKind.CLASS: lambda acc, k: f"{acc}.__class__ is G{k}",
    GuardKind.IDENTITY: lambda acc, k: f"{acc} is G{k}",
    GuardKind.MATRIX: lambda acc, k: f"{acc}.__class__ is GT{k} and ELEMS({acc}) == GL{k}",  # a snapshot: elements
    GuardKind.VALUE: lambda acc, k: f"{acc}.__class__ is GT{k} and {acc} == G{k}",
}


def _array_leaf(k: int, acc: str, as_numpy: str, ndim: int, elem_shape: tuple[int, ...], writes: bool,
                env: dict[str, Any], checks: list[str], pre: list[str], call: list[str]) -> None:  # fmt: skip
    """A fast path's external array argument `k` (at `acc`; `as_numpy` its numpy view): its element shape checked,
    its descriptor made before the call (a miss where the general path must copy it)."""
    if elem_shape:
        env[f"E{k}"] = elem_shape
        checks.append(f"tuple({acc}.shape[{ndim}:]) == E{k}")
    pre += [f"d{k} = NPDESC({as_numpy}, {ndim}, {writes})", f"if d{k} is None: return MISS"]
    call.append(f"d{k}")


def _torch_numpy(t: Any) -> np.ndarray:
    """A CPU torch tensor's numpy view (torch's own detach: a subclass may override it with a copy)."""
    return sys.modules["torch"].Tensor.detach(t).numpy()  # type: ignore[no-any-return]


def _elements(a: Any) -> list[Any]:
    """A Python-scope vector/matrix's (or numpy array's) elements as nested lists of Python numbers: a matrix
    guard holds when they equal the snapshot's (as numpy's array_equal judges: shape and values, 1 == 1.0), a
    list comparison ~20x cheaper than array_equal (Genesis' MPM kernels check ~60 such members per launch)."""
    arr = getattr(a, "_arr", None)
    return (arr if isinstance(arr, np.ndarray) else np.asarray(a)).tolist()  # type: ignore[no-any-return]


_FAST_CODE: dict[str, types.CodeType] = {}


def _make_function(source: str, env: dict[str, Any]) -> Callable[..., Any]:
    """Compile generated source once per distinct text (kernels of one shape share it): a new kernel costs a
    function object, not a compile."""
    code = _FAST_CODE.get(source)
    if code is None:
        module_code = compile(source, "<quadrants fast path>", "exec")
        code = next(c for c in module_code.co_consts if isinstance(c, types.CodeType))
        _FAST_CODE[source] = code
    return types.FunctionType(code, env)


def _accessor(path: tuple[Any, ...]) -> str | None:
    parts = [f"a{path[0]}"]
    for p in path[1:]:
        if not (isinstance(p, str) and p.isidentifier()):
            return None
        parts.append(p)
    return ".".join(parts)


def _walk(values: list[Any], path: tuple[Any, ...]) -> Any:
    v = values[path[0]]
    for attr in path[1:]:
        v = getattr(v, attr)
    return v


def _flatten(v: Any) -> list[Any]:
    arr = getattr(v, "_arr", None)
    return (arr if arr is not None else np.asarray(v)).reshape(-1).tolist()  # type: ignore[no-any-return]


def _numpy_descriptor(arr: np.ndarray, ndim: int, writes: bool) -> Any:
    flags = arr.flags
    if not flags.c_contiguous or (writes and not flags.writeable):
        return None
    shape = arr.shape[:ndim]
    # no dimension is 2**31 or more when the size is below it (and not 0): one comparison on the common path
    if not 0 < arr.size < SHAPE_LIMIT and any(n >= SHAPE_LIMIT for n in shape):
        return None  # the general path refuses it, naming the parameter
    return descriptor(arr.ctypes.data, shape)


# Kernels read `x.shape[k]` as an i32, as Quadrants does (and qd.ndarray refuses longer dimensions): an external
# array with a longer dimension is refused rather than read truncated (a loop over it would run no iteration).
SHAPE_LIMIT = 2**31


def shape_beyond_i32(name: str, shape: tuple[int, ...]) -> str | None:
    """Why an external array (numpy, torch) of indexed dimensions `shape` cannot be argument `name`, or None."""
    for axis, n in enumerate(shape):
        if n >= SHAPE_LIMIT:
            return (f"Invalid value for argument {name} - dimension {axis} of the array is {n}, but kernels read "
                    f"x.shape[{axis}] as i32: every indexed dimension must be below 2**31 (split the array, or view "
                    "it with more dimensions)")  # fmt: skip
    return None


def check_external(arr: np.ndarray, spec: Any) -> None:
    """A numpy array or tensor argument fits the compiled kernel: its element shape, and writable where the
    kernel stores to it, and indexed dimensions a kernel reads whole."""
    too_long = shape_beyond_i32(spec.name, tuple(arr.shape[: spec.ndim]))
    if too_long is not None:
        raise QuadrantsArgumentValueError(too_long)
    if spec.elem_shape and tuple(arr.shape[spec.ndim :]) != tuple(spec.elem_shape):
        raise QuadrantsRuntimeTypeError(
            f"Invalid value for argument {spec.name} - required element_shape={tuple(spec.elem_shape)}, array with "
            f"element shape of {tuple(arr.shape[spec.ndim :])} is provided"
        )
    if spec.writes and not arr.flags.writeable:
        raise QuadrantsRuntimeTypeError(
            f"argument {spec.name!r} is a read-only array, but the kernel writes to it "
            "(pass a writable array, e.g. a copy)"
        )


def int_range(t: Any) -> tuple[int, int] | None:
    """(min, max) of an integer type, None for floats and bool."""
    if t.is_float or t is dtypes.u1:
        return None
    return t.min_max()  # type: ignore[no-any-return]


def external_array(a: Any) -> np.ndarray:
    """A numpy view (no copy) of an external array argument: numpy, or a CPU torch tensor."""
    if isinstance(a, np.ndarray):
        return a
    if is_torch_tensor(a):
        if getattr(a.device, "type", "cpu") != "cpu":
            raise QuadrantsRuntimeTypeError(f"a torch tensor on {a.device} cannot be used by CPU kernels")
        # torch's own detach: a subclass may override it with a copy (Genesis' gs.Tensor clones), and the
        # kernel must write the caller's memory
        return sys.modules["torch"].Tensor.detach(a).numpy()  # type: ignore[no-any-return]
    return np.asarray(a)


def scalar_arg(a: Any, dtype: Any, name: str, wrap: bool = False) -> Any:
    if dtype.is_float:
        if isinstance(a, (bool, np.bool_)) or not isinstance(a, (int, float, np.integer, np.floating)):
            raise QuadrantsRuntimeTypeError(
                f"Argument {name!r} (type={type(a)}) cannot be converted into required type {dtype}"
            )
        return float(a)
    if isinstance(a, (float, np.floating)) or not isinstance(a, (int, np.integer, bool, np.bool_)):
        raise QuadrantsRuntimeTypeError(
            f"Argument {name!r} (type={type(a)}) cannot be converted into required type {dtype}"
        )
    v = int(a)
    lo_hi = int_range(dtype)
    if lo_hi is not None and wrap:
        span = lo_hi[1] - lo_hi[0] + 1
        return (v - lo_hi[0]) % span + lo_hi[0]
    if lo_hi is not None and not lo_hi[0] <= v <= lo_hi[1]:
        raise QuadrantsRuntimeTypeError(
            f"Argument {name!r} = {v} is out of range for {dtype} [{lo_hi[0]}, {lo_hi[1]}]"
        )
    return v


def _reader(buf: ctypes.Array, slot: int, t: Any) -> Callable[[], Any]:  # type: ignore[type-arg]
    offset = slot * RESULT_SLOT_BYTES
    if t is dtypes.f16:
        view = ctypes.c_uint16.from_buffer(buf, offset)
        return lambda: float(np.uint16(view.value).view(np.float16))
    if t is dtypes.u1:
        view8 = ctypes.c_uint8.from_buffer(buf, offset)
        return lambda: int(view8.value != 0)
    cview = CTYPES[t].from_buffer(buf, offset)
    if t.is_float:
        return lambda: float(cview.value)
    return lambda: int(cview.value)


def _result_builder(readers: list[Callable[[], Any]], rets: list[Any], shapes: tuple[tuple[int, ...], ...],
                    make_matrix: Callable[[np.ndarray], Any]) -> Callable[[], Any]:  # fmt: skip
    """How to turn the flat result slots into the kernel's return value (None, a scalar, a vector/matrix made by
    `make_matrix`, or a tuple of those)."""
    if not readers:
        return lambda: None
    if len(shapes) == 1 and shapes[0] == ():
        return readers[0]
    parts: list[Callable[[], Any]] = []
    k = 0
    for shape in shapes:
        count = int(np.prod(shape)) if shape else 1
        rs = readers[k : k + count]
        if not shape:
            parts.append(rs[0])
        else:
            parts.append(_matrix_result(rs, rets[k].np_dtype, shape, make_matrix))
        k += count
    if len(parts) == 1:
        return parts[0]
    return lambda: tuple(p() for p in parts)


def _matrix_result(readers: list[Callable[[], Any]], dtype: Any, shape: tuple[int, ...],
                   make_matrix: Callable[[np.ndarray], Any]) -> Callable[[], Any]:  # fmt: skip
    return lambda: make_matrix(np.array([r() for r in readers], dtype=dtype).reshape(shape))


def _message(detail: str, raw: tuple[int, ...]) -> str:
    """A "message" site's text (frontend/assert_message.py): its template formatted with the recorded values, each
    an i64 that is an integer ("i") or the bits of an f64 ("f")."""
    site = json.loads(detail)
    values = [float(np.int64(r).view(np.float64)) if kind == "f" else int(r) for kind, r in zip(site["kinds"], raw)]
    try:
        return str(site["format"]).format(*values)
    except (ValueError, IndexError, KeyError):
        return str(site["format"])


def _formatted(detail: str, values: tuple[int, ...]) -> str:
    """A "formatted" check site's message: its `%d`s replaced by the values the failed check recorded."""
    n = detail.count("%d")
    try:
        return detail % values[:n]
    except (TypeError, ValueError):
        return detail
