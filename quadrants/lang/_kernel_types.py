"""`quadrants.lang._kernel_types`: the records a kernel keeps about its calls, under Quadrants' names:
`SrcLlCacheObservations` (what fastcache did), `FeLlCacheObservations` (whether the offline cache, keyed on
the lowered kernel, served it), `LaunchStats` (the native arguments of the last launch, counted by
`KernelBatchedArgType`), `LaunchObservations` (whether the last launch found its specialization compiled in
this program), `CompiledKernelData` (one specialization's loaded code, as `Kernel.compiled_kernel_data_by_key`
holds it) and `TemplateMapper` (the view `Kernel.mapper` gives of the specializations seen)."""

from __future__ import annotations

import enum
import json
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


class KernelBatchedArgType(enum.IntEnum):
    FLOAT = 0
    INT = 1
    UINT = 2
    QD_ARRAY = 3
    QD_ARRAY_WITH_GRAD = 4


@dataclass
class SrcLlCacheObservations:
    """What fastcache did for this kernel (kept from the first call of the process)."""

    cache_key_generated: bool = False
    cache_validated: bool = False
    cache_loaded: bool = False
    cache_stored: bool = False


@dataclass
class FeLlCacheObservations:
    """Whether the offline cache (keyed on the lowered kernel) served a specialization of this program."""

    cache_hit: bool = False


@dataclass
class LaunchObservations:
    """Whether the last launch found its specialization already compiled in this program (Quadrants' in-memory
    "materialize cache"); False for the launch that compiled it, or loaded it from a cache."""

    found_kernel_in_materialize_cache: bool = False


@dataclass(frozen=True)
class CompiledKernelData:
    """One specialization's code as this program loaded it: its offline key and calling convention (the same
    whether it was compiled here or loaded from a cache). `loaded`: a fastcache entry served it."""

    offline_key: str
    abi: Any  # runtime.abi.KernelABI
    loaded: bool = False

    def _debug_dump_to_string(self) -> str:
        return json.dumps({"offline_key": self.offline_key, "abi": self.abi.to_dict()}, sort_keys=True)


class TemplateMapper:
    """`Kernel.mapper`: `mapping` holds a kernel's specializations seen in this program (key -> its number, in
    the order they were first called), as Quadrants' template mapper does."""

    def __init__(self, keys: Mapping[Any, Any]) -> None:
        self.mapping = {k: n for n, k in enumerate(keys)}


def used_members(abi: Any, structs: set[str]) -> set[str]:
    """The members of the dataclass / data_oriented parameters `structs` that a specialization's launches pass,
    under Quadrants' flattened names (`__qd_s__qd_a` for `s.a`, and `__qd_s` for each enclosing struct): what
    `Kernel.used_py_dataclass_parameters_by_key_enforcing` holds."""
    out: set[str] = set()
    for a in abi.args:
        parts = a.name.removesuffix(".grad").split("[", 1)[0].split(".")
        if len(parts) > 1 and parts[0] in structs:
            out.update("__qd_" + "__qd_".join(parts[:k]) for k in range(1, len(parts) + 1))
    return out


@dataclass
class LaunchStats:
    """The native arguments a launch passes, by kind. Members of a dataclass or data_oriented argument that the
    kernel never reads are not passed (passes/prune_args.py), so they are not counted, as in Quadrants."""

    kernel_args_count_by_type: defaultdict[KernelBatchedArgType, int] = field(
        default_factory=lambda: defaultdict(int)
    )


def launch_stats(args: Any) -> LaunchStats:
    """Count a launcher's ABI arguments (`runtime/abi.ArgABI`): scalars by float / signed / unsigned, arrays as
    QD_ARRAY, or QD_ARRAY_WITH_GRAD for one whose `.grad` travels beside it (that hidden argument is not counted
    again)."""
    counts: defaultdict[KernelBatchedArgType, int] = defaultdict(int)
    names = {a.name for a in args}
    for a in args:
        if a.kind == "ndarray":
            if a.name.endswith(".grad") and a.name[: -len(".grad")] in names:
                continue
            with_grad = a.name + ".grad" in names
            counts[KernelBatchedArgType.QD_ARRAY_WITH_GRAD if with_grad else KernelBatchedArgType.QD_ARRAY] += 1
        elif a.dtype.startswith("f"):
            counts[KernelBatchedArgType.FLOAT] += 1
        elif a.dtype.startswith("u"):
            counts[KernelBatchedArgType.UINT] += 1
        else:
            counts[KernelBatchedArgType.INT] += 1
    return LaunchStats(counts)
