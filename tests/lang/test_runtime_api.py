"""The runtime API programs reach beside the language: `qd.lang.impl.get_runtime()`, `qd._lib.core` /
`qd._lib.utils`, `qd.lang.ops`, the settings of `qd.init` (accepted options readable, `_test_mode`,
`require_version`, `QD_DUMP_IR`) and `qd.set_logging_level`. Oracles: Quadrants 1.3.3's values (its enum
numbers, defaults and counts) and what a kernel computes."""

from __future__ import annotations

import ctypes
import os

import numpy as np
import pytest

import quadrants as qd
from tests.conftest import qd_init
from tests.helpers import define


def test_the_runtime_reports_the_program_and_counts_specializations() -> None:
    rt = qd.lang.impl.get_runtime()
    assert rt.prog.config() is qd.cfg and rt._arch is qd.cfg.arch
    assert rt.prog.get_device_caps().get(qd._lib.core.DeviceCapability.spirv_has_float64) == 0
    assert rt.prog.get_device_caps().hashed_key()  # the device part of the cache keys
    ns = define("""
        @qd.kernel
        def k(x: qd.i32) -> qd.i32:
            return x

        @qd.kernel
        def t(a: qd.template()) -> qd.i32:
            return a
    """)
    assert rt.get_num_compiled_functions() == 0
    ns["k"](1), ns["k"](2)  # one specialization: the same argument types
    assert rt.get_num_compiled_functions() == 1
    ns["t"](1), ns["t"](2)  # a template value each
    assert rt.get_num_compiled_functions() == 3
    rt.materialize()
    assert rt.materialized


def test_set_default_fp_retypes_the_next_kernels() -> None:
    ns = define("""
        @qd.kernel
        def third() -> float:
            return 1.0 / 3.0
    """)
    assert ns["third"]() == pytest.approx(np.float32(1 / 3), abs=0)
    rt = qd.lang.impl.get_runtime()
    rt.set_default_fp(qd.f64)
    assert rt.default_fp is qd.f64
    assert ns["third"]() == 1 / 3  # recompiled under the new default: f64 literals and result
    rt.default_ip = qd.i64
    assert qd.cfg.default_ip is qd.i64


@pytest.mark.parametrize("ip", ["u32", "u64"])
def test_an_unsigned_default_ip_assigned_to_the_runtime_types_literals_and_int_unsigned(ip: str) -> None:
    """`get_runtime().default_ip = qd.u32` (qd.init refuses it, the attribute takes it, as in Quadrants): a literal
    is unsigned, so `0 - 1` and `1 - 5` wrap, and an `int` result is unsigned."""
    rt = qd.lang.impl.get_runtime()
    with pytest.raises(ValueError, match="default_ip must be i32 or i64"):
        rt.set_default_ip(getattr(qd, ip))
    with pytest.raises(ValueError, match="32- or 64-bit integer type"):
        rt.default_ip = qd.f32
    rt.default_ip = getattr(qd, ip)
    nt = np.dtype(np.uint32 if ip == "u32" else np.uint64)
    ns = define("""
        f = qd.field(qd.u64, shape=3)

        @qd.kernel
        def wrap():
            for i in range(2):
                a = 0
                f[i] = a - 1
            b = 3
            f[2] = b // 2 - 5

        @qd.kernel
        def minus_one(x: int) -> int:
            return x - 1
    """)
    ns["wrap"]()
    with np.errstate(over="ignore"):
        want = [nt.type(0) - nt.type(1)] * 2 + [nt.type(1) - nt.type(5)]
    assert ns["f"].to_numpy().tolist() == [int(w) for w in want]
    assert ns["minus_one"](0) == int(want[0])


def test_lib_core_arch_numbers_round_trip() -> None:
    """Genesis sends `int(qd.cfg.arch)` to a child process and rebuilds it with `qd._lib.core.Arch(n)`."""
    assert int(qd.cpu) == 0 and int(qd.cuda) == 4  # Quadrants 1.3.3's Arch enum values
    assert qd._lib.core.Arch(int(qd.cfg.arch)) is qd.cfg.arch  # the session's backend
    assert qd._lib.core.Arch.x64 is qd.cpu and qd._lib.core.Arch.cuda is qd.cuda
    assert qd._lib.core.Arch(int(qd.vulkan)) is qd.vulkan
    with pytest.raises(ValueError, match="no arch has the number 99"):
        qd._lib.core.Arch(99)
    from quadrants._config import gpu  # `qd.gpu` is a choice among GPUs (a list), not an arch

    with pytest.raises(TypeError, match="has no number"):
        int(gpu)


def test_lib_core_sizes_and_limits() -> None:
    core = qd._lib.core
    assert [core.data_type_size(t) for t in (qd.u8, qd.i16, qd.f32, qd.f64)] == [1, 2, 4, 8]
    assert core.get_max_num_indices() == 12 and core.with_metal() is False
    assert core.QuadrantsRuntimeError is qd.QuadrantsRuntimeError


def test_python_core_version_and_repo_dir(tmp_path) -> None:  # type: ignore[no-untyped-def]
    core = qd._lib.utils.import_qd_python_core()
    assert ".".join(str(f()) for f in (core.get_version_major, core.get_version_minor, core.get_version_patch)) \
        == qd.__version__  # fmt: skip
    libc = ctypes.CDLL(None)
    old = os.environ.get("XDG_CACHE_HOME")
    try:
        libc.setenv(b"XDG_CACHE_HOME", str(tmp_path).encode(), 1)  # the process environment, as os.putenv sets it
        assert core.get_repo_dir() == os.path.join(str(tmp_path), "quadrants") + os.sep
    finally:
        if old is None:
            libc.unsetenv(b"XDG_CACHE_HOME")
        else:
            libc.setenv(b"XDG_CACHE_HOME", old.encode(), 1)


def test_accepted_options_read_back_from_arguments_and_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    qd_init(advanced_optimization=False)
    cfg = qd.lang.impl.current_cfg()
    assert cfg.advanced_optimization is False and cfg.flatten_if is False and cfg.device_memory_GB == 1.0
    monkeypatch.setenv("QD_FLATTEN_IF", "1")
    monkeypatch.setenv("QD_DEVICE_MEMORY_FRACTION", "0.5")
    qd_init()
    cfg = qd.lang.impl.current_cfg()
    assert cfg.flatten_if is True and cfg.device_memory_fraction == 0.5 and cfg.advanced_optimization is True
    with pytest.raises(AttributeError, match="verbose"):  # accepted, but not on 1.3.3's config either
        getattr(cfg, "verbose")  # noqa: B009
    monkeypatch.setenv("QD_FLATTEN_IF", "maybe")
    with pytest.raises(ValueError, match="QD_FLATTEN_IF"):
        qd_init()


def test_init_test_mode_returns_the_settings_and_require_version_checks() -> None:
    spec = qd.init(arch=qd.cpu, _test_mode=True, log_level=qd.ERROR)
    assert spec is not None and spec.log_level == qd.ERROR and spec.gdb_trigger is False
    assert qd.init(arch=qd.cpu, log_level="warn") is None
    qd.init(arch=qd.cpu, require_version=qd.__version__, log_level="warn")
    major, minor, patch = (int(p) for p in qd.__version__.split("."))
    with pytest.raises(RuntimeError, match="version mismatch"):
        qd.init(arch=qd.cpu, require_version=f"{major}.{minor}.{patch + 1}")
    with pytest.raises(ValueError, match="major.minor.patch"):
        qd.init(arch=qd.cpu, require_version="latest")


def test_set_logging_level() -> None:
    qd.set_logging_level(qd.ERROR)
    assert not qd._logging.is_logging_effective(qd.WARN) and qd._logging.is_logging_effective(qd.ERROR)
    qd.set_logging_level(qd.TRACE)
    assert qd._logging.is_logging_effective(qd.DEBUG)
    qd.set_logging_level(qd.WARN)


def test_dump_ir_writes_the_ir_to_the_dump_path(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("QD_DUMP_IR", "1")
    qd.init(arch=qd.cpu, debug_dump_path=str(tmp_path), offline_cache=False)  # the CPU driver dumps (not CUDA's yet)
    ns = define("""
        @qd.kernel
        def k(x: qd.types.NDArray[qd.i32, 1]):
            x[0] = 7
    """)
    ns["k"](np.zeros(1, np.int32))
    dumped = list(tmp_path.glob("*.qd.txt"))
    assert len(dumped) == 1 and "7" in dumped[0].read_text()
    assert qd.init(arch=qd.cpu, _test_mode=True, log_level="warn").debug_dump_path == "/tmp/ir/"  # Quadrants'


def test_lang_ops_in_python_scope_and_in_kernels() -> None:
    ops = qd.lang.ops
    assert ops.logical_not(qd.Vector([2, 0])).to_numpy().tolist() == [0, 1]
    assert ops.abs(qd.Vector([-2.5, 3.0])).to_numpy().tolist() == [2.5, 3.0]
    assert (~qd.Vector([2, 3])).to_numpy().tolist() == [-3, -4]
    ns = define("""
        @qd.kernel
        def k(x: qd.i32) -> qd.i32:
            return qd.lang.ops.logical_not(x) * 100 + qd.lang.ops.add(x, 1)
    """)
    assert (ns["k"](0), ns["k"](3)) == (101, 4)


def test_clock_counter_counts_up_through_serial_work_and_rates_need_a_gpu() -> None:
    stamps = qd.field(qd.i64, 16)

    @qd.kernel
    def timed(reps: qd.i32):
        start = qd.clock_counter()  # in serial code too
        qd.loop_config(serialize=True)
        for i in range(16):
            x = 0.5
            for j in range((i + 1) * reps):
                x = qd.sin(x * 1.0001 + j * 1e-6) + 1.25
            if x < 10.0:  # keeps the work
                stamps[i] = qd.clock_counter() - start

    timed(500)
    t = stamps.to_numpy()
    assert (t > 0).all() and (np.diff(t) > 0).all()  # each read after the last: not merged or hoisted
    if qd.cfg.arch is qd.cpu:
        with pytest.raises(NotImplementedError, match="CUDA device"):
            qd.clock_freq_hz()


def test_extension_and_logging_queries_and_the_config_dump(capsys: pytest.CaptureFixture[str]) -> None:
    qd_init(ad_stack_experimental_enabled=False)
    assert qd.is_extension_enabled(qd.extension.sparse) and qd.is_extension_enabled(qd.extension.assertion)
    assert qd.is_extension_enabled(qd.extension.mesh)  # lang/mesh.py
    assert not qd.is_extension_enabled(qd.extension.bls)  # block-local storage: not implemented
    assert not qd.is_extension_enabled(qd.extension.adstack)  # supported, but not enabled
    qd_init(ad_stack_experimental_enabled=True)
    assert qd.is_extension_enabled(qd.extension.adstack)
    qd.set_logging_level("warn")
    assert qd.is_logging_effective("error") and not qd.is_logging_effective("info")
    qd.set_logging_level("info")
    qd.dump_compile_config()
    lines = capsys.readouterr().out.splitlines()
    assert lines == sorted(lines) and "ad_stack_experimental_enabled=True" in lines
    assert any(ln.startswith("arch=") for ln in lines)


def test_raise_on_templated_floats_refuses_floats_compiled_in() -> None:
    scale = 1.5

    def kernels():  # type: ignore[no-untyped-def]
        @qd.kernel
        def templated(a: qd.Template) -> qd.f32:
            return a * 2.0

        @qd.kernel
        def global_float() -> qd.f32:
            return scale

        return templated, global_float

    qd_init(raise_on_templated_floats=False)
    templated, global_float = kernels()
    assert templated(2) == 4.0 and templated(1.25) == 2.5 and global_float() == 1.5
    qd_init(raise_on_templated_floats=True)
    templated, global_float = kernels()
    assert templated(2) == 4.0  # ints are fine
    with pytest.raises(ValueError, match="template parameter 'a' got the float 1.25"):
        templated(1.25)
    with pytest.raises(qd.QuadrantsCompilationError, match="variable 'scale' is a float"):
        global_float()
