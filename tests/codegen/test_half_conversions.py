"""f16 on CPU targets without F16C instructions (x86-64-v2 and older): LLVM lowers the conversions to the compiler
runtime's `__extendhfsf2` / `__truncsfhf2` / `__truncdfhf2`, which the native runtime defines (codegen/runtime.ll):
before, such code (a `qd precompile --target x86-64-v2` of an f16 kernel) failed to load ("Symbols not found").
Checked bit for bit against numpy: every half to f32, and f32 / f64 to half (rounding to nearest even, overflow to
infinity, subnormals, signed zeros, NaNs) on the v2 target, where the helpers run, and on the host."""

from __future__ import annotations

import platform

import numpy as np
import pytest

import quadrants as qd

pytestmark = pytest.mark.skipif(platform.machine().lower() not in ("x86_64", "amd64"), reason="x86-64 targets")


def _same(got: np.ndarray, want: np.ndarray) -> None:
    bits = {2: np.uint16, 4: np.uint32}[got.itemsize]
    differ = (got.view(bits) != want.view(bits)) & ~(np.isnan(got) & np.isnan(want))
    assert not differ.any(), (np.flatnonzero(differ)[:5], got[differ][:5], want[differ][:5])


@pytest.mark.parametrize("target", ["x86-64-v2", "host"])
def test_half_conversions_are_exact_on_targets_with_and_without_f16c(target: str) -> None:
    qd.init(arch=qd.cpu, offline_cache=False, log_level="warn", cpu_target=target)

    @qd.kernel
    def up(h: qd.types.NDArray[qd.f16, 1], f: qd.types.NDArray[qd.f32, 1]):
        for i in range(h.shape[0]):
            f[i] = qd.cast(h[i], qd.f32)

    @qd.kernel
    def down(f: qd.types.NDArray[qd.f32, 1], d: qd.types.NDArray[qd.f64, 1], hf: qd.types.NDArray[qd.f16, 1],
             hd: qd.types.NDArray[qd.f16, 1]):  # fmt: skip
        for i in range(f.shape[0]):
            hf[i] = qd.cast(f[i], qd.f16)
            hd[i] = qd.cast(d[i], qd.f16)

    every = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16).view(np.float16)
    f = np.zeros(every.size, np.float32)
    up(every, f)
    _same(f, every.astype(np.float32))

    rng = np.random.default_rng(0)
    edges = [65504, 65519.99, 65520, 1e9, -np.inf, np.inf, np.nan, 0.0, -0.0, 2**-25, 2**-24 * 1.5, 2**-24 * 2.5,
             2**-14 * (1 - 2**-11), 6.1e-5, -3.0e-8]  # fmt: skip
    x = np.concatenate([rng.standard_normal(50000) * 10.0 ** rng.integers(-9, 6, 50000), edges]).astype(np.float32)
    xd = x.astype(np.float64) * (1 + 1e-9)  # not f32 values: f64 -> f16 must not round twice
    hf, hd = np.zeros(x.size, np.float16), np.zeros(x.size, np.float16)
    down(x, xd, hf, hd)
    _same(hf, x.astype(np.float16))
    _same(hd, xd.astype(np.float16))
