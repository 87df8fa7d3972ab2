"""Names of real Quadrants' API that programs use at import and in decorators: other archs (with the CPU
fallback), extensions, qd.pure, qd.cfg, qd.real_func, qd.Layout, the type predicates, qd.bit_shr,
qd.atomic_exchange / qd.atomic_cas, and the rest of quadrants.math (checked against numpy / Python complex)."""

from __future__ import annotations

import cmath
import math
import warnings

import numpy as np
import pytest

import quadrants as qd
from tests.conftest import backend_kwargs, qd_init

Nd = qd.types.NDArray


# ---- archs, extensions, init ----------------------------------------------------------------------------------


@pytest.mark.parametrize("arch", ["vulkan", "metal", "amdgpu", "opengl", "gles", "dx11"])
def test_other_archs_fall_back_to_the_cpu(arch: str, caplog: pytest.LogCaptureFixture) -> None:
    qd.init(arch=getattr(qd, arch))
    assert qd.cfg.arch == qd.cpu
    with pytest.raises(RuntimeError, match="enable_fallback=False"):
        qd.init(arch=getattr(qd, arch), enable_fallback=False)
    qd_init()


def test_gpu_is_a_list_of_archs_as_in_quadrants() -> None:
    assert isinstance(qd.gpu, list) and qd.cuda in qd.gpu and qd.vulkan in qd.gpu
    assert qd.x64 == qd.cpu and qd.arm64 == qd.cpu


def test_extensions() -> None:
    assert qd.is_extension_supported(qd.cpu, qd.extension.data64)
    assert qd.is_extension_supported(qd.cpu, qd.extension.assertion)
    assert qd.is_extension_supported(qd.cpu, qd.extension.adstack)  # passes/autodiff/adstack.py
    assert qd.is_extension_supported(qd.cpu, qd.extension.sparse)  # lang/snode.py's sparse nodes
    assert qd.is_extension_supported(qd.cpu, qd.extension.quant)  # lang/bitpacked.py, codegen/quant.py
    assert qd.is_extension_supported(qd.cuda, qd.extension.quant_basic)
    assert qd.is_extension_supported(qd.cpu, qd.extension.mesh)  # lang/mesh.py, frontend/mesh.py
    assert not qd.is_extension_supported(qd.cpu, qd.extension.bls)  # not implemented here: programs skip
    assert qd.is_extension_supported(qd.cuda, qd.extension.sparse)  # sparse SNodes: both backends (device pool)
    assert not qd.is_extension_supported(qd.vulkan, qd.extension.sparse)
    assert not qd.is_extension_supported(qd.vulkan, qd.extension.data64)


def test_cfg_is_the_active_configuration() -> None:
    qd_init(default_fp=qd.f64, debug=True)
    assert qd.cfg.default_fp is qd.f64 and qd.cfg.debug
    qd_init()
    assert qd.cfg.default_fp is qd.f32


def test_types_predicates_and_equality() -> None:
    assert qd.types.is_integral(qd.i32) and qd.types.is_integral(qd.u1) and not qd.types.is_integral(qd.f32)
    assert qd.types.is_real(qd.f64) and not qd.types.is_real(qd.i8)
    assert qd.types.is_signed(qd.i8) and not qd.types.is_signed(qd.u8)
    assert qd.types.is_real(qd.types.vector(3, qd.f32)) and not qd.types.is_real(qd.math.vec3)  # `float`: as 1.3.3
    assert qd.types.is_tensor(qd.math.vec3) and not qd.types.is_tensor(qd.f32)
    assert qd.i32 == qd.int32 and qd.f32 is qd.float32 and qd.f32 != qd.f64


def test_layout_names() -> None:
    assert {qd.Layout.SOA, qd.Layout.AOS} == {qd.Layout["SOA"], qd.Layout["AOS"]}


# ---- decorators ---------------------------------------------------------------------------------------------


def test_pure_is_a_deprecated_fastcache_kernel() -> None:
    qd_init()
    with pytest.warns(UserWarning, match="@qd.pure is deprecated"):

        @qd.pure
        @qd.kernel
        def inc(x: Nd[qd.f32, 1]):
            for i in range(x.shape[0]):
                x[i] += 1.0

    @qd.kernel
    @qd.pure
    def dec(x: Nd[qd.f32, 1]):
        for i in range(x.shape[0]):
            x[i] -= 2.0

    assert inc.fastcache and dec.fastcache
    a = np.zeros(3, np.float32)
    inc(a)
    dec(a)
    np.testing.assert_array_equal(a, [-1.0, -1.0, -1.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # warned once per process, as in Quadrants
        qd.pure(qd.kernel(lambda: None))


def test_real_func_computes_like_a_func() -> None:
    qd_init()

    @qd.real_func
    def twice(x: qd.f32) -> qd.f32:
        return x * 2.0

    @qd.kernel
    def k(x: qd.f32) -> qd.f32:
        return twice(x) + 1.0

    assert k(1.5) == 4.0


# ---- bit_shr and the other atomics -----------------------------------------------------------------------------


@pytest.mark.parametrize(("dtype", "x", "n"), [(qd.i32, -8, 1), (qd.i32, -1, 28), (qd.i64, -8, 1), (qd.u8, 200, 3),
                                               (qd.i32, 1000, 3)])  # fmt: skip
def test_bit_shr_is_a_logical_shift(dtype, x: int, n: int) -> None:  # type: ignore[no-untyped-def]
    qd_init()

    @qd.kernel
    def shr(x: dtype, n: qd.i32) -> dtype:  # type: ignore[valid-type]
        return qd.bit_shr(x, n)

    bits = {qd.i32: 32, qd.i64: 64, qd.u8: 8}[dtype]
    want = (x & ((1 << bits) - 1)) >> n
    if dtype in (qd.i32, qd.i64) and want >= 1 << (bits - 1):
        want -= 1 << bits
    assert shr(x, n) == want
    with pytest.raises(Exception, match="Python-scope|kernel"):
        qd.bit_shr(x, n)


def test_atomic_exchange_and_cas() -> None:
    qd_init()

    @qd.kernel
    def swap(a: Nd[qd.i32, 1], f: Nd[qd.f32, 1]) -> qd.types.vector(5, qd.f32):
        old = qd.atomic_exchange(a[0], 5)
        hit = qd.atomic_cas(a[1], 2, 9)
        miss = qd.atomic_cas(a[2], 7, 9)
        fold = qd.atomic_exchange(f[0], 2.5)
        fcas = qd.atomic_cas(f[1], 0.25, -1.0)
        return qd.Vector([old, hit, miss, fold, fcas], dt=qd.f32)

    a = np.array([1, 2, 3], np.int32)
    f = np.array([0.5, 0.25], np.float32)
    np.testing.assert_array_equal(np.asarray(swap(a, f)), [1, 2, 3, 0.5, 0.25])
    np.testing.assert_array_equal(a, [5, 9, 3])
    np.testing.assert_array_equal(f, [2.5, -1.0])


def test_atomic_cas_elects_one_winner_per_slot() -> None:
    qd_init()

    @qd.kernel
    def claim(owner: Nd[qd.i32, 1], wins: Nd[qd.i32, 1]):
        for i in range(wins.shape[0]):
            if qd.atomic_cas(owner[i % owner.shape[0]], -1, i) == -1:
                wins[i] = 1

    owner = np.full(16, -1, np.int32)
    wins = np.zeros(4096, np.int32)
    claim(owner, wins)
    assert wins.sum() == 16 and (owner >= 0).all()
    assert all(wins[o] == 1 and o % 16 == slot for slot, o in enumerate(owner))


# ---- quadrants.math: transforms and complex numbers ------------------------------------------------------------


def _rot_axis(axis: np.ndarray, ang: float) -> np.ndarray:
    """Rodrigues' rotation matrix, transposed (Quadrants' layout), as a 4x4."""
    u = axis / np.linalg.norm(axis)
    k = np.array([[0, -u[2], u[1]], [u[2], 0, -u[0]], [-u[1], u[0], 0]])
    r = np.eye(3) + math.sin(ang) * k + (1 - math.cos(ang)) * (k @ k)
    out = np.eye(4)
    out[:3, :3] = r.T
    return out


def _euler(yaw: float, pitch: float, roll: float) -> np.ndarray:
    """Yaw about Y, then pitch about X, then roll about Z, for row vectors (Quadrants' rot_yaw_pitch_roll)."""
    ry = np.array([[math.cos(yaw), 0, -math.sin(yaw)], [0, 1, 0], [math.sin(yaw), 0, math.cos(yaw)]])
    rx = np.array([[1, 0, 0], [0, math.cos(pitch), math.sin(pitch)], [0, -math.sin(pitch), math.cos(pitch)]])
    rz = np.array([[math.cos(roll), math.sin(roll), 0], [-math.sin(roll), math.cos(roll), 0], [0, 0, 1]])
    out = np.eye(4)
    out[:3, :3] = (ry.T @ rx.T @ rz.T).T
    return out


def test_transforms_match_their_definitions() -> None:
    qd_init(default_fp=qd.f64)
    M = qd.math

    @qd.kernel
    def mats(a: qd.f64) -> qd.types.matrix(4, 16, qd.f64):
        t = M.translate(1.0, 2.0, 3.0)
        s = M.scale(2.0, 3.0, 4.0)
        r = M.rot_by_axis(M.vec3(1.0, 2.0, 3.0), a)
        e = M.rot_yaw_pitch_roll(a, 2.0 * a, -a)
        out = qd.Matrix.zero(qd.f64, 4, 16)
        for i, j in qd.static(qd.ndrange(4, 4)):
            out[i, j] = t[i, j]
            out[i, 4 + j] = s[i, j]
            out[i, 8 + j] = r[i, j]
            out[i, 12 + j] = e[i, j]
        return out

    @qd.kernel
    def small(a: qd.f64) -> qd.types.vector(8, qd.f64):
        r2 = M.rotation2d(a)
        v = M.vdir(a)
        i3 = M.eye(3)
        r3 = M.rotation3d(a, -a, 0.5)
        e3 = M.rot_yaw_pitch_roll(0.5, a, -a)
        return qd.Vector([r2[0, 0], r2[0, 1], r2[1, 0], v[0], v[1], i3[1, 1] + i3[0, 1], r3[0, 2] - e3[0, 2],
                          r3[2, 1] - e3[2, 1]])  # fmt: skip

    a = 0.3
    got = np.asarray(mats(a)).reshape(4, 4, 4, order="F").transpose(2, 0, 1)
    want_t, want_s = np.eye(4), np.diag([2.0, 3.0, 4.0, 1.0])
    want_t[:3, 3] = [1.0, 2.0, 3.0]
    np.testing.assert_allclose(got[0], want_t, atol=1e-12)
    np.testing.assert_allclose(got[1], want_s, atol=1e-12)
    np.testing.assert_allclose(got[2], _rot_axis(np.array([1.0, 2.0, 3.0]), a), atol=1e-12)
    np.testing.assert_allclose(got[3], _euler(a, 2 * a, -a), atol=1e-12)
    np.testing.assert_allclose(np.asarray(small(a)),
                               [math.cos(a), -math.sin(a), math.sin(a), math.cos(a), math.sin(a), 1.0, 0.0, 0.0],
                               atol=1e-12)  # fmt: skip


def test_refract_follows_glsl() -> None:
    qd_init(default_fp=qd.f64)

    @qd.kernel
    def refr(x: qd.math.vec3, n: qd.math.vec3, eta: qd.f64) -> qd.math.vec3:
        return qd.math.refract(x, n, eta)

    for x, eta in (([0.6, -0.8, 0.0], 0.7), ([0.995, -0.0995, 0.0], 1.5)):
        xv, nv = np.array(x), np.array([0.0, 1.0, 0.0])
        d = xv @ nv
        k = 1 - eta * eta * (1 - d * d)
        want = eta * xv - (eta * d + math.sqrt(k)) * nv if k >= 0 else np.zeros(3)
        np.testing.assert_allclose(np.asarray(refr(qd.Vector(x), qd.Vector([0.0, 1.0, 0.0]), eta)), want, atol=1e-12)


def test_complex_functions_match_python_complex() -> None:
    qd_init(default_fp=qd.f64)
    M = qd.math

    @qd.kernel
    def cx(z1: qd.math.vec2, z2: qd.math.vec2, p: qd.f64) -> qd.types.matrix(8, 2, qd.f64):
        a, b, c, d = M.cmul(z1, z2), M.cdiv(z1, z2), M.cinv(z1), M.cexp(z2)
        e, f, g, h = M.clog(z1), M.cpow(z1, p), M.csqrt(z2), M.cconj(z1)
        return qd.Matrix([[a[0], a[1]], [b[0], b[1]], [c[0], c[1]], [d[0], d[1]], [e[0], e[1]], [f[0], f[1]],
                          [g[0], g[1]], [h[0], h[1]]], dt=qd.f64)  # fmt: skip

    a, b, p = complex(1.5, -2.0), complex(-0.5, 0.75), 1.7
    got = np.asarray(cx(qd.Vector([a.real, a.imag]), qd.Vector([b.real, b.imag]), p))
    want = [a * b, a / b, 1 / a, cmath.exp(b), cmath.log(a), a**p, cmath.sqrt(b), a.conjugate()]
    np.testing.assert_allclose(got, [[w.real, w.imag] for w in want], atol=1e-12)


def test_backend_is_the_sessions() -> None:
    assert "arch" in backend_kwargs()


# Every CompileConfig option of real Quadrants 1.3.3 (read from `impl.current_cfg()` there).
QUADRANTS_OPTIONS = """ad_stack_experimental_enabled ad_stack_size ad_stack_sparse_threshold_bytes advanced_optimization
arch auto_mesh_local_default_occupacy cache_loop_invariant_global_vars cfg_optimization check_out_of_bound
cpu_max_num_threads cuda_stack_limit debug debug_dump_path default_cpu_block_dim default_fp default_gpu_block_dim
default_ip default_up demote_dense_struct_fors demote_no_access_mesh_fors detect_read_only device_memory_GB
device_memory_fraction experimental_auto_mesh_local external_metal_command_queue
external_metal_command_queue_is_torch_queue fast_math flatten_if force_scalarize_matrix half2_vectorization
kernel_profiler make_block_local make_cpu_multithreading_loop make_mesh_block_local make_thread_local max_block_dim
mesh_localize_all_attr_mappings mesh_localize_from_end_mapping mesh_localize_to_end_mapping
move_loop_invariant_outside_if num_compile_threads offline_cache offline_cache_cleaning_factor
offline_cache_cleaning_policy offline_cache_file_path offline_cache_max_size_of_files opt_level
optimize_mesh_reordered_mapping print_accessor_ir print_ir print_ir_dbg_info print_kernel_amdgcn print_kernel_asm
print_kernel_llvm_ir print_kernel_llvm_ir_optimized print_preprocessed_ir print_struct_llvm_ir
quant_opt_atomic_demotion quant_opt_store_fusion raise_on_templated_floats random_seed real_matrix_scalarize
saturating_grid_dim timeline vk_api_version""".split()


def test_every_quadrants_init_option_is_accepted() -> None:
    from quadrants._config import FIELDS, IGNORED_OPTIONS

    missing = [o for o in QUADRANTS_OPTIONS if o not in FIELDS and o not in IGNORED_OPTIONS]
    assert missing == []
    qd.init(arch=qd.cpu, real_matrix_scalarize=False, force_scalarize_matrix=True, cuda_stack_limit=8192)
    with pytest.raises(KeyError, match="no_such_option"):
        qd.init(arch=qd.cpu, no_such_option=1)
    qd_init()


def test_vector_ndarrays_report_their_scalar_dtype() -> None:
    qd_init()
    v = qd.Vector.ndarray(3, qd.f32, (4, 2))
    m = qd.Matrix.ndarray(2, 3, qd.i64, 5)
    assert v.dtype == qd.f32 and v.n == 3 and v.m == 1 and v.element_shape == (3,) and v.shape == (4, 2)
    assert m.dtype == qd.i64 and (m.n, m.m) == (2, 3) and m.element_shape == (2, 3)
    assert qd.ndarray(qd.f32, 4).dtype == qd.f32


# ---- fastcache semantics as Quadrants reports them -------------------------------------------------------------

SCALE_FACTOR = 3


def test_purity_warnings_are_user_warnings_tagged_like_quadrants(tmp_path) -> None:  # type: ignore[no-untyped-def]
    qd_init(offline_cache_file_path=str(tmp_path))

    @qd.kernel(fastcache=True)
    def reads_upper() -> qd.i32:
        return SCALE_FACTOR

    with pytest.warns(UserWarning, match=r"\[PURE\.VIOLATION\].*SCALE_FACTOR"):
        assert reads_upper() == 3


def test_observations_are_reset_by_a_new_program(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    qd_init(offline_cache_file_path=str(tmp_path))

    @qd.kernel(fastcache=True)
    def one() -> qd.i32:
        return 1

    assert one() == 1
    first = one._primal.src_ll_cache_observations
    assert first.cache_key_generated and first.cache_stored
    qd_init(offline_cache_file_path=str(tmp_path))  # a fresh program: observed afresh (a memory hit is not a store)
    fresh = one._primal.src_ll_cache_observations
    assert fresh is not first and not fresh.cache_key_generated
    assert one() == 1
    assert one._primal.src_ll_cache_observations.cache_key_generated



def test_without_a_disk_cache_fastcache_kernels_still_report_their_key(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """`offline_cache=False`: nothing is written, but a fastcache kernel (`qd.pure`, `fastcache=True`) still
    makes its key and says so, and a plain one does not, as in Quadrants 1.3.3 (its key is made whatever
    `offline_cache` says)."""
    qd_init(offline_cache=False, offline_cache_file_path=str(tmp_path))

    @qd.pure
    @qd.kernel
    def pure(a: qd.types.NDArray) -> None:
        a[0] = 1

    @qd.kernel(fastcache=True)
    def fast(a: qd.types.NDArray) -> None:
        a[1] = 2

    @qd.kernel
    def plain(a: qd.types.NDArray) -> None:
        a[2] = 3

    a = qd.ndarray(qd.i32, (3,))
    for k in (pure, fast, plain):
        k(a)
    assert a.to_numpy().tolist() == [1, 2, 3]
    for k, made in ((pure, True), (fast, True), (plain, False)):
        obs = k._primal.src_ll_cache_observations
        assert (obs.cache_key_generated, obs.cache_stored, obs.cache_loaded) == (made, False, False)
    assert list(tmp_path.iterdir()) == []

def test_print_non_pure_names_the_kernel_by_its_name(capsys) -> None:  # type: ignore[no-untyped-def]
    qd_init(print_non_pure=True)

    @qd.kernel
    def plain_one() -> qd.i32:
        return 1

    plain_one()
    out = capsys.readouterr().out
    assert "[NOT_PURE] Debug information: not pure: plain_one\n" in out and "<locals>" not in out


def test_python_scope_elements_and_comparisons() -> None:
    qd_init()
    y = qd.ndarray(dtype=qd.math.vec2, shape=())
    y[()] = [1.0, 2.0]
    assert isinstance(y[None], qd.Vector) and y[None] == [1.0, 2.0] and not (y[None] == [1.0, 3.0])
    assert (y[None] == qd.Vector([1.0, 2.0])).all() and (y[None] == [0.0, 2.0]).any()
    x = qd.ndarray(dtype=qd.f32, shape=())
    x[None] = 4.0
    assert x[None] == 4.0 and x[()] == 4.0
    f = qd.Vector.field(3, qd.i32, shape=2)
    assert f.dtype == qd.i32 and f.element_type == qd.types.vector(3, qd.i32) and f.n == 3
    m = qd.ndarray(dtype=qd.math.mat2, shape=(3,))
    m[1] = [[1.0, 2.0], [3.0, 4.0]]
    assert isinstance(m[1], qd.Matrix) and m[1][1, 0] == 3.0
    assert isinstance(m[0:2], qd.BufferView) and m[0:2].shape == (2,)  # a 1-D slice is a view, as in 1.3.3


def test_quadrants_lang_misc_holds_the_hints_and_arch_helpers() -> None:
    from quadrants.lang.misc import assume_in_range, get_host_arch_list, loop_unique

    qd_init()
    x = qd.field(qd.i32, shape=8)
    y = qd.field(qd.i32, shape=16)

    @qd.kernel
    def k() -> None:
        for i in x:
            a = loop_unique(x[i])  # a hint: the value itself
            y[assume_in_range(a + 1, a, 0, 2)] += 1

    for i in range(8):
        x[i] = 2 * i
    k()
    assert [y[i] for i in range(16)] == [0, 1] * 8
    assert get_host_arch_list() == [qd.cpu]
    assert qd.assume_in_range is assume_in_range
