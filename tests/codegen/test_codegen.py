"""Codegen and the compile pipeline: valid LLVM for every construct, dumps, laziness of llvmlite."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np

import quadrants as qd

Nd = qd.types.NDArray


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
    assert 'define i32 @"qd_' in text["ll"] and "qd_rt1_parallel_for" in text["ll"]
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
