"""`qd._lib.core`: Quadrants' native-core names that programs use.

`Arch(i)` turns the number `int(qd.cfg.arch)` gives back into the arch (Genesis passes an arch to a child
process that way); `Arch.x64`, `Arch.cuda`, ... are the archs themselves. `DeviceCapability` names the SPIR-V
capabilities `impl.get_runtime().prog.get_device_caps().get(...)` reads (all 0 here: no SPIR-V backend).
"""

from __future__ import annotations

import enum
from typing import Any

from quadrants import _config
from quadrants.errors import QuadrantsRuntimeError  # noqa: F401  - `qd._lib.core.QuadrantsRuntimeError`
from quadrants.types import dtypes


class _ArchNamespace(type):
    def __getattr__(cls, name: str) -> _config.Arch:
        arch = _config.ARCHES.get(name)
        if arch is None or name.startswith("_"):
            raise AttributeError(f"Arch has no member {name!r}")
        return arch


class Arch(metaclass=_ArchNamespace):
    """`Arch(int(qd.cfg.arch))` gives the arch back; `Arch.x64` is `qd.cpu`, `Arch.cuda` is `qd.cuda`."""

    def __new__(cls, value: Any) -> _config.Arch:  # type: ignore[misc]
        return _config.arch_from_int(value) if isinstance(value, int) else _config._parse_arch(value)


class DeviceCapability(enum.IntEnum):
    """Quadrants 1.3.3's capability names, in its order."""

    reserved = 0
    spirv_version = 1
    spirv_has_int8 = 2
    spirv_has_int16 = 3
    spirv_has_int64 = 4
    spirv_has_float16 = 5
    spirv_has_float64 = 6
    spirv_has_storage_buffer_8bit_access = 7
    spirv_has_storage_buffer_16bit_access = 8
    spirv_has_atomic_int64 = 9
    spirv_has_atomic_float16 = 10
    spirv_has_atomic_float16_add = 11
    spirv_has_atomic_float16_minmax = 12
    spirv_has_atomic_float = 13
    spirv_has_atomic_float_add = 14
    spirv_has_atomic_float_minmax = 15
    spirv_has_atomic_float64 = 16
    spirv_has_atomic_float64_add = 17
    spirv_has_atomic_float64_minmax = 18
    spirv_has_shared_atomic_float_add = 19
    spirv_has_shared_atomic_float64_add = 20
    spirv_has_shared_atomic_float16_add = 21
    spirv_has_variable_ptr = 22
    spirv_has_physical_storage_buffer = 23
    spirv_has_subgroup_basic = 24
    spirv_has_subgroup_vote = 25
    spirv_has_subgroup_arithmetic = 26
    spirv_has_subgroup_ballot = 27
    spirv_subgroup_size = 28
    spirv_has_non_semantic_info = 29
    spirv_has_no_integer_wrap_decoration = 30
    spirv_has_shader_clock = 31


MAX_NUM_INDICES = 12  # the most indices (dimensions) a field or ndarray takes, as in Quadrants


def get_max_num_indices() -> int:
    return MAX_NUM_INDICES


def data_type_size(dtype: Any) -> int:
    """The size of one value of a primitive type, in bytes (`qd.f64` -> 8)."""
    t = dtypes.to_dtype(dtype)
    return max(1, t.bits // 8)


def with_metal() -> bool:
    return False


def with_vulkan() -> bool:
    return False


def with_cuda() -> bool:
    """Whether the CUDA backend is built in: it always is (it needs a GPU, or cuda_emulate, to run)."""
    return True
