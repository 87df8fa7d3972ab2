"""runtime/cuda_driver.py against a stand-in for `cuda.bindings.driver` (no GPU needed): how it starts, allocates,
picks an image, packs launch parameters, and reports driver errors."""

from __future__ import annotations

import ctypes
import enum
import types
from typing import Any

import numpy as np
import pytest

from quadrants.codegen.cuda_plan import CudaPlan, CudaTask
from quadrants.runtime.cuda_driver import CudaDevice, CudaDriverError, pick_image


class Attr(enum.IntEnum):
    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75
    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76
    CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16


class FakeDriver:
    """Enough of cuda.bindings.driver: results as (CUresult, value) tuples, memory in host buffers."""

    CUdevice_attribute = Attr
    CUlimit = types.SimpleNamespace(CU_LIMIT_STACK_SIZE=0)
    CUmemAttach_flags = types.SimpleNamespace(CU_MEM_ATTACH_GLOBAL=1)

    def __init__(self, cc: tuple[int, int] = (9, 0), fail: dict[str, int] | None = None) -> None:
        self.cc = cc
        self.fail = fail or {}
        self.buffers: dict[int, np.ndarray] = {}
        self.freed: list[int] = []
        self.loaded: list[bytes] = []
        self.launches: list[tuple[Any, ...]] = []
        self.limits: dict[int, int] = {}

    def _r(self, name: str, *value: object) -> tuple[object, ...]:
        return (self.fail.get(name, 0), *value)

    def cuInit(self, flags):  # noqa: N802 - the driver's names
        return self._r("cuInit")

    def cuDeviceGet(self, ordinal):  # noqa: N802
        return self._r("cuDeviceGet", ordinal)

    def cuDeviceGetAttribute(self, attr, dev):  # noqa: N802
        value = {Attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: self.cc[0],
                 Attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: self.cc[1],
                 Attr.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: 132}[attr]  # fmt: skip
        return self._r("cuDeviceGetAttribute", value)

    def cuDevicePrimaryCtxRetain(self, dev):  # noqa: N802
        return self._r("cuDevicePrimaryCtxRetain", "ctx")

    def cuCtxSetCurrent(self, ctx):  # noqa: N802
        return self._r("cuCtxSetCurrent")

    def cuCtxSetLimit(self, limit, value):  # noqa: N802
        self.limits[limit] = value
        return self._r("cuCtxSetLimit")

    def cuMemAllocManaged(self, n, flags):  # noqa: N802
        buf = np.full(n, 0xAB, np.uint8)  # garbage: the device must clear it
        self.buffers[buf.ctypes.data] = buf
        return self._r("cuMemAllocManaged", buf.ctypes.data)

    def cuMemsetD8(self, ptr, value, n):  # noqa: N802
        ctypes.memset(int(ptr), value, n)
        return self._r("cuMemsetD8")

    def cuMemFree(self, ptr):  # noqa: N802
        self.freed.append(int(ptr))
        return self._r("cuMemFree")

    def cuModuleLoadData(self, data):  # noqa: N802
        self.loaded.append(data)
        return self._r("cuModuleLoadData", "module")

    def cuModuleGetFunction(self, module, name):  # noqa: N802
        return self._r("cuModuleGetFunction", name.decode())

    def cuLaunchKernel(self, fn, gx, gy, gz, bx, by, bz, shared, stream, params, extra):  # noqa: N802
        self.launches.append((fn, gx, bx, params))
        return self._r("cuLaunchKernel")

    def cuCtxSynchronize(self):  # noqa: N802
        return self._r("cuCtxSynchronize")

    def cuGetErrorName(self, err):  # noqa: N802
        return 0, {700: b"CUDA_ERROR_ILLEGAL_ADDRESS", 100: b"CUDA_ERROR_NO_DEVICE"}.get(int(err), b"CUDA_ERROR_UNKNOWN")

    def cuGetErrorString(self, err):  # noqa: N802
        return 0, b"an explanation"


def test_starts_on_the_device_and_reads_its_architecture() -> None:
    dev = CudaDevice(driver=FakeDriver((8, 6)))
    assert dev.arch == "sm_86" and dev.capability == (8, 6) and dev.multiprocessors == 132
    assert dev.grid(CudaTask("t", True, None)) == (132 * 2048 // 128, 128)
    assert dev.grid(CudaTask("t", True, 1000)) == (8, 128)
    assert dev.grid(CudaTask("t", False, 1)) == (1, 1)


def test_cuda_stack_limit_sets_the_stack_size_only_when_given() -> None:
    drv = FakeDriver()
    CudaDevice(driver=drv)
    assert drv.limits == {}
    CudaDevice(driver=drv, stack_limit=32768)  # qd.init(cuda_stack_limit=32768): deep recursion on the GPU
    assert drv.limits == {FakeDriver.CUlimit.CU_LIMIT_STACK_SIZE: 32768}


def test_driver_errors_name_the_call() -> None:
    with pytest.raises(CudaDriverError, match=r"cuInit failed: CUDA_ERROR_NO_DEVICE \(an explanation\)"):
        CudaDevice(driver=FakeDriver(fail={"cuInit": 100}))
    dev = CudaDevice(driver=FakeDriver(fail={"cuLaunchKernel": 700}))
    with pytest.raises(CudaDriverError, match="cuLaunchKernel failed: CUDA_ERROR_ILLEGAL_ADDRESS"):
        dev.launch("f", 1, 1, [])


def test_managed_memory_is_zeroed_viewed_and_freed() -> None:
    drv = FakeDriver()
    dev = CudaDevice(driver=drv)
    view = dev.zeros(100)
    assert view.shape == (100,) and not view.any()
    address = view.ctypes.data
    assert address in drv.buffers
    del view
    import gc

    gc.collect()
    assert address in drv.freed


def test_launch_passes_an_array_of_pointers_to_the_values() -> None:
    drv = FakeDriver()
    dev = CudaDevice(driver=drv)
    params = [(ctypes.c_void_p, 0x1234), (ctypes.c_int64, -7), (ctypes.c_float, 2.5), (ctypes.c_uint8, 1)]
    seen = {}

    def launch(fn, gx, gy, gz, bx, by, bz, shared, stream, pointer_array, extra):  # noqa: N802
        ptrs = (ctypes.c_void_p * 4).from_address(pointer_array)
        seen["values"] = [t.from_address(p).value for (t, _), p in zip(params, ptrs)]
        seen["dims"] = (fn, gx, gy, gz, bx, by, bz, shared, stream)
        return (0,)

    drv.cuLaunchKernel = launch  # type: ignore[method-assign]
    dev.launch("k_t0", 64, 128, params)
    assert seen["values"] == [0x1234, -7, 2.5, 1]
    assert seen["dims"] == ("k_t0", 64, 1, 1, 128, 1, 1, 0, 0)


def test_load_picks_the_best_image_and_gets_every_task() -> None:
    drv = FakeDriver((9, 0))
    dev = CudaDevice(driver=drv)
    plan = CudaPlan((CudaTask("k_t0", False, 1), CudaTask("k_t1", True, None)), 0)
    loaded = dev.load({"sm_80": b"cubin80", "sm_90": b"cubin90", "ptx:sm_80": b"ptx"}, plan)
    assert drv.loaded == [b"cubin90"] and loaded.functions == ("k_t0", "k_t1")


def test_image_choice() -> None:
    images = {"sm_80": b"c80", "sm_90": b"c90", "ptx:sm_80": b"p80", "ptx:sm_90": b"p90"}
    assert pick_image(images, (9, 0)) == b"c90"
    assert pick_image(images, (8, 6)) == b"c80"  # same major, older minor: binary compatible
    assert pick_image(images, (12, 0)) == b"p90\0"  # newer GPU: the newest PTX, JIT-compiled
    assert pick_image({"ptx:sm_80": b"p80"}, (8, 0)) == b"p80\0"
    with pytest.raises(CudaDriverError, match="no code for this GPU"):
        pick_image({"sm_90": b"c90"}, (7, 5))



