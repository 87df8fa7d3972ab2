"""quadrants: a Python kernel compiler with fastcache.

    import quadrants as qd
    qd.init(arch=qd.cpu)

    @qd.kernel
    def saxpy(a: qd.f32, x: qd.types.NDArray[qd.f32, 1], y: qd.types.NDArray[qd.f32, 1]):
        for i in range(x.shape[0]):
            y[i] = a * x[i] + y[i]

Importing this package is cheap: llvmlite is loaded the first time a kernel compiles.
"""

# ruff: noqa: E402  - the clock starts before the imports it times (qd.stats()["stage_seconds"]["import"])
import time as _time

import numpy as _numpy  # noqa: F401 - before the clock: a dependency its callers load anyway (not quadrants' own cost)

_t0 = _time.perf_counter()

from quadrants import _lib, ad, experimental, linalg, math, types  # noqa: F401  - `qd._lib.core` / `qd._lib.utils`, as in Quadrants
from quadrants._config import amdgpu, cc, cpu, cuda, dx11, dx12, gles, metal, opengl, python, vulkan, wasm  # noqa: F401
from quadrants._config import gpu_archs as gpu  # noqa: F401  - a list, as in Quadrants
from quadrants._lib.core import DeviceCapability  # noqa: F401  - `qd.DeviceCapability`, as in Quadrants
from quadrants._logging import is_logging_effective, set_logging_level  # noqa: F401
from quadrants._version import __version__  # noqa: F401
from quadrants.errors import (  # noqa: F401
    QuadrantsArgumentError,
    QuadrantsArgumentValueError,
    QuadrantsAssertionError,
    QuadrantsCacheWriteError,
    QuadrantsCompilationError,
    QuadrantsError,
    QuadrantsIndexError,
    QuadrantsNameError,
    QuadrantsRuntimeError,
    QuadrantsRuntimeTypeError,
    QuadrantsSyntaxError,
    QuadrantsTypeError,
)  # fmt: skip
from quadrants.frontend.func import func, pyfunc  # noqa: F401
from quadrants.frontend.intrinsics import (  # noqa: F401
    abs,
    acos,
    activate,
    append,
    asin,
    assume_in_range,
    atan,
    atan2,
    atomic_add,
    atomic_and,
    atomic_cas,
    atomic_exchange,
    atomic_max,
    atomic_min,
    atomic_mul,
    atomic_or,
    atomic_sub,
    atomic_xor,
    bit_cast,
    bit_shr,
    block_local,
    cache_read_only,
    cast,
    ceil,
    clock_counter,
    clz,
    cos,
    deactivate,
    exp,
    floor,
    get_addr,
    graph_do_while,
    grouped,
    is_active,
    length,
    log,
    loop_config,
    max,
    mesh_local,
    mesh_patch_idx,
    min,
    ndrange,
    no_activate,
    one,
    outer,
    popcnt,
    pow,
    randn,
    random,
    raw_div,
    raw_mod,
    rescale_index,
    round,
    rsqrt,
    select,
    sin,
    sqrt,
    static,
    static_assert,
    static_print,
    stop_grad,
    tan,
    tanh,
    volatile_load,
    zero,
)  # fmt: skip
from quadrants.lang import exception as _exception  # noqa: F401  - `qd.lang.exception`, as in Quadrants
from quadrants.lang import (
    graph,  # noqa: F401  - `qd.graph.do_while`, `qd.graph.parallel_context`, `qd.graph.parallel`
    simt,  # noqa: F401  - `qd.simt.block` / `qd.simt.warp` (CUDA backend)
)
from quadrants.lang import impl as _impl  # noqa: F401  - `qd.lang.impl`, as in Quadrants
from quadrants.lang import kernel as _kernel_module
from quadrants.lang._perf_dispatch import perf_dispatch  # noqa: F401
from quadrants.lang.bitpacked import BitpackedFields  # noqa: F401
from quadrants.lang.checkpoint import GraphStatus, checkpoint  # noqa: F401
from quadrants.lang.compat import Extension as extension  # noqa: F401
from quadrants.lang.compat import Layout, is_extension_supported, pure, real_func  # noqa: F401
from quadrants.lang.data_oriented import data_oriented  # noqa: F401
from quadrants.lang.field import Field, MatrixField, ScalarField, field  # noqa: F401
from quadrants.lang.graph import parallel as graph_parallel  # noqa: F401  - deprecated flat names, as in Quadrants
from quadrants.lang.graph import parallel_context as graph_parallel_context  # noqa: F401
from quadrants.lang.kernel import kernel  # noqa: F401
from quadrants.lang.matrix import Matrix, Vector  # noqa: F401
from quadrants.lang.misc import clock_freq_hz, dump_compile_config, is_extension_enabled  # noqa: F401
from quadrants.lang.program import init, reset, sync  # noqa: F401
from quadrants.lang.snode import (  # noqa: F401
    FieldsBuilder,
    SNode,
    SNodeTree,
    axes,
    deactivate_all_snodes,
    i,
    ij,
    ijk,
    ijkl,
    ijl,
    ik,
    ikl,
    il,
    j,
    jk,
    jkl,
    jl,
    k,
    kl,
    l,
    root,
)
from quadrants.lang.stream import Event, Stream, create_event, create_stream, stream_parallel  # noqa: F401
from quadrants.lang.struct import Struct, StructField, dataclass  # noqa: F401
from quadrants.lang.tensor import Backend, MatrixTensor, Tensor, VectorTensor, ndarray, tensor, wrap  # noqa: F401
from quadrants.math_linalg import eig, make_spd, polar_decompose, solve, svd, sym_eig  # noqa: F401
from quadrants.runtime.buffer_view import BufferView  # noqa: F401
from quadrants.runtime.ndarray import MatrixNdarray, Ndarray, ScalarNdarray, VectorNdarray  # noqa: F401
from quadrants.types.annotations import Template, ref, template  # noqa: F401
from quadrants.types.dtypes import f16, f32, f64, i8, i16, i32, i64, u1, u8, u16, u32, u64  # noqa: F401

x64 = x86_64 = arm64 = cpu
float16, float32, float64 = f16, f32, f64
int8, int16, int32, int64 = i8, i16, i32, i64
uint8, uint16, uint32, uint64, uint1 = u8, u16, u32, u64, u1

# Log levels for qd.init(log_level=...)
TRACE, DEBUG, INFO, WARN, ERROR, CRITICAL = "trace", "debug", "info", "warn", "error", "critical"


def stats() -> dict:  # type: ignore[type-arg]
    """This process's counters: `compiles`; `stage_seconds` (frontend, lower, llvm_opt, llvm_codegen, link,
    fastcache_lookup, load; and the totals `import` of this package (its own modules: numpy, which it and its
    callers import, is not counted), `init` of qd.init, `prepare` of the kernels' first calls up to their runs); `cache` (fastcache and offline hits/misses/stores, fallbacks, corrupt
    entries)."""
    from quadrants._stats import STATS

    return STATS.snapshot()


def __getattr__(name: str) -> object:
    """`qd.cfg`: the active program's settings (None before the first qd.init), as in Quadrants; `qd.algorithms`,
    `qd.sparse` and `qd.interop` are imported on first use (their kernels are not on the start-up path), and so
    are `qd.Mesh` / `qd.MeshInstance`."""
    if name == "cfg":
        from quadrants.lang.program import current_config

        return current_config()
    if name in ("algorithms", "sparse", "interop"):  # libraries above this package's namespace, imported on use
        import importlib

        return importlib.import_module(f"quadrants.{name}")
    if name in ("Mesh", "MeshInstance"):  # meshes (lang/mesh.py), imported on use
        from quadrants.lang import mesh

        return getattr(mesh, name)
    raise AttributeError(f"module 'quadrants' has no attribute {name!r}")


def _record_call(path: str, kern: object, params: list, values: list, cache_dir: str | None) -> None:
    """What a kernel calls at its first call of a specialization while `qd record` runs the program: aot/record.py
    (imported only then) appends the signature. Installed here, above both: aot builds on lang."""
    from quadrants.aot.record import record_call

    record_call(path, kern, params, values, cache_dir)


_kernel_module.RECORDER = _record_call


def _write_stats_at_exit() -> None:
    """QD_STATS_FILE: this process's `stats()` written there as JSON when it exits (how `qd precompile` learns what
    a warm-up run compiled). A file that cannot be written is a warning, never a failed exit."""
    from quadrants._config import stats_file

    path = stats_file()
    if not path:
        return
    import atexit

    def write() -> None:
        import json

        try:
            with open(path, "w") as f:
                json.dump(stats(), f)
        except OSError as e:
            import warnings

            warnings.warn(f"QD_STATS_FILE: cannot write {path}: {e.strerror or e}", stacklevel=1)

    atexit.register(write)


def _imported() -> None:
    from quadrants._stats import STATS

    STATS.time("import", _time.perf_counter() - _t0)


_write_stats_at_exit()
_imported()
