"""Code that LLVM's loop vectorizer (llvmlite 0.50: LLVM 22, built with assertions) aborted the process on, took
exponential time over, or compiled wrong.

A float `min`/`max` reduction in a loop LLVM knows to run 3 times (`for w in range(1, 4): v = qd.min(v, a[w])`)
made LoopVectorize's two cost models disagree, an assertion that kills the process (the host target and
x86-64-v3; found through `qd.simt.block.reduce_min` on the emulator); at 7 turns the same `llvm.maxnum` reduction
skipped the last 3 (tests/cuda/test_block_simt.py, eight warps). Compares and selects instead made a long unrolled
chain (`for w in qd.static(range(n)): v = qd.min(v, a[w])` over an ndarray) compile in time exponential in n (2 s
at 12, over a minute at 16), and a `freeze` behind `llvm.maxnum` was moved onto its operand by InstCombine. Float
min/max are `llvm.minimumnum` / `maximumnum` (codegen/math.py `float_min_max`): with fast math's `nsz` the same
x86 and PTX instructions, 1.3.3's results (NaN operands, signed zeros). Each case runs in a child process, so a
regression fails here instead of killing or hanging the test run.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import quadrants as qd

CHILD = textwrap.dedent(
    """
    import json, sys
    import numpy as np
    import quadrants as qd

    qd.init(arch=qd.cpu, offline_cache=False, log_level="warn", cpu_target=sys.argv[1])
    out = {}
    for dt, npt in ((qd.f32, np.float32), (qd.f64, np.float64)):
        a = qd.field(dt, shape=64)
        r = qd.field(dt, shape=(2, 64))

        @qd.kernel
        def k(n: qd.template()):
            for i in range(64):
                lo = a[i]
                hi = a[i]
                for w in range(1, n):
                    lo = qd.min(lo, a[w])
                    hi = qd.max(hi, a[w])
                r[0, i] = lo
                r[1, i] = hi

        a.from_numpy(np.random.default_rng(0).standard_normal(64).astype(npt))
        for n in range(1, 10):
            k(n)
            out[f"{npt.__name__}-{n}"] = r.to_numpy().tolist()
    print(json.dumps(out))
    """
)


@pytest.mark.slow
@pytest.mark.parametrize("target", ["host", "x86-64-v3"])
def test_float_min_max_reductions_of_every_short_trip_count_compile(target: str, tmp_path: Path) -> None:
    script = tmp_path / "child.py"  # (kernels are read from their source file)
    script.write_text(CHILD)
    proc = subprocess.run([sys.executable, str(script), target], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    for npt in (np.float32, np.float64):
        a = np.random.default_rng(0).standard_normal(64).astype(npt)
        for n in range(1, 10):
            lo = np.minimum(a, a[1:n].min()) if n > 1 else a
            hi = np.maximum(a, a[1:n].max()) if n > 1 else a
            np.testing.assert_array_equal(got[f"{npt.__name__}-{n}"], [lo, hi])


HANG_CHILD = textwrap.dedent(
    """
    import sys
    import numpy as np
    import quadrants as qd

    qd.init(arch=qd.cpu, offline_cache=False, log_level="warn")

    @qd.kernel
    def k(a: qd.types.NDArray[qd.f32, 1], r: qd.types.NDArray[qd.f32, 1], n: qd.template()):
        for i in range(r.shape[0]):
            lo = a[i]
            hi = a[i]
            for w in qd.static(range(n)):
                lo = qd.min(lo, a[w])
                hi = qd.max(hi, a[w])
            r[i] = lo + hi

    a = np.random.default_rng(0).standard_normal(64).astype(np.float32)
    r = np.zeros(64, np.float32)
    k(a, r, 32)
    assert np.allclose(r, np.minimum(a, a[:32].min()) + np.maximum(a, a[:32].max()))
    print("ok")
    """
)


@pytest.mark.slow
def test_a_long_unrolled_chain_of_float_min_max_compiles_in_linear_time(tmp_path: Path) -> None:
    """32 steps: about a second here; a compare-and-select lowering would not finish (exponential in the chain's
    length). The limit is a hang guard, not a speed target."""
    script = tmp_path / "child.py"
    script.write_text(HANG_CHILD)
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0 and proc.stdout.strip().endswith("ok"), proc.stderr[-2000:]


def test_float_min_max_keep_minnums_results_for_nans_and_signed_zeros() -> None:
    """A NaN operand gives the other one (NaN only when both are); of two equal values, the first: as 1.3.3 gives
    (its `llvm.minnum` / `maxnum` on x86)."""
    qd.init(arch=qd.cpu, offline_cache=False, log_level="warn")

    @qd.kernel
    def k(a: qd.types.NDArray[qd.f32, 1], b: qd.types.NDArray[qd.f32, 1], o: qd.types.NDArray[qd.f32, 2]):
        for i in range(a.shape[0]):
            o[0, i] = qd.min(a[i], b[i])
            o[1, i] = qd.max(a[i], b[i])

    a = np.array([np.nan, 1, -0.0, 0.0, np.nan, 2], np.float32)
    b = np.array([1, np.nan, 0.0, -0.0, np.nan, 3], np.float32)
    o = np.zeros((2, 6), np.float32)
    k(a, b, o)
    np.testing.assert_array_equal(o[0], [1, 1, -0.0, 0.0, np.nan, 2])
    np.testing.assert_array_equal(o[1], [1, 1, -0.0, 0.0, np.nan, 3])
    np.testing.assert_array_equal(np.signbit(o), [[0, 0, 1, 0, 0, 0], [0, 0, 1, 0, 0, 0]])
