"""An NVIDIA GPU through cuda-python's driver bindings (`cuda.bindings.driver`, imported only here: 50-200 ms).

One device (ordinal 0 or QD_CUDA_DEVICE), its primary context, managed memory for ndarrays and fields, modules
loaded from the best image a kernel carries for this GPU: its own cubin, a cubin of an older GPU of the same
major version (binary compatible), else the PTX of the newest architecture not above it (JIT-compiled by the
driver). Every driver error becomes a `CudaDriverError` naming the call.
"""

from __future__ import annotations

import ctypes
import re
import weakref
from typing import Any

import numpy as np

from quadrants._config import cuda_device
from quadrants.errors import QuadrantsRuntimeError
from quadrants.runtime.device import Device, LoadedCuda, managed_view


class CudaDriverError(QuadrantsRuntimeError):
    pass


class CudaDevice(Device):
    name = "cuda"

    def __init__(self, ordinal: int | None = None, driver: Any = None, stack_limit: int = 0) -> None:
        if driver is None:
            from cuda.bindings import driver  # type: ignore[import-not-found,no-redef]
        self._d = driver
        if ordinal is None:
            ordinal = cuda_device()
        self._call("cuInit", 0)
        dev = self._call("cuDeviceGet", ordinal)
        attr = driver.CUdevice_attribute
        major = int(self._call("cuDeviceGetAttribute", attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev))
        minor = int(self._call("cuDeviceGetAttribute", attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev))
        self.multiprocessors = int(self._call("cuDeviceGetAttribute", attr.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
                                              dev))  # fmt: skip
        self.capability = (major, minor)
        self.arch = f"sm_{major}{minor}"
        self._dev = dev
        self._ctx = self._call("cuDevicePrimaryCtxRetain", dev)
        self._call("cuCtxSetCurrent", self._ctx)
        if stack_limit > 0:  # `cuda_stack_limit`: the call stack of recursive real functions (0 keeps the default)
            self._call("cuCtxSetLimit", driver.CUlimit.CU_LIMIT_STACK_SIZE, stack_limit)

    def clock_rate_khz(self) -> int:
        """The device's nominal SM clock (`qd.clock_freq_hz`)."""
        attr = self._d.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_CLOCK_RATE
        return int(self._call("cuDeviceGetAttribute", attr, self._dev))

    def max_shared_memory_bytes(self) -> int:
        """Shared memory one block may opt in to (`qd.lang.impl.get_max_shared_memory_bytes`)."""
        attr = self._d.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN
        return int(self._call("cuDeviceGetAttribute", attr, self._dev))

    # ---- errors -----------------------------------------------------------------------------------------

    def _call(self, name: str, *args: Any) -> Any:
        """Call a driver function; raise CudaDriverError on failure; return its result (or results)."""
        out = getattr(self._d, name)(*args)
        err, rest = (out[0], out[1:]) if isinstance(out, tuple) else (out, ())
        if int(err) != 0:
            raise CudaDriverError(f"{name} failed: {self.error_text(err)}")
        return rest[0] if len(rest) == 1 else rest or None

    def error_text(self, err: Any) -> str:
        try:
            _, ename = self._d.cuGetErrorName(err)
            _, estr = self._d.cuGetErrorString(err)
            return f"{ename.decode()} ({estr.decode()})"
        except Exception:  # noqa: BLE001 - an unknown code still gets reported
            return f"CUresult {int(err)}"

    # ---- memory -----------------------------------------------------------------------------------------

    def zeros(self, nbytes: int) -> np.ndarray:
        n = max(nbytes, 1)
        ptr = self._call("cuMemAllocManaged", n, int(self._d.CUmemAttach_flags.CU_MEM_ATTACH_GLOBAL))
        address = int(ptr)
        self._call("cuMemsetD8", ptr, 0, n)
        view = managed_view(address, n)
        weakref.finalize(view, _free, self._d, ptr)
        return view

    def clear(self, address: int, nbytes: int) -> None:
        self._call("cuMemsetD8", self._d.CUdeviceptr(address), 0, nbytes)  # ordered before later launches

    def sync(self) -> None:
        self._call("cuCtxSynchronize")

    # ---- code -------------------------------------------------------------------------------------------

    def load(self, image: dict[str, bytes], plan: Any) -> LoadedCuda:
        data = pick_image(image, self.capability)
        module = self._call("cuModuleLoadData", data)
        functions = tuple(self._call("cuModuleGetFunction", module, t.name.encode()) for t in plan.tasks)
        return LoadedCuda(plan, functions, module)

    def launch(self, fn: Any, grid: int, block: int, params: list[tuple[Any, Any]]) -> None:
        storage = [t(v) for t, v in params]
        pointers = (ctypes.c_void_p * max(1, len(storage)))(*[ctypes.addressof(s) for s in storage])
        self._call("cuLaunchKernel", fn, grid, 1, 1, block, 1, 1, 0, 0, ctypes.addressof(pointers), 0)


def _free(driver: Any, ptr: Any) -> None:
    try:
        driver.cuMemFree(ptr)
    except Exception:  # noqa: BLE001 - at interpreter exit the driver may be gone already
        pass


def pick_image(images: dict[str, bytes], capability: tuple[int, int]) -> bytes:
    """The best image for a GPU of this compute capability: its own cubin; a cubin of the same major version
    and a lower minor (binary compatible); else the PTX of the newest architecture not above it (the driver
    JIT-compiles PTX forward). A NUL is appended to PTX text, as the driver expects."""
    major, minor = capability
    own = major * 10 + minor
    cubins = {_arch(k): v for k, v in images.items() if k.startswith("sm_")}
    if own in cubins:
        return cubins[own]
    same_major = [a for a in cubins if a // 10 == major and a <= own]
    if same_major:
        return cubins[max(same_major)]
    ptx = {_arch(k[4:]): v for k, v in images.items() if k.startswith("ptx:")}
    usable = [a for a in ptx if a <= own]
    if usable:
        text = ptx[max(usable)]
        return text if text.endswith(b"\0") else text + b"\0"
    have = ", ".join(sorted(images)) or "none"
    raise CudaDriverError(f"no code for this GPU (sm_{own}) in the kernel's images ({have}); recompile for it")


def _arch(name: str) -> int:
    m = re.fullmatch(r"sm_(\d+)", name)
    return int(m.group(1)) if m else -1
