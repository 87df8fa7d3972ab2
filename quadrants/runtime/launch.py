"""Call a loaded kernel from Python.

Consumes a `KernelABI` and a `Loaded` entry address; produces a `Launcher`. `Launcher.call(args)` is the
general path (any accepted argument form); `Launcher.fast_path(...)` generates a small Python function
specialized to the argument types of one call, which the kernel object tries first on later calls: type
checks by identity, one attribute read per ndarray, one ctypes call (about a microsecond in all).
"""

from __future__ import annotations

import ctypes
import sys
from collections.abc import Callable
from typing import Any

import numpy as np

from quadrants.errors import QuadrantsAssertionError, QuadrantsIndexError, QuadrantsRuntimeTypeError, SourceLoc
from quadrants.runtime.abi import CTYPES, KernelABI
from quadrants.runtime.context import ERROR_BOUNDS, RESULT_SLOT_BYTES, RuntimeContext
from quadrants.runtime.loader import Loaded
from quadrants.runtime.ndarray import Ndarray, descriptor
from quadrants.types import dtypes

MISS = object()  # returned by a fast path that does not apply to the arguments it was given


class Launcher:
    def __init__(self, abi: KernelABI, loaded: Loaded, num_threads: int) -> None:
        self.abi = abi
        self.loaded = loaded
        argtypes = [ctypes.c_void_p] + [ctypes.c_void_p if a.kind == "ndarray" else CTYPES[a.prim] for a in abi.args]
        self.cfunc = ctypes.CFUNCTYPE(ctypes.c_int32, *argtypes)(loaded.address)
        self.ctx = RuntimeContext()
        self.ctx.num_threads = num_threads
        self.result = ctypes.create_string_buffer(max(1, len(abi.rets)) * RESULT_SLOT_BYTES)
        self.ctx.result = ctypes.addressof(self.result)
        self.ctx_addr = ctypes.addressof(self.ctx)
        self.readers = [_reader(self.result, k, dtypes.BY_NAME[r]) for k, r in enumerate(abi.rets)]

    # ---- general path -----------------------------------------------------------------------------------

    def call(self, args: list[Any]) -> Any:
        """Marshal `args` (one per runtime parameter, already validated) and run the kernel."""
        call_args: list[Any] = [self.ctx_addr]
        keep: list[Any] = []
        writeback: list[tuple[np.ndarray, np.ndarray]] = []
        for spec, a in zip(self.abi.args, args):
            if spec.kind == "ndarray":
                if isinstance(a, Ndarray):
                    call_args.append(a._desc)
                    continue
                arr = external_array(a)
                if not arr.flags.c_contiguous:
                    tmp = np.ascontiguousarray(arr)
                    writeback.append((arr, tmp))
                    arr = tmp
                d = descriptor(arr.ctypes.data, arr.shape[: spec.ndim])
                keep.append((arr, d))
                call_args.append(ctypes.addressof(d))
            else:
                call_args.append(scalar_arg(a, spec.prim, spec.name))
        if self.abi.has_print:
            sys.stdout.flush()
        rc = self.cfunc(*call_args)
        for orig, tmp in writeback:
            orig[...] = tmp
        if rc:
            self.raise_error(rc)
        return self.results()

    def results(self) -> Any:
        if not self.readers:
            return None
        if len(self.readers) == 1:
            return self.readers[0]()
        return tuple(r() for r in self.readers)

    def raise_error(self, rc: int) -> None:
        ctx = self.ctx
        site_index, index, dim, extent = ctx.site, ctx.index, ctx.dim, ctx.extent
        ctx.error = 0
        site = self.abi.sites[site_index] if 0 <= site_index < len(self.abi.sites) else None
        loc = None
        if site is not None:
            loc = SourceLoc(site.filename, site.lineno, site.col, site.lineno, site.end_col, site.line_text,
                            site.func_name)  # fmt: skip
        if rc == ERROR_BOUNDS:
            what = f"'{site.detail}'" if site is not None else "an ndarray"
            raise QuadrantsIndexError(
                f"index {index} is out of bounds for axis {dim} with size {extent} of {what} "
                f"(kernel {self.abi.symbol})",
                loc,
            )
        detail = site.detail if site is not None else ""
        raise QuadrantsAssertionError(f"assertion failed: {detail}", loc)

    # ---- fast path --------------------------------------------------------------------------------------

    def fast_path(self, kinds: list[tuple[str, Any]]) -> Callable[..., Any] | None:
        """A function of all the kernel's arguments that launches directly when they have the types of
        `kinds` (per parameter: ("ndarray", NdType) for a qd.ndarray, ("numpy", (dtype, ndim)),
        ("template", value) or ("scalar", None)), and returns MISS otherwise."""
        env: dict[str, Any] = {"CALL": self.cfunc, "CTX": self.ctx_addr, "MISS": MISS, "ND": Ndarray,
                               "NP": np.ndarray, "NPDESC": _numpy_descriptor, "RAISE": self.raise_error,
                               "ArgumentError": ctypes.ArgumentError, "FLUSH": sys.stdout.flush}  # fmt: skip
        names = [f"a{i}" for i in range(len(kinds))]
        checks: list[str] = []
        pre: list[str] = []
        call: list[str] = ["CTX"]
        if any(kind not in ("ndarray", "numpy", "template", "scalar") for kind, _ in kinds):
            return None  # type: ignore[return-value]
        for i, (kind, info) in enumerate(kinds):
            a = names[i]
            if kind == "ndarray":
                env[f"S{i}"] = info
                checks.append(f"{a}.__class__ is ND and {a}._spec is S{i}")
                call.append(f"{a}._desc")
            elif kind == "numpy":
                env[f"D{i}"] = info[0]
                checks.append(f"{a}.__class__ is NP and {a}.dtype == D{i} and {a}.ndim == {info[1]}")
                pre.append(f"d{i} = NPDESC({a}, {info[1]})")
                pre.append(f"if d{i} is None: return MISS")
                call.append(f"d{i}")
            elif kind == "template":
                env[f"T{i}"], env[f"V{i}"] = type(info), info
                checks.append(f"{a}.__class__ is T{i} and {a} == V{i}")
            else:
                call.append(a)
        result = "None"
        for k, reader in enumerate(self.readers):
            env[f"R{k}"] = reader
        if len(self.readers) == 1:
            result = "R0()"
        elif self.readers:
            result = "(" + ", ".join(f"R{k}()" for k in range(len(self.readers))) + ")"
        cond = " and ".join(checks) or "True"
        lines = [f"def fast({', '.join(names)}):", f"    if not ({cond}):", "        return MISS"]
        lines += [f"    {p}" for p in pre]
        if self.abi.has_print:
            lines.append("    FLUSH()")
        lines += [
            "    try:",
            f"        rc = CALL({', '.join(call)})",
            "    except ArgumentError:",
            "        return MISS",
            "    if rc:",
            "        RAISE(rc)",
            f"    return {result}",
        ]
        exec("\n".join(lines), env)  # noqa: S102 - generated from the ABI above
        return env["fast"]  # type: ignore[no-any-return]


def _numpy_descriptor(arr: np.ndarray, ndim: int) -> Any:
    if not arr.flags.c_contiguous:
        return None
    return descriptor(arr.ctypes.data, arr.shape[:ndim])


def external_array(a: Any) -> np.ndarray:
    """A numpy view of an external array argument (numpy, or anything exposing __array_interface__)."""
    if isinstance(a, np.ndarray):
        return a
    if hasattr(a, "__qd_numpy_view__"):
        return a.__qd_numpy_view__()  # type: ignore[no-any-return]
    return np.asarray(a)


def scalar_arg(a: Any, dtype: Any, name: str) -> Any:
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
    return int(a)


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
