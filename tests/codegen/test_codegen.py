"""Codegen and the compile pipeline: valid LLVM for every construct, dumps, laziness of llvmlite."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

import quadrants as qd
from quadrants.runtime.abi import RUNTIME_ABI

Nd = qd.types.NDArray


@pytest.mark.slow
def test_import_does_not_load_llvmlite() -> None:
    code = "import sys, quadrants; print('llvmlite' in sys.modules, 'llvmlite.binding' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False False"


def test_dump_writes_every_stage(tmp_path) -> None:
    qd.init(arch=qd.cpu, dump="ir,llvm,opt,asm", debug_dump_path=str(tmp_path), log_level="warn")

    @qd.kernel
    def k(a: Nd[qd.f32, 1]):
        for i in range(a.shape[0]):
            a[i] = qd.sqrt(a[i])

    k(np.ones(4, np.float32))
    suffixes = sorted(p.name.split(".", 1)[1] for p in tmp_path.iterdir())
    assert suffixes == ["ll", "opt.ll", "qd.txt", "s"]
    text = {p.name.split(".", 1)[1]: p.read_text() for p in tmp_path.iterdir()}
    assert "for range" in text["qd.txt"] and "parallel" in text["qd.txt"]
    assert 'define i32 @"qd_' in text["ll"] and f"qd_rt{RUNTIME_ABI}_parallel_for" in text["ll"]
    assert "sqrt" in text["s"]


def test_print_ir_setting(capfd) -> None:
    qd.init(arch=qd.cpu, print_ir=True, log_level="warn")

    @qd.kernel
    def k(x: qd.i32) -> qd.i32:
        return x + 1

    assert k(1) == 2
    assert "kernel " in capfd.readouterr().out


def test_opt_levels_give_the_same_results() -> None:
    x = np.random.default_rng(0).random(10_000).astype(np.float32)
    results = []
    for level in (0, 1, 3):
        qd.init(arch=qd.cpu, opt_level=level, log_level="warn")

        @qd.kernel
        def k(a: Nd[qd.f32, 1], out: Nd[qd.f32, 1]):
            for i in range(a.shape[0]):
                v = a[i]
                n = 0
                while v > 0.01:
                    v = v * 0.5
                    n += 1
                out[i] = v * n

        out = np.zeros_like(x)
        k(x, out)
        results.append(out)
    np.testing.assert_array_equal(results[0], results[1])
    np.testing.assert_array_equal(results[0], results[2])


@pytest.mark.slow
def test_environment_settings_apply(tmp_path) -> None:
    code = (
        "import quadrants as qd\n"
        "from quadrants.lang.program import get\n"
        "qd.init()\n"
        "c = get().config\n"
        "print(c.debug, c.opt_level, c.default_fp, c.cpu_max_num_threads)\n"
    )
    env = {**os.environ, "QD_DEBUG": "1", "QD_OPT_LEVEL": "0", "QD_DEFAULT_FP": "64", "QD_CPU_MAX_NUM_THREADS": "3",
           "QD_LOG_LEVEL": "warn"}  # fmt: skip
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True).stdout
    assert out.split() == ["True", "0", "f64", "3"]


def test_stats_count_compiles_and_stage_times() -> None:
    before = qd.stats()["compiles"]

    @qd.kernel
    def k(x: qd.i32) -> qd.i32:
        return x * 3

    k(1)
    k(2)
    s = qd.stats()
    assert s["compiles"] == before + 1
    assert {"frontend", "lower", "llvm_opt", "llvm_codegen"} <= set(s["stage_seconds"])


def test_the_runtime_abi_is_in_the_runtime_symbols_and_the_keys() -> None:
    """One RUNTIME_ABI (runtime/abi.py) names the runtime's exports, is in every cache key, and is what the
    loader probes for; the runtime IR has no other version written into it."""
    from quadrants.backends import device_key
    from quadrants.cache import keys
    from quadrants.codegen import runtime_ir
    from quadrants.runtime.loader import RUNTIME_SYMBOL_PROBE

    text = runtime_ir.runtime_module_text("x86_64-unknown-linux-gnu", "")
    assert f"define void @qd_rt{RUNTIME_ABI}_parallel_for(" in text and RUNTIME_SYMBOL_PROBE in text
    assert runtime_ir.PARALLEL_FOR == RUNTIME_SYMBOL_PROBE and "{{" not in text
    config = qd.lang.program.get().config
    assert keys.runtime_parts(config, device_key(config))["runtime_abi"] == str(RUNTIME_ABI)


def test_a_changed_runtime_bumps_the_runtime_abi() -> None:
    """runtime.ll cannot change without a new RUNTIME_ABI: cached kernels built against the old runtime would
    link against the new one (the digest pins the text the current ABI number was given to)."""
    import hashlib
    from pathlib import Path

    from quadrants.runtime.abi import RUNTIME_LL_DIGEST

    text = (Path(qd.__file__).parent / "codegen" / "runtime.ll").read_bytes()
    digest = hashlib.sha256(text).hexdigest()[:16]
    assert RUNTIME_LL_DIGEST == (RUNTIME_ABI, digest), (
        f"codegen/runtime.ll changed (digest {digest}): bump RUNTIME_ABI in runtime/abi.py and set "
        f"RUNTIME_LL_DIGEST = ({RUNTIME_ABI + 1}, {digest!r})"
    )


def test_float_powers_with_integer_exponents_need_no_libgcc() -> None:
    """`x ** n` (float base, integer exponent) becomes llvm.powi, a call to __powisf2/__powidf2: the native
    runtime defines them, so kernels loaded from the cache (dlopen) find them. Checked against Python."""
    qd.init(arch=qd.cpu)

    @qd.kernel
    def p32(x: qd.f32, n: qd.i32) -> qd.f32:
        return x**n

    @qd.kernel
    def p64(x: qd.f64, n: qd.i64) -> qd.f64:
        return x**n

    for x in (-6.66, -1.5, 0.5, 2.0):
        for n in (-10, -3, -1, 0, 1, 2, 7):
            assert np.isclose(p32(x, n), np.float32(x) ** n, rtol=1e-5)
            assert np.isclose(p64(x, n), x**n, rtol=1e-12)


def test_divisions_by_square_roots_are_correctly_rounded() -> None:
    """Fast-math must not turn 1 / sqrt(x) into the CPU's reciprocal square root estimate (an ulp off on
    AVX-512 machines: 1 / sqrt(4) was 0.49999997): scalar, through a local, and vectorized, against numpy's
    correctly rounded float32 arithmetic."""
    import numpy as np

    import quadrants as qd

    @qd.kernel
    def scalar(x: qd.f32) -> qd.f32:
        n = qd.sqrt(x)
        return 1.0 / n

    @qd.kernel
    def vectorized(a: qd.types.NDArray[qd.f32, 1], out: qd.types.NDArray[qd.f32, 1]):
        for i in range(a.shape[0]):
            out[i] = 1.0 / qd.sqrt(a[i]) + a[i] / qd.sqrt(a[i] + 1.0)

    assert scalar(4.0) == 0.5 and scalar(2.0) == float(np.float32(1) / np.sqrt(np.float32(2)))
    a = np.random.default_rng(0).uniform(0.01, 100.0, 4096).astype(np.float32)
    out = np.zeros_like(a)
    vectorized(a, out)
    one = np.float32(1)
    np.testing.assert_array_equal(out, one / np.sqrt(a) + a / np.sqrt(a + one))
