"""Call a kernel compiled by the CUDA backend: marshal the arguments, launch its tasks in order, read results.

Consumes a `KernelABI`, the kernel's tasks loaded on a `Device` (`LoadedCuda`) and the specialization's leaves;
produces a launcher with the CPU launcher's surface (`call`, `raise_error`, `results`). The runtime context,
temps and result slots are device memory that Python also addresses (managed memory), so reading a result or
an error is a sync and a load. numpy arrays and CPU torch tensors passed to a GPU kernel are copied to device
memory and back; qd.ndarrays, fields and CUDA torch tensors are passed by pointer. Calls from several Python
threads take turns (one context, temps and result slots per kernel; the GPU runs one stream anyway).
"""

from __future__ import annotations

import ctypes
import struct
import threading
from collections.abc import Callable
from typing import Any

import numpy as np

from quadrants.errors import QuadrantsArgumentValueError, QuadrantsRuntimeError, QuadrantsRuntimeTypeError
from quadrants.runtime.abi import ALWAYS_CHECKED, CTYPES, KernelABI, cuda_packs_args
from quadrants.runtime.context import RESULT_SLOT_BYTES, RuntimeContext
from quadrants.runtime.device import Device, LoadedCuda
from quadrants.runtime.launch import (
    Launcher,
    _flatten,
    _walk,
    check_external,
    external_array,
    scalar_arg,
    shape_beyond_i32,
)
from quadrants.runtime.leaves import ElementLeaf, Guard, Leaf, NdarrayLeaf, ScalarLeaf, is_torch_tensor
from quadrants.runtime.random_state import RandomState


class CudaLauncher(Launcher):
    def __init__(self, abi: KernelABI, loaded: LoadedCuda, device: Device, regions_table: int = 0,
                 make_matrix: Callable[[np.ndarray], Any] = np.asarray, check_errors: bool = False,
                 rand: RandomState | None = None) -> None:  # fmt: skip
        self.abi = abi
        self.rand = rand if rand is not None else RandomState()
        self.loaded = loaded  # type: ignore[assignment]
        self.device = device
        self.plan = loaded.plan
        self.functions = loaded.functions
        # an adstack overflow (never a gradient read from the wrong slot) and a full sparse pool are always
        # errors, debug mode or not (codegen/abi.error_checks)
        self.check_errors = check_errors or any(s.kind in ALWAYS_CHECKED for s in abi.sites)
        self._ctx_mem = device.zeros(ctypes.sizeof(RuntimeContext))
        self.ctx = RuntimeContext.from_address(self._ctx_mem.ctypes.data)
        nres = max(1, len(abi.rets)) * RESULT_SLOT_BYTES
        self._result_mem = device.zeros(nres)
        self.result = (ctypes.c_char * nres).from_address(self._result_mem.ctypes.data)
        self._temps = device.zeros(8 * max(1, self.plan.temps))
        self.ctx.result = self._result_mem.ctypes.data
        self.ctx.regions = regions_table
        self.overflow_sites = tuple(k for k, s in enumerate(abi.sites) if s.kind == "overflow")
        self._warned = device.zeros(len(abi.sites)) if self.overflow_sites else None  # flags, one byte a site
        self.ctx.warned = self._warned.ctypes.data if self._warned is not None else None
        self.ctx_addr = self._ctx_mem.ctypes.data
        self.results = self._results_reader(self.result, make_matrix)
        self._grids = [device.grid(t) for t in self.plan.tasks]
        self._lock = threading.Lock()
        self._args_mem: np.ndarray | None = None  # a packed kernel's arguments (kept until the next call)
        self.locate = None
        self.kernel_name = abi.symbol

    def fast_path(self, nparams: int, leaves: list[Leaf], guards: list[Guard]) -> Callable[..., Any] | None:
        return None  # the general path: a GPU launch costs more than marshalling

    def call(self, values: list[Any], leaves: list[Leaf]) -> Any:
        with self._lock:
            return self._call(values, leaves)

    def _call(self, values: list[Any], leaves: list[Leaf]) -> Any:
        if len(leaves) != len(self.abi.args):
            raise ValueError(f"{len(leaves)} argument leaves for {len(self.abi.args)} native arguments")
        params: list[tuple[Any, Any]] = [(ctypes.c_void_p, self.ctx_addr), (ctypes.c_void_p, self._temps.ctypes.data)]
        copies: list[tuple[np.ndarray, np.ndarray]] = []  # (host array, its device copy): copied back after
        flat: dict[tuple[Any, ...], list[Any]] = {}
        for leaf, spec in zip(leaves, self.abi.args):
            v = _walk(values, leaf.path)
            v = getattr(v, "_unwrap", lambda v=v: v)()
            if isinstance(leaf, ScalarLeaf):
                params.append((CTYPES[spec.prim], scalar_arg(v, spec.prim, spec.name, leaf.wrap)))
            elif isinstance(leaf, ElementLeaf):
                if leaf.path not in flat:
                    flat[leaf.path] = _flatten(v)
                params.append((CTYPES[spec.prim], scalar_arg(flat[leaf.path][leaf.index], spec.prim, spec.name, leaf.wrap)))
            elif isinstance(leaf, NdarrayLeaf):
                if v._mem is not self.device:
                    raise QuadrantsRuntimeTypeError(
                        f"argument {spec.name!r}: this ndarray was allocated for another backend (before qd.init); "
                        "allocate it after qd.init(arch=qd.cuda)"
                    )
                params.append((ctypes.c_void_p, v._arr.ctypes.data))
                params += [(ctypes.c_int64, n) for n in v._physical_shape]  # the storage order the kernel indexes
            else:  # numpy, torch
                address, shape = self._external(v, spec, copies)
                params.append((ctypes.c_void_p, address))
                params += [(ctypes.c_int64, n) for n in shape]
        if self.abi.random:  # the seed and the launch number: the same for all the kernel's tasks
            params += [(ctypes.c_uint64, self.rand.seed), (ctypes.c_uint64, self.rand.next_launch())]
        packed = cuda_packs_args([ctypes.sizeof(t) for t, _ in params[2:]])
        if packed:  # the arguments in 8-byte device slots (read by the launches below: synced before reuse)
            self._args_mem = self._pack(params[2:])
            params = params[:2] + [(ctypes.c_void_p, self._args_mem.ctypes.data)]
        try:
            if self.plan.program is None:
                for fn, (grid, block) in zip(self.functions, self._grids):
                    self.device.launch(fn, grid, block, params)
            else:
                self._run(self.plan.program, params)
            if packed or copies or self.abi.rets or self.check_errors or self.abi.has_print or self.overflow_sites:
                self.device.sync()  # (printf output is flushed at a sync)
        except QuadrantsRuntimeError as e:
            raise type(e)(f"kernel {self.kernel_name!r}: {e}") from None
        for host, dev in copies:
            host[...] = dev
        if self._warned is not None:
            self.report_overflows(self._warned)
        if self.check_errors and self.ctx.error:
            self.raise_error(self.ctx.error, self.ctx)
        return self.results()

    def _run(self, steps: list[Any], params: list[tuple[Any, Any]]) -> str | None:
        """Launch a plan's steps (codegen/cuda_plan.CudaPlan.program): the host runs the control flow that
        holds parallel loops (a do-while, a checkpoint's gate), reading each condition from temps after a sync.
        Returns "break" / "continue" for the enclosing loop, "stop" once a check failed, else None."""
        for step in steps:
            if isinstance(step, int):
                grid, block = self._grids[step]
                self.device.launch(self.functions[step], grid, block, params)
                continue
            kind = step[0]
            if kind in ("break", "continue"):
                return kind  # type: ignore[no-any-return]
            if kind == "loop":
                while (out := self._run(step[1], params)) != "break":
                    if out == "stop":
                        return out
                continue
            self.device.sync()
            if self.check_errors and self.ctx.error:
                return "stop"  # (raised after the launch)
            out = self._run(step[2] if self._temps.view(np.uint8)[8 * step[1]] else step[3], params)
            if out is not None:
                return out
        return None

    def _pack(self, params: list[tuple[Any, Any]]) -> np.ndarray:
        """Device memory holding `params`, one 8-byte slot each (the layout codegen/cuda.py reads)."""
        data = struct.pack("".join(f"{t._type_}{(-ctypes.sizeof(t)) % 8}x" for t, _ in params), *(v for _, v in params))
        mem = self.device.zeros(len(data))
        mem[: len(data)] = np.frombuffer(data, np.uint8)
        return mem

    def _external(self, v: Any, spec: Any, copies: list[tuple[np.ndarray, np.ndarray]]) -> tuple[int, tuple[int, ...]]:
        """A numpy array or torch tensor: by pointer when it is already on the GPU, else through a device copy."""
        ndim = spec.ndim
        if is_torch_tensor(v) and getattr(v.device, "type", "cpu") == "cuda":
            too_long = shape_beyond_i32(spec.name, tuple(v.shape[:ndim]))
            if too_long is not None:
                raise QuadrantsArgumentValueError(too_long)
            if not self.device.emulated:
                if not v.is_contiguous():
                    raise QuadrantsRuntimeTypeError("a CUDA torch tensor argument must be contiguous")
                return int(v.data_ptr()), tuple(v.shape[:ndim])
        host = external_array(v)
        check_external(host, spec)
        dev = self.device.zeros(host.nbytes)[: host.nbytes].view(host.dtype).reshape(host.shape)
        dev[...] = host
        copies.append((host, dev))
        return int(dev.ctypes.data), tuple(host.shape[:ndim])
