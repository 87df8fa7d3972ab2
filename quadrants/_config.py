"""Every `qd.init` option and its `QD_*` environment variable, typed, in one place.

Consumes `qd.init(**kwargs)` and `os.environ`; produces an immutable `Config`. Nothing else in the package
reads a `QD_*` variable (tests/test_knobs.py checks this). Precedence (as in Quadrants): an explicit `qd.init`
argument wins over the environment variable (with a warning when both are set), which wins over the default.

A few variables are not `qd.init` options: they belong to the process, not to a `Config`, and each has an
accessor function at the end of this module (`PROCESS_VARIABLES` lists them): `QD_CACHE_DIR`, `QD_SET_BY_QD`,
`QD_CUDA_DEVICE`, `QD_LIBDEVICE`, `QD_PERFDISPATCH_FORCE`, `QD_STATS_FILE`, and the CUDA toolkit's own `CUDA_HOME` / `CUDA_PATH`.

Each option says whether it changes generated code (`compile=True`): exactly those options enter the
cache keys (see `compile_relevant()`); log level, thread counts and paths do not.
"""

from __future__ import annotations

import dataclasses
import operator
import os
import platform
from collections.abc import Callable, Mapping, MutableMapping
from dataclasses import dataclass, field
from typing import Any

from quadrants.targets import Target, as_target
from quadrants.types import dtypes
from quadrants.types.dtypes import PrimitiveType


class Arch:
    """A backend name: `qd.cpu`, `qd.cuda`, `qd.gpu` (the best GPU backend, else the CPU)."""

    __slots__ = ("name",)
    name: str

    def __init__(self, name: str) -> None:
        object.__setattr__(self, "name", name)

    def __setattr__(self, key: str, value: Any) -> None:
        raise AttributeError("Arch is immutable")

    def __repr__(self) -> str:
        return self.name

    def __reduce__(self) -> str:
        return self.name

    def __int__(self) -> int:
        """Quadrants' number for the backend (its `Arch` enum: x64 0, arm64 1, cuda 4, metal 5, amdgpu 7, vulkan 8;
        `qd._lib.core.Arch(n)` turns it back); programs pass `int(qd.cfg.arch)` around (Genesis' tests)."""
        if self.name == "cpu":
            return ARCH_NUMBERS["arm64" if platform.machine().lower() in ("aarch64", "arm64") else "cpu"]
        try:
            return ARCH_NUMBERS[self.name]
        except KeyError:
            raise TypeError(f"arch {self.name!r} has no number in Quadrants (int() of a chosen backend, qd.cfg.arch)") from None


cpu = Arch("cpu")
cuda = Arch("cuda")
gpu = Arch("gpu")
python = Arch("python")  # kernels run as plain Python on torch tensors (runtime/python_backend/)
# Backends of real Quadrants this package does not have: `qd.init(arch=...)` with one falls back to the CPU with a
# warning (as Quadrants does on a machine without that GPU), or raises with enable_fallback=False.
vulkan, metal, amdgpu, opengl, gles, dx11, dx12, cc, wasm = (
    Arch(n) for n in ("vulkan", "metal", "amdgpu", "opengl", "gles", "dx11", "dx12", "cc", "wasm")
)
FOREIGN = (vulkan, metal, amdgpu, opengl, gles, dx11, dx12, cc, wasm)
LLVM_ARCHS = (cpu, cuda, amdgpu)  # Quadrants' backends whose code LLVM generates (QD_LOAD_IR applies)
gpu_archs = [cuda, metal, vulkan, amdgpu]  # `qd.gpu`: as in Quadrants, a list (the first one usable is taken)
ARCHES = {"cpu": cpu, "x64": cpu, "x86_64": cpu, "arm64": cpu, "cuda": cuda, "gpu": gpu, "python": python,
          **{a.name: a for a in FOREIGN}}  # fmt: skip


# Quadrants 1.3.3's Arch enum values (x64 is this package's cpu). `gpu` is a choice, not an arch: no number.
ARCH_NUMBERS = {"cpu": 0, "arm64": 1, "js": 2, "python": 3, "cuda": 4, "metal": 5, "opencl": 6, "amdgpu": 7,
                "vulkan": 8}  # fmt: skip


def arch_from_int(number: int) -> Arch:
    """The arch of Quadrants' number `number` (the inverse of `int(arch)`); an arch this package lacks is the
    foreign Arch of that name (qd.init runs it on the CPU, warned)."""
    for name, n in ARCH_NUMBERS.items():
        if n == number:
            return ARCHES.get(name) or Arch(name)
    raise ValueError(f"no arch has the number {number}")


def _parse_bool(text: Any) -> bool:
    if isinstance(text, (bool, int)):
        return bool(text)
    t = str(text).strip().lower()
    if t in ("1", "true", "yes", "on"):
        return True
    if t in ("0", "false", "no", "off"):
        return False
    raise ValueError(f"expected 0/1 or true/false, got {text!r}")


def _parse_arch(value: Any) -> Arch:
    if isinstance(value, Arch):
        return value
    if isinstance(value, (list, tuple)):  # qd.gpu, or a list of preferences: the first this package runs
        archs = [_parse_arch(v) for v in value]
        if cuda in archs:
            return gpu  # the GPU when one is usable, else the CPU with a warning
        if cpu in archs:
            return cpu
        return archs[0] if archs else cpu
    try:
        return ARCHES[str(value).lower()]
    except KeyError:
        raise ValueError(f"unknown arch {value!r}; expected one of {sorted(ARCHES)}") from None


def _parse_fp(value: Any) -> PrimitiveType:
    if str(value) in ("32", "64"):
        return dtypes.f32 if str(value) == "32" else dtypes.f64
    t = dtypes.to_dtype(value)
    if not t.is_float or t is dtypes.f16:
        raise ValueError(f"default_fp must be f32 or f64, got {value!r}")
    return t


def _parse_ip(value: Any) -> PrimitiveType:
    if str(value) in ("32", "64"):
        return dtypes.i32 if str(value) == "32" else dtypes.i64
    t = dtypes.to_dtype(value)
    if t not in (dtypes.i32, dtypes.i64):
        raise ValueError(f"default_ip must be i32 or i64, got {value!r}")
    return t


def _parse_seed(value: Any) -> int:
    """A 32-bit signed integer, as Quadrants' CompileConfig.random_seed (a float is refused, as there)."""
    if isinstance(value, float):
        raise TypeError(f"random_seed must be an integer, got {value!r}")
    seed = int(value)
    if not -(2**31) <= seed < 2**31:
        raise ValueError(f"random_seed must fit in 32 bits (signed), got {seed}")
    return seed


def _parse_level(value: Any) -> str:
    v = str(value).lower()
    v = {"warning": "warn", "fatal": "critical"}.get(v, v)
    if v not in ("trace", "debug", "info", "warn", "error", "critical"):
        raise ValueError(f"unknown log level {value!r}")
    return v


CLEANING_POLICIES = ("never", "version", "lru", "fifo")  # cache/store.py: what each one deletes


def _parse_policy(value: Any) -> str:
    v = str(value).strip().lower()
    if v not in CLEANING_POLICIES:
        raise ValueError(f"unknown cache cleaning policy {value!r}: expected one of {', '.join(CLEANING_POLICIES)}")
    return v


def _parse_stack_size(value: Any) -> int:
    """A non-negative integer (0: the default capacity)."""
    try:
        n = int(value) if isinstance(value, str) else operator.index(value)
    except (TypeError, ValueError):
        raise TypeError(f"ad_stack_size must be an integer, got {value!r}") from None
    if n < 0 or n >= 2**31:
        raise ValueError(f"ad_stack_size must be in [0, 2**31), got {n}")
    return n


def _opt(default: Any, parse: Callable[[Any], Any], compile: bool = False, doc: str = "") -> Any:
    return field(default=default, metadata={"parse": parse, "compile": compile, "doc": doc})


def _default_threads() -> int:
    return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1)


@dataclass(frozen=True)
class Config:
    arch: Arch = _opt(cpu, _parse_arch, True, "backend: qd.cpu, qd.cuda, qd.gpu or qd.python (others: the CPU, warned)")
    enable_fallback: bool = _opt(True, _parse_bool, False, "an arch this machine lacks runs on the CPU with a "
                                 "warning; off: qd.init raises instead")
    debug: bool = _opt(False, _parse_bool, True, "bounds checks and assertions in kernels")
    check_out_of_bound: bool = _opt(False, _parse_bool, True, "bounds checks without the rest of debug")
    opt_level: int = _opt(1, int, True, "0: no LLVM optimization; 1: default (O2-class); 2, 3: O3")
    fast_math: bool = _opt(True, _parse_bool, True, "allow reassociation and reciprocal math")
    default_fp: PrimitiveType = _opt(dtypes.f32, _parse_fp, True, "type of float literals and `float`")
    default_ip: PrimitiveType = _opt(dtypes.i32, _parse_ip, True, "type of int literals and `int`")
    cpu_target: str = _opt("host", str, True, "CPU to generate code for: host, or a name like x86-64-v3")
    offline_cache: bool = _opt(True, _parse_bool, False, "persist compiled kernels on disk")
    offline_cache_file_path: str | None = _opt(None, str, False, "cache directory (else QD_CACHE_DIR, XDG)")
    offline_cache_max_size_of_files: int = _opt(100 * 1024 * 1024, int, False, "cache size bound, bytes")
    offline_cache_cleaning_policy: str = _opt("lru", _parse_policy, False, "what keeps the cache small: lru / fifo "
                                              "(other formats' entries, and the least recently used / oldest written "
                                              "past the size bound), version (other formats' only), never")  # fmt: skip
    offline_cache_cleaning_factor: float = _opt(0.25, float, False, "fraction evicted when over the bound")
    offline_cache_fallback: bool = _opt(True, _parse_bool, False, "a cache folder that refuses writes sends new "
                                        "entries to a private temp folder (off: a refused write is a QuadrantsCacheWriteError at the kernel's call; qd precompile reports it per signature)")
    remote_cache: str = _opt("", str, False, "a cache shared by many machines, read on a local miss and given "
                             "what this process compiles: redis://host:port/db, rediss://..., s3://bucket/prefix (?readonly=1)")
    remote_cache_readonly: bool = _opt(False, _parse_bool, False, "read the remote cache, never write to it "
                                       "(untrusted jobs such as pull requests)")
    remote_cache_timeout: float = _opt(1.0, float, False, "seconds a connection to or a read from the remote "
                                       "cache may take; past it the remote is off for the rest of the process")
    src_ll_cache: bool = _opt(True, _parse_bool, False, "fastcache master switch")
    print_non_pure: bool = _opt(False, _parse_bool, False, "print kernels not marked fastcache=True")
    log_level: str = _opt("info", _parse_level, False, "trace, debug, info, warn, error, critical")
    cpu_max_num_threads: int = _opt(0, int, False, "threads for parallel loops (0: all cores)")
    random_seed: int = _opt(0, _parse_seed, False, "seed of qd.random() (passed at launch, not compiled in: "
                            "no cache key holds it); the same seed and program draw the same numbers")  # fmt: skip
    print_ir: bool = _opt(False, _parse_bool, False, "print quadrants IR of each compiled kernel")
    dump: str = _opt("", str, False, "comma list of ir,llvm,opt,asm,ptx to write under debug_dump_path")
    dump_ir: bool = _opt(False, _parse_bool, False, "Quadrants' switch: write each compiled kernel's IR, LLVM "
                         "module and (CUDA) PTX under debug_dump_path (as dump=ir,llvm,ptx)")  # fmt: skip
    debug_dump_path: str = _opt("/tmp/ir/", str, False, "directory for `dump` / `dump_ir` (Quadrants' default)")
    load_ir: bool = _opt(False, _parse_bool, False, "compile each kernel from its LLVM module in debug_dump_path "
                         "(`<symbol>.ll`, written by dump=llvm / dump_ir and edited by hand); both caches off")  # fmt: skip
    load_ptx: bool = _opt(False, _parse_bool, False, "CUDA: assemble each kernel's PTX from debug_dump_path "
                          "(`<symbol>.<sm>.ptx`, written by dump=ptx / dump_ir and edited by hand); both caches off")  # fmt: skip
    unrolling_limit: int = _opt(32, int, False, "warn when qd.static(range) unrolls more iterations")
    ad_stack_experimental_enabled: bool = _opt(False, _parse_bool, True, "reverse mode: differentiate dynamic "
                                               "inner loops (with the adstack for the locals they carry)")
    ad_stack_size: int = _opt(0, _parse_stack_size, True, "slots of each adstack (0: passes/autodiff/adstack.py's "
                              "default); a loop of n iterations needs n + 1, more is an 'Adstack overflow' error")
    linker: str = _opt("auto", str, False, "system linker for cached shared objects: auto (ld), a path, or none")
    record: str = _opt("", str, False, "append the signature of each kernel call to this file (qd record)")
    cuda_emulate: bool = _opt(False, _parse_bool, False, "arch=cuda runs the CUDA backend's code on the CPU (an "
                              "emulator, to test that backend without a GPU)")  # fmt: skip
    cuda_arch: str = _opt("", str, False, "GPU architecture to compile for (sm_80, ...); default: the device's")
    device_memory_GB: float = _opt(1.0, float, False, "GiB of device memory each sparse SNode tree reserves for "
                                   "its pointer/dynamic cells on the CUDA backend (a full pool is an error)")
    cuda_stack_limit: int = _opt(0, int, False, "call stack bytes per GPU thread (0: the driver's default); deep "
                                 "recursion of real functions needs more")  # fmt: skip
    ptx_check: str = _opt("", str, False, "also compile each kernel to PTX for these GPU archs (sm_80,...) and "
                          "validate it with ptxas (the test suite's CUDA check)")  # fmt: skip
    verify_passes: bool = _opt(False, _parse_bool, False, "verify the IR after every pass, naming the pass that "
                               "broke it (the test suite sets it; a normal compile verifies before and after "
                               "the whole pipeline)")  # fmt: skip

    # the accepted options given (argument or QD_* variable), as (name, value) pairs: see ACCEPTED_OPTIONS
    accepted: tuple[tuple[str, Any], ...] = field(default=(), metadata={"parse": tuple, "compile": False,
                                                  "doc": "accepted options of real Quadrants that change nothing here"})  # fmt: skip

    def __getattr__(self, name: str) -> Any:
        """An accepted option of real Quadrants (ACCEPTED_OPTIONS) reads as given, else as its default."""
        default = ACCEPTED_OPTIONS.get(name)
        if default is None or name.startswith("__"):
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        return dict(self.accepted).get(name, default)

    @property
    def bounds_checked(self) -> bool:
        return self.debug or self.check_out_of_bound

    @property
    def num_threads(self) -> int:
        return self.cpu_max_num_threads if self.cpu_max_num_threads > 0 else _default_threads()

    @property
    def dump_stages(self) -> frozenset[str]:
        chosen = frozenset(s.strip() for s in self.dump.split(",") if s.strip())
        return chosen | ({"ir", "llvm", "ptx"} if self.dump_ir else set())


# Options real Quadrants accepts that have no effect here; accepted so programs run unchanged. Those with a value
# here are also readable on the Config (`qd.lang.impl.current_cfg().advanced_optimization`), with this default
# (1.3.3's) or what `qd.init` / their QD_* variable gave (parsed by the default's type); `None`: accepted only,
# as in Quadrants, whose CompileConfig has no such attribute. None of them changes code or enters a cache key.
ACCEPTED_OPTIONS: dict[str, Any] = {
    "advanced_optimization": True, "device_memory_fraction": 0.0, "kernel_profiler": False,
    "num_compile_threads": 4, "gdb_trigger": False, "default_gpu_block_dim": 128,
    "print_kernel_llvm_ir": False, "print_accessor_ir": False, "make_thread_local": True, "make_block_local": True,
    "cfg_optimization": True, "ad_stack_sparse_threshold_bytes": 104857600, "auto_mesh_local_default_occupacy": 4,
    "cache_loop_invariant_global_vars": True, "default_cpu_block_dim": 32, "demote_dense_struct_fors": True,
    "demote_no_access_mesh_fors": True, "detect_read_only": True, "experimental_auto_mesh_local": False,
    "external_metal_command_queue": 0, "external_metal_command_queue_is_torch_queue": False, "flatten_if": False,
    "force_scalarize_matrix": False, "half2_vectorization": False, "make_cpu_multithreading_loop": True,
    "make_mesh_block_local": True, "max_block_dim": 1024, "mesh_localize_all_attr_mappings": False,
    "mesh_localize_from_end_mapping": False, "mesh_localize_to_end_mapping": True,
    "move_loop_invariant_outside_if": False, "optimize_mesh_reordered_mapping": True, "print_ir_dbg_info": False,
    "print_kernel_amdgcn": False, "print_kernel_asm": False, "print_kernel_llvm_ir_optimized": False,
    "print_preprocessed_ir": False, "print_struct_llvm_ir": False, "quant_opt_atomic_demotion": True,
    "quant_opt_store_fusion": True, "raise_on_templated_floats": False, "real_matrix_scalarize": True,
    "saturating_grid_dim": 0, "timeline": False, "vk_api_version": "",
    # accepted, not readable (not on 1.3.3's CompileConfig either)
    "short_circuit_operators": None, "print_full_traceback": None, "require_version": None, "_test_mode": None,
    "verbose": None, "external_optimization_level": None, "fast_math_f64": None, "default_up": None,
}  # fmt: skip
IGNORED_OPTIONS = frozenset(ACCEPTED_OPTIONS)


def _parse_like(default: Any, value: Any) -> Any:
    """An accepted option's value, of its default's type (an environment variable's text, or an argument)."""
    if isinstance(default, bool):
        return _parse_bool(value)
    if isinstance(default, (int, float)) and isinstance(value, str):
        return type(default)(value)
    return value


FIELDS = {f.name: f for f in dataclasses.fields(Config) if f.name != "accepted"}  # the options (accepted: above)


ENV_NAMES = {"load_ptx": "QUADRANTS_LOAD_PTX"}  # Quadrants' names that are not QD_<OPTION>


def env_name(option: str) -> str:
    return ENV_NAMES.get(option) or "QD_" + option.upper()


def check_ir_loading(arch: Any, load_ir: bool, load_ptx: bool, offline_cache: bool, src_ll_cache: bool) -> None:
    """Quadrants' rule for hand-edited IR and PTX (backends/dumps.py): a kernel reads its replacement only when it
    is compiled, so while a cache can hand it back without compiling (either cache on), qd.init refuses the switch
    rather than run the old code without a word. QD_LOAD_IR concerns the LLVM backends (`arch`: the one chosen),
    QUADRANTS_LOAD_PTX only CUDA's."""
    active = [name for name, on in (("QD_LOAD_IR", load_ir and arch in LLVM_ARCHS),
                                    ("QUADRANTS_LOAD_PTX", load_ptx and arch is cuda)) if on]  # fmt: skip
    if active and (offline_cache or src_ll_cache):
        names = " and ".join(active)
        raise ValueError(f"{names} replace{'s' if len(active) == 1 else ''} what a kernel compiles with files from "
                         "debug_dump_path, which only a kernel being compiled reads: one found in the offline cache "
                         "or the fastcache would run its old code. Pass offline_cache=False and src_ll_cache=False "
                         f"to qd.init, or unset {names}.")  # fmt: skip


def check_environment(environ: dict[str, str] | None = None) -> str | None:
    """Why a QD_* variable of the environment is malformed, or None (the `qd` commands check this first)."""
    try:
        load_config({}, environ)
    except ValueError as e:
        return str(e)
    return None


def load_config(kwargs: dict[str, Any], environ: dict[str, str] | None = None) -> tuple[Config, list[str]]:
    """Build a Config from `qd.init` keyword arguments and the environment.

    Returns the config and the warnings to show (an argument overriding a set environment variable).
    Raises KeyError for unknown options (as Quadrants does) and ValueError for malformed values.
    """
    env = os.environ if environ is None else environ
    values: dict[str, Any] = {}
    notes: list[str] = []
    unknown = [k for k in kwargs if k not in FIELDS and k not in IGNORED_OPTIONS]
    if unknown:
        raise KeyError(f"Unrecognized keyword argument(s) for qd.init: {', '.join(unknown)}")
    set_by_qd = set(env.get("QD_SET_BY_QD", "").split(","))  # variables a `qd` command set for the project
    accepted = []
    for name, default in ACCEPTED_OPTIONS.items():
        if default is None:
            continue
        text = env.get(env_name(name), "")
        try:
            if name in kwargs and kwargs[name] is not None:
                accepted.append((name, _parse_like(default, kwargs[name])))
            elif text:
                accepted.append((name, _parse_like(default, text)))
        except (ValueError, TypeError) as e:
            raise ValueError(f"invalid qd.init argument or {env_name(name)} for {name}: {e}") from None
    if accepted:
        values["accepted"] = tuple(accepted)
    for name, f in FIELDS.items():
        parse = f.metadata["parse"]
        text = env.get(env_name(name), "")
        if name == "offline_cache_file_path" and not text:
            text = env.get("QD_CACHE_DIR", "")
        if name in kwargs and kwargs[name] is not None:
            try:
                values[name] = parse(kwargs[name])
            except (ValueError, TypeError) as e:
                raise ValueError(f"invalid qd.init argument {name}={kwargs[name]!r}: {e}") from None
            if text and env_name(name) not in set_by_qd:
                notes.append(f"Environment variable {env_name(name)}={text} overridden by qd.init argument {name!r}")
        elif text:
            try:
                values[name] = parse(text)
            except (ValueError, TypeError) as e:
                raise ValueError(f"invalid {env_name(name)}={text!r}: {e}") from None
    return Config(**values), notes


def cache_root(config: Config, environ: dict[str, str] | None = None) -> str:
    """The cache directory: `offline_cache_file_path` (or QD_CACHE_DIR), else `$XDG_CACHE_HOME/quadrants-fastcache`,
    else `~/.cache/quadrants-fastcache`. Entries live below it in a folder per cache format version."""
    if config.offline_cache_file_path:
        return config.offline_cache_file_path
    env = os.environ if environ is None else environ
    base = env.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "quadrants-fastcache")


def with_target(config: Config, target: str | Target) -> Config:
    """`config` compiling for another target: `cuda:sm_80` (the CUDA backend for that GPU; no GPU needed to
    compile), else a CPU target (`host`, `x86-64-v3`, ...)."""
    import dataclasses

    t = as_target(target)
    if t.is_cuda:
        return dataclasses.replace(config, arch=cuda, cuda_arch=t.name, cuda_emulate=False)
    return dataclasses.replace(config, cpu_target=t.name)


def compile_relevant(config: Config) -> dict[str, str]:
    """The options that change generated code, as printable strings: the cache keys' config part."""
    out = {}
    for name, f in FIELDS.items():
        if f.metadata["compile"]:
            out[name] = str(getattr(config, name))
    out["bounds_checked"] = str(config.bounds_checked)
    return out


def describe() -> list[tuple[str, str, str, bool, str]]:
    """(option, env var, default, compile-relevant, doc) for every option: used by docs and `qd` help."""
    return [
        (n, env_name(n), repr(f.default), bool(f.metadata["compile"]), f.metadata["doc"]) for n, f in FIELDS.items()
    ]


# ---- process variables: not qd.init options ------------------------------------------------------------

PROCESS_VARIABLES = {
    "QD_CACHE_DIR": "the cache directory when offline_cache_file_path (QD_OFFLINE_CACHE_FILE_PATH) is not set",
    "QD_SET_BY_QD": "comma list of the QD_* variables a `qd` command set for the project (qd.init arguments "
    "override those without a warning)",
    "QD_CUDA_DEVICE": "ordinal of the GPU the CUDA backend opens (default 0)",
    "QD_LIBDEVICE": "path of libdevice.10.bc (GPU math), tried before the CUDA toolkit's",
    "CUDA_HOME": "the CUDA toolkit's folder (libdevice, ptxas), tried before CUDA_PATH and /usr/local/cuda",
    "CUDA_PATH": "the CUDA toolkit's folder, when CUDA_HOME is not set",
    "QD_REMOTE_CACHE_SECRET": "key that signs (HMAC-SHA256) every entry pushed to the remote cache; when set, "
    "unsigned or badly signed remote entries are ignored (a secret: not an option, never in a Config)",
    "REDISCLI_AUTH": "the Redis password when the remote cache's URL has none (as redis-cli reads it)",
    "QD_PERFDISPATCH_FORCE": "comma list of dispatcher:implementation pairs: a qd.perf_dispatch always runs the "
    "named implementation instead of timing them",
    "QD_STATS_FILE": "when the process exits, qd.stats() is written to this file as JSON (qd precompile's warm-up "
    "runs count what a program compiled)",
}


def _env(environ: Mapping[str, str] | None) -> Mapping[str, str]:
    return os.environ if environ is None else environ


def cuda_device(environ: Mapping[str, str] | None = None) -> int:
    """QD_CUDA_DEVICE: the GPU ordinal the CUDA backend opens (ValueError when it is not an integer)."""
    return int(_env(environ).get("QD_CUDA_DEVICE", "0"))


def libdevice_override(environ: Mapping[str, str] | None = None) -> str:
    """QD_LIBDEVICE: a libdevice.10.bc to use before any found in a CUDA toolkit ("" when unset)."""
    return _env(environ).get("QD_LIBDEVICE", "")


def cuda_toolkit_homes(environ: Mapping[str, str] | None = None) -> list[str]:
    """Folders that may hold the CUDA toolkit, in the order they are tried: CUDA_HOME, CUDA_PATH, /usr/local/cuda."""
    env = _env(environ)
    return [h for h in (env.get("CUDA_HOME"), env.get("CUDA_PATH"), "/usr/local/cuda") if h]


def perf_dispatch_force(environ: Mapping[str, str] | None = None) -> str:
    """QD_PERFDISPATCH_FORCE, "disp1:impl1,disp2:impl2" (parsed by quadrants.lang._perf_dispatch)."""
    return _env(environ).get("QD_PERFDISPATCH_FORCE", "")


def stats_file(environ: Mapping[str, str] | None = None) -> str:
    """QD_STATS_FILE: where the process writes qd.stats() as JSON when it exits ("" when unset)."""
    return _env(environ).get("QD_STATS_FILE", "")


def log_level_for_project(environ: Mapping[str, str] | None = None) -> str:
    """The QD_LOG_LEVEL a project runs with under a `qd` command: the user's, else "warn"."""
    return _env(environ).get("QD_LOG_LEVEL", "warn")


def quiet_logging_under_qd(environ: MutableMapping[str, str] | None = None) -> None:
    """Under `qd`, the project logs warnings and errors only: set QD_LOG_LEVEL=warn unless the user set it, and
    mark it in QD_SET_BY_QD, so a qd.init(log_level=...) in the project overrides it without a warning."""
    env = os.environ if environ is None else environ
    if "QD_LOG_LEVEL" not in env:
        env["QD_LOG_LEVEL"] = "warn"
        marked = [v for v in env.get("QD_SET_BY_QD", "").split(",") if v]
        env["QD_SET_BY_QD"] = ",".join([*marked, "QD_LOG_LEVEL"])


def remote_cache_secret(environ: Mapping[str, str] | None = None) -> bytes | None:
    """QD_REMOTE_CACHE_SECRET: the key signing remote cache entries (None when unset or empty)."""
    secret = _env(environ).get("QD_REMOTE_CACHE_SECRET", "")
    return secret.encode() if secret else None


def redis_password(environ: Mapping[str, str] | None = None) -> str | None:
    """REDISCLI_AUTH: the Redis password used when the remote cache's URL gives none."""
    return _env(environ).get("REDISCLI_AUTH") or None
