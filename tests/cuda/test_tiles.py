"""Register tiles (`qd.simt.Tile16x16` / `Tile32x32`: lang/simt/_tile.py, frontend/tiles.py) on the CUDA emulator
against numpy, compiled for the fleet through ptxas; the errors; a cross-process fastcache run; the CPU backend's
refusal."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

import quadrants as qd
from quadrants.lang.simt._tile import _make_tile
from tests.cuda.apps import gpu_images, run_twice

Nd = qd.types.NDArray
TILES = {16: qd.simt.Tile16x16, 32: qd.simt.Tile32x32}
NP = {qd.f32: np.float32, qd.f64: np.float64}


@pytest.fixture(autouse=True)
def emulated() -> None:
    qd.init(arch=qd.cuda, cuda_emulate=True, offline_cache=False, log_level="warn")


def _spd(n: int, npt: Any, seed: int = 0) -> np.ndarray:
    b = np.random.default_rng(seed).standard_normal((n, n))
    return (b @ b.T + n * np.eye(n)).astype(npt)


@pytest.mark.parametrize("n", [16, 32])
@pytest.mark.parametrize("dt", [qd.f32, qd.f64])
def test_cholesky_then_triangular_solve_match_numpy(n: int, dt: Any) -> None:
    T = TILES[n]

    @qd.kernel
    def k(a: Nd[dt, 2], rhs: Nd[dt, 2], factor: Nd[dt, 2]):
        qd.loop_config(block_dim=n)
        for _ in range(n):
            L = T.zeros(dtype=dt)
            L[:] = a[0:n, 0:n]
            L.cholesky_(1e-12)
            B = T.zeros(dtype=dt)
            B[:] = rhs[0:n, 0:n]
            L.solve_triangular_(B)
            rhs[0:n, 0:n] = B
            factor[0:n, 0:n] = L

    npt = NP[dt]
    a = _spd(n, npt)
    r = np.random.default_rng(1).standard_normal((n, n)).astype(npt)
    rhs, factor = r.copy(), np.zeros((n, n), npt)
    k(a, rhs, factor)
    want_l = np.linalg.cholesky(a.astype(np.float64))
    tol = 1e-4 if dt is qd.f32 else 1e-10
    np.testing.assert_allclose(np.tril(factor), want_l, atol=tol * 10)
    np.testing.assert_array_equal(np.triu(factor, 1), np.triu(a, 1))  # the strict upper triangle is A's
    np.testing.assert_allclose(rhs, r @ np.linalg.inv(want_l).T, atol=tol * 10)
    ptx = gpu_images(k).ptx["sm_80"]
    assert "shfl.sync.idx" in ptx and ".local" not in ptx.split("// .globl")[1][:200]  # registers, not memory


def test_the_pivot_floor_is_read_on_each_pivots_own_lane() -> None:
    """A singular matrix (all ones): every pivot after the first is floored; lane k's eps floors pivot k."""

    @qd.kernel
    def k(a: Nd[qd.f64, 2], eps: Nd[qd.f64, 1], out: Nd[qd.f64, 2]):
        qd.loop_config(block_dim=16)
        for i in range(16):
            L = qd.simt.Tile16x16.zeros(dtype=qd.f64)
            L[:] = a[0:16, 0:16]
            L.cholesky_(eps[i])
            out[0:16, 0:16] = L

    eps = (np.arange(16) + 1.0) ** 2
    out = np.zeros((16, 16))
    k(np.ones((16, 16)), eps, out)
    np.testing.assert_allclose(np.diag(out)[1:], np.sqrt(eps[1:]), rtol=1e-12)  # each floored by its own lane's eps
    assert out[0, 0] == 1.0


@pytest.mark.parametrize("tensor", ["ndarray", "field", "shared"])
def test_loads_and_stores_clip_to_the_slice_and_the_array(tensor: str) -> None:
    """Rows past the slice's stop or the array's last row are left alone, and so are columns."""
    src_np = np.arange(20 * 12, dtype=np.float32).reshape(20, 12) + 1
    if tensor == "field":
        src, dst = qd.field(qd.f32, shape=(20, 12)), qd.field(qd.f32, shape=(20, 12))
        src.from_numpy(src_np)
    else:
        src, dst = src_np, np.zeros((20, 12), np.float32)
    Ann = qd.Template if tensor == "field" else Nd[qd.f32, 2]

    @qd.kernel
    def k(src: Ann, dst: Ann):
        qd.loop_config(block_dim=16)
        for _ in range(16):
            t = qd.simt.Tile16x16.zeros()
            if qd.static(tensor == "shared"):
                sh = qd.simt.block.SharedArray((16, 16), qd.f32)
                u = qd.simt.Tile16x16.zeros()
                u[:] = src[4:20, 0:12]  # 16 rows, 12 of 16 columns
                sh[0:16, 0:16] = u
                qd.simt.block.sync()
                t[:] = sh[0:11, 0:16]  # rows 0..10 of the shared array
            else:
                t[:] = src[4:15, 0:30]  # 11 rows; columns clipped to the array's 12
            dst[2:20, 1:7] = t  # 16 rows, of which 16 fit: rows 2..17; columns 1..6 (the tile's first 6)

    k(src, dst)
    got = dst.to_numpy() if tensor == "field" else dst
    want = np.zeros((20, 12), np.float32)
    tile = np.zeros((16, 16), np.float32)
    tile[:11, :12] = src_np[4:15, :12]
    want[2:18, 1:7] = tile[:, :6]
    np.testing.assert_array_equal(got, want)


def test_batched_3d_slices_and_column_slices_for_rank_one_updates() -> None:
    """t -= qd.outer(v, v) with v = arr[b, r0:r1, col] (a column slice, zero past r1), and with per-lane values."""

    @qd.kernel
    def k(a: Nd[qd.f64, 3], vecs: Nd[qd.f64, 3], out: Nd[qd.f64, 3]):
        qd.loop_config(block_dim=16)
        for i in range(2 * 16):
            b = i // 16
            t = qd.simt.Tile16x16.zeros(dtype=qd.f64)
            t[:] = a[b, 0:16, 0:16]
            v = vecs[b, 0:12, 0]
            t -= qd.outer(v, v)
            w = vecs[b, 0:16, 1]
            lane = qd.f64(qd.simt.subgroup.invocation_id())
            t -= qd.outer(w, lane)
            out[b, 0:16, 0:16] = t

    rng = np.random.default_rng(2)
    a, vecs = rng.standard_normal((2, 16, 16)), rng.standard_normal((2, 16, 2))
    out = np.zeros((2, 16, 16))
    k(a, vecs, out)
    for b in range(2):
        v = np.where(np.arange(16) < 12, vecs[b, :, 0], 0.0)
        want = a[b] - np.outer(v, v) - np.outer(vecs[b, :, 1], np.arange(16.0))
        np.testing.assert_allclose(out[b], want, rtol=1e-12)


def test_tile_types_sizes_identity_and_default_dtype() -> None:
    assert _make_tile(16, qd.f32) is _make_tile(16, qd.f32) is _make_tile(16)
    assert _make_tile(16, qd.f64) is not _make_tile(16, qd.f32)
    assert _make_tile(32, qd.f64).SIZE == 32 and qd.simt.Tile16x16.SIZE == 16
    qd.init(arch=qd.cuda, cuda_emulate=True, offline_cache=False, log_level="warn", default_fp=qd.f64)
    T16 = _make_tile(16, qd.f64)

    @qd.kernel
    def k(out: Nd[qd.f64, 2], size: Nd[qd.i32, 1]):
        qd.loop_config(block_dim=16)
        for _ in range(16):
            t = qd.simt.Tile16x16.eye()  # the program's default float: f64
            t -= qd.outer(qd.f64(1e-12), qd.f64(1.0))  # kept in f64 (an f32 tile would round it away)
            out[0:16, 0:16] = t
            size[0] = T16.SIZE

    out, size = np.zeros((16, 16)), np.zeros(1, np.int32)
    k(out, size)
    np.testing.assert_allclose(out, np.eye(16) - 1e-12, rtol=0, atol=1e-20)
    assert size[0] == 16


def _error_of(body: str, arr_shape: tuple[int, ...] = (16, 16)) -> Exception:
    ns: dict[str, Any] = {}
    from tests.helpers import define

    ns = define(f"""
        @qd.kernel
        def k(a: qd.types.NDArray[qd.f32, {len(arr_shape)}]):
            qd.loop_config(block_dim=16)
            for _ in range(16):
                t = qd.simt.Tile16x16.zeros()
                {body}
    """)
    with pytest.raises(Exception) as e:
        ns["k"](np.zeros(arr_shape, np.float32))
    return e.value


def test_misuse_is_refused_with_the_location() -> None:
    e = _error_of("t[:] = a[:16, 0:16]")
    assert isinstance(e, qd.QuadrantsSyntaxError) and "both start and stop indices are required" in str(e)
    assert "Negative indices" in str(_error_of("a[0:16, -1:16] = t"))
    assert "step is not supported" in str(_error_of("t[:] = a[0:16:2, 0:16]"))
    e = _error_of("t += qd.outer(1.0, 2.0)")
    assert isinstance(e, TypeError) and "unsupported augmented assignment op 'add'" in str(e)
    e = _error_of("t -= qd.f32(1.0)")
    assert isinstance(e, TypeError) and "unsupported augmented assignment with a tile" in str(e)
    assert "only valid in tile operations" in str(_error_of("x = a[0:16, 0:16] + 1.0"))
    assert "batch index first" in str(_error_of("v = a[0:16, 0, 1]", (16, 4, 2)))
    assert "does not support composition" in str(_error_of("t -= qd.outer(1.0, 2.0) + qd.outer(3.0, 4.0)"))
    with pytest.raises(TypeError, match="does not support composition"):
        _ = qd.outer(1, 2) + qd.outer(3, 4)


def test_the_cpu_backend_refuses_tiles_with_the_location() -> None:
    qd.init(arch=qd.cpu, offline_cache=False, log_level="warn")

    @qd.kernel
    def k(a: Nd[qd.f32, 2]):
        for _ in range(16):
            t = qd.simt.Tile16x16.zeros(dtype=qd.f32)
            a[0:16, 0:16] = t

    with pytest.raises(qd.QuadrantsSyntaxError, match="requires a GPU backend") as e:
        k(np.zeros((16, 16), np.float32))
    assert "test_tiles.py" in str(e.value)


TILE_APP = """
import json
import numpy as np
import quadrants as qd
qd.init({init})

@qd.kernel(fastcache=True)
def k(a: qd.types.NDArray[qd.f32, 2], n: qd.Template):
    qd.loop_config(block_dim=n)
    for _ in range(n):
        L = qd.simt.Tile16x16.zeros()
        L[:] = a[0:n, 0:n]
        L.cholesky_(1e-9)
        a[0:n, 0:n] = L

b = np.random.default_rng(0).standard_normal((16, 16))
a = (b @ b.T + 16 * np.eye(16)).astype(np.float32)
want = np.linalg.cholesky(a.astype(np.float64))
k(a, 16)
o = k._primal.src_ll_cache_observations
print(json.dumps({{"err": float(np.abs(np.tril(a) - want).max()), "loaded": o.cache_loaded, "stored": o.cache_stored,
                  "compiles": qd.stats()["compiles"]}}))
"""


@pytest.mark.slow
def test_a_tile_kernel_loads_from_fastcache_in_a_new_process(tmp_path: Path) -> None:
    runs = run_twice(tmp_path, "arch=qd.cuda, cuda_emulate=True", TILE_APP)
    assert runs[0]["err"] < 1e-4 and runs[0]["stored"] and runs[0]["compiles"] == 1
    assert runs[1]["err"] == runs[0]["err"] and runs[1]["loaded"] and runs[1]["compiles"] == 0
