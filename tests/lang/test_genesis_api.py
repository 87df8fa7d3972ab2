"""The Python-side Quadrants API that Genesis uses outside kernels, with Quadrants' names and behaviour
(checked side by side with Quadrants 0.5.2 / 1.3.3 when written)."""

from __future__ import annotations

import importlib.util
import time

import numpy as np
import pytest

import quadrants as qd
from quadrants import _kernels
from quadrants.lang import impl, util

torch = pytest.importorskip("torch")


# ---- quadrants.lang.util ------------------------------------------------------------------------------------


def test_dtype_conversions_to_numpy_and_torch() -> None:
    assert util.to_numpy_type(qd.f32) is np.float32 and util.to_numpy_type(qd.u1) is np.bool_
    assert util.to_numpy_type(qd.f16) is np.float16 and util.to_numpy_type(qd.u64) is np.uint64
    assert util.to_pytorch_type(qd.f64) is torch.float64 and util.to_pytorch_type(qd.u1) is torch.bool
    assert util.to_pytorch_type(qd.i8) is torch.int8 and util.to_pytorch_type(qd.u32) is torch.uint32
    assert util.to_pytorch_type(torch.int32) is torch.int32  # torch's own types pass through, as in Quadrants
    with pytest.raises(RuntimeError, match="PyTorch doesn't support"):
        util.to_pytorch_type(torch.float64)
    with pytest.raises(AssertionError):
        util.to_numpy_type(np.float32)
    assert util.to_quadrants_type(torch.int16) is qd.i16 and util.to_quadrants_type(np.float64) is qd.f64


# ---- quadrants._kernels ----------------------------------------------------------------------------------


def test_field_copies_into_numpy_and_torch_arrays() -> None:
    f = qd.field(qd.f32, (2, 3))
    f.from_numpy(np.arange(6, dtype=np.float32).reshape(2, 3))
    out = torch.zeros((2, 3), dtype=torch.int32)
    _kernels.tensor_to_ext_arr(f, out)  # converted to the array's dtype
    assert out.tolist() == [[0, 1, 2], [3, 4, 5]]

    v = qd.Vector.field(3, qd.f32, (2,))
    v.from_numpy(np.arange(6, dtype=np.float32).reshape(2, 3))
    vec = np.zeros((2, 3), np.float32)
    _kernels.matrix_to_ext_arr(v, vec, True)
    col = np.zeros((2, 3, 1), np.float32)
    _kernels.matrix_to_ext_arr(v, col, False)  # a vector field without as_vector: one column
    np.testing.assert_array_equal(vec, col[..., 0])
    np.testing.assert_array_equal(vec, np.arange(6).reshape(2, 3))

    m = qd.Matrix.field(2, 2, qd.f32, (3,))
    m.from_numpy(np.arange(12, dtype=np.float32).reshape(3, 2, 2))
    full = np.zeros((3, 2, 2), np.float32)
    _kernels.matrix_to_ext_arr(m, full, False)
    np.testing.assert_array_equal(full, np.arange(12).reshape(3, 2, 2))
    last = np.zeros((3, 2), np.float32)
    _kernels.matrix_to_ext_arr(m, last, True)  # Quadrants' loop leaves each row's last column
    np.testing.assert_array_equal(last, full[..., -1])


def test_ndarray_copies_in_both_layouts() -> None:
    a = qd.ndarray(qd.i32, (4,))
    a.from_numpy(np.arange(4, dtype=np.int32))
    out = torch.zeros(4, dtype=torch.float32)
    _kernels.ndarray_to_ext_arr(a, out)
    assert out.tolist() == [0.0, 1.0, 2.0, 3.0]

    v = qd.ndarray(qd.types.vector(3, qd.f32), (2, 5))
    data = np.random.default_rng(0).normal(size=(2, 5, 3)).astype(np.float32)
    v.from_numpy(data)
    aos = np.zeros((2, 5, 3), np.float32)
    _kernels.ndarray_matrix_to_ext_arr(v, aos, 1, True)
    np.testing.assert_array_equal(aos, data)
    soa = np.zeros((3, 2, 5), np.float32)
    _kernels.ndarray_matrix_to_ext_arr(v, soa, 0, True)
    np.testing.assert_array_equal(soa, np.moveaxis(data, -1, 0))

    m = qd.ndarray(qd.types.matrix(2, 3, qd.f32), (4,))
    mdata = np.arange(24, dtype=np.float32).reshape(4, 2, 3)
    m.from_numpy(mdata)
    msoa = torch.zeros((2, 3, 4))
    _kernels.ndarray_matrix_to_ext_arr(m, msoa, 0, False)
    np.testing.assert_array_equal(msoa.numpy(), np.moveaxis(mdata, (1, 2), (0, 1)))
    with pytest.raises(ValueError, match="as_vector"):
        _kernels.ndarray_matrix_to_ext_arr(m, msoa, 0, True)


# ---- ndarray classes, DLPack, torch ----------------------------------------------------------------------


def test_ndarray_classes_take_program_attributes() -> None:
    s, v = qd.ndarray(qd.f32, (2,)), qd.ndarray(qd.types.vector(3, qd.f32), (2,))
    m = qd.ndarray(qd.types.matrix(2, 2, qd.f32), (2,))
    assert (type(s), type(v), type(m)) == (qd.ScalarNdarray, qd.VectorNdarray, qd.MatrixNdarray)
    assert all(isinstance(x, qd.Ndarray) for x in (s, v, m))
    s._tc = "a cached view"  # Genesis keeps its torch views on the ndarray
    assert s._tc == "a cached view"


def test_to_dlpack_shares_memory_with_torch() -> None:
    qd.init(arch=qd.cpu)  # host memory (the CUDA backend refuses: the next test)
    a = qd.ndarray(qd.f32, (3,))
    t = torch.utils.dlpack.from_dlpack(a.to_dlpack())
    t[1] = 5.0
    assert a.to_numpy().tolist() == [0.0, 5.0, 0.0]

    @qd.kernel
    def bump(x: qd.types.NDArray[qd.f32, 1]):
        for i in range(x.shape[0]):
            x[i] += 1.0

    bump(a)
    assert t.tolist() == [1.0, 6.0, 1.0]  # the kernel's writes show through the tensor

    v = qd.ndarray(qd.types.vector(3, qd.i32), (2,))
    assert torch.utils.dlpack.from_dlpack(v.to_dlpack()).shape == (2, 3)

    f = qd.field(qd.f32, (2, 3))
    tf = torch.utils.dlpack.from_dlpack(f.to_dlpack())
    tf[1, 2] = 7.0
    assert f[1, 2] == 7.0
    mf = qd.Matrix.field(3, 1, qd.f32, (2,))
    assert torch.utils.dlpack.from_dlpack(mf.to_dlpack()).shape == (2, 3, 1)
    s = qd.field(qd.f32, ())
    assert torch.utils.dlpack.from_dlpack(s.to_dlpack()).shape == ()


def test_to_dlpack_is_refused_on_gpu_memory() -> None:
    qd.init(arch=qd.cuda, cuda_emulate=True)
    with pytest.raises(qd.QuadrantsRuntimeError, match="CPU backend only"):
        qd.ndarray(qd.f32, (3,)).to_dlpack()
    with pytest.raises(qd.QuadrantsRuntimeError, match="CPU backend only"):
        qd.field(qd.f32, (3,)).to_dlpack()


def test_field_to_and_from_torch() -> None:
    f = qd.field(qd.i32, (2, 2))
    f.from_torch(torch.tensor([[1, 2], [3, 4]], dtype=torch.int64))
    t = f.to_torch()
    assert t.dtype == torch.int32 and t.tolist() == [[1, 2], [3, 4]]
    col = qd.Matrix.field(3, 1, qd.f32, (2,))
    col.from_numpy(np.arange(6, dtype=np.float32).reshape(2, 3))  # a one-column matrix field takes vectors
    assert col.to_numpy().shape == (2, 3) and col.to_numpy(keep_dims=True).shape == (2, 3, 1)
    assert col.to_torch(keep_dims=True).shape == (2, 3, 1)


def test_kernels_write_through_torch_subclasses_that_copy_on_detach() -> None:
    class Cloning(torch.Tensor):  # Genesis' gs.Tensor: detach() returns a clone
        def detach(self, *args, **kwargs):  # type: ignore[override]
            return super().detach(*args, **kwargs).clone()

    @qd.kernel
    def fill(x: qd.types.ndarray()):
        for i in range(x.shape[0]):
            x[i] = i + 1

    t = torch.zeros(3).as_subclass(Cloning)
    fill(t)
    assert t.tolist() == [1.0, 2.0, 3.0]


# ---- quadrants.lang.impl, qd.lang._template_mapper -------------------------------------------------------


def test_current_cfg_and_shared_memory() -> None:
    qd.init(arch=qd.cpu, debug=True)
    assert impl.current_cfg().debug is True and impl.current_cfg().arch is qd.cpu
    assert impl.get_max_shared_memory_bytes(is_lowerbound_ok=True) == 0
    with pytest.raises(RuntimeError, match="not implemented for arch cpu"):
        impl.get_max_shared_memory_bytes(is_lowerbound_ok=False)
    qd.reset()
    with pytest.raises(qd.QuadrantsRuntimeError, match="forgot to call `qd.init"):
        impl.current_cfg()


def test_template_mapper_module_exposes_builtins() -> None:
    assert isinstance(qd.lang._template_mapper.__builtins__, dict)


# ---- qd._logging ----------------------------------------------------------------------------------------


def test_logging_levels_and_redirection(capfd: pytest.CaptureFixture[str]) -> None:
    lg = qd._logging
    assert (lg.DEBUG, lg.TRACE, lg.INFO, lg.WARN, lg.ERROR, lg.CRITICAL) == (
        "debug", "trace", "info", "warn", "error", "critical")  # fmt: skip
    lg._get_logging(lg.WARN)("x = {}", 3)
    assert "x = 3" in capfd.readouterr().err

    got: list[str] = []
    original = lg.warn
    lg.warn = got.append  # Genesis sends Quadrants' warnings to its own logger this way
    try:
        assert lg.warn is original  # our function stays, so this package's calls keep their signature
        lg.warn("the cache is damaged", tag="cache")
        assert got == ["[cache] the cache is damaged"]
        assert capfd.readouterr().err == ""
    finally:
        lg.warn = lg._get_logging(lg.WARN)  # how Genesis restores them
    lg.warn("back", tag="cache")
    assert got == ["[cache] the cache is damaged"] and "back" in capfd.readouterr().err
    assert lg.is_logging_effective("error") and not lg.is_logging_effective("trace")


# ---- qd.perf_dispatch, qd.kernel(gpu_graph=...) ---------------------------------------------------------


def _dispatcher(**kw: object) -> tuple[object, list[str]]:
    calls: list[str] = []

    @qd.perf_dispatch(get_geometry_hash=lambda n: n, first_warmup=1, active=2, **kw)
    def work(n: int) -> None: ...

    @work.register
    def slow(n: int) -> None:
        calls.append("slow")
        time.sleep(0.02)

    @work.register(is_compatible=lambda n: n > 0)
    def fast(n: int) -> None:
        calls.append("fast")

    return work, calls


def test_perf_dispatch_times_the_implementations_then_keeps_the_fastest() -> None:
    work, calls = _dispatcher()
    for _ in range(6):  # 1 warm-up + 2 timed runs each
        work(3)
    assert sorted(calls) == ["fast"] * 3 + ["slow"] * 3
    calls.clear()
    for _ in range(4):
        work(3)
    assert calls == ["fast"] * 4
    calls.clear()
    work(0)  # only `slow` is compatible with this geometry
    work(0)
    assert calls == ["slow", "slow"]


def test_perf_dispatch_measures_again_after_repeat_after_count_without_first_warmup() -> None:
    work, calls = _dispatcher(warmup=0, repeat_after_count=3)
    for _ in range(6):  # first round: 1 warm-up + 2 timed each
        work(3)
    calls.clear()
    for _ in range(2):  # the winner, twice; the third call restarts measuring
        work(3)
    assert calls == ["fast"] * 2
    calls.clear()
    for _ in range(4):  # later rounds: no warm-up, 2 timed each
        work(3)
    assert sorted(calls) == ["fast"] * 2 + ["slow"] * 2
    calls.clear()
    work(3)
    assert calls == ["fast"]


def test_perf_dispatch_repeat_triggers_default_to_a_call_count() -> None:
    from quadrants.lang._perf_dispatch import DEFAULT_REPEAT_AFTER_COUNT

    for kw, count, seconds in (({}, DEFAULT_REPEAT_AFTER_COUNT, None), ({"repeat_after_count": 5}, 5, None),
                               ({"repeat_after_seconds": 2.0}, None, 2.0)):  # fmt: skip
        work, _ = _dispatcher(**kw)
        assert (work.repeat_after_count, work.repeat_after_seconds) == (count, seconds)  # type: ignore[attr-defined]


def test_perf_dispatch_checks_signatures_and_compatibility(monkeypatch: pytest.MonkeyPatch) -> None:
    from quadrants.lang import _perf_dispatch

    @qd.perf_dispatch(get_geometry_hash=lambda a, b: 0)
    def proto(a: int, b: int) -> None: ...

    with pytest.raises(qd.QuadrantsSyntaxError, match="Signature parameter c of function not in perf_dispatch"
                       ".*PERFDISPATCH_ANNOTATION_SEQUENCE_MISMATCH"):  # fmt: skip
        proto.register(lambda a, c: None)
    with pytest.raises(qd.QuadrantsSyntaxError, match="Number of function parameters 1"):
        proto.register(lambda a: None)
    proto.register(lambda a, b: None, is_compatible=lambda a, b: False)
    with pytest.raises(qd.QuadrantsRuntimeError, match="No suitable functions were found"):
        proto(1, 2)
    with pytest.raises(qd.QuadrantsSyntaxError, match="KERNEL_ANNOTATION_ORDER"):
        qd.kernel(proto.register(lambda a, b: None))

    monkeypatch.setattr(_perf_dispatch, "_FORCE_MAP", _perf_dispatch._parse_force_map(" work : slow ,, x:y"))
    monkeypatch.setattr(_perf_dispatch, "_ANY_FORCE_ACTIVE", True)
    work, calls = _dispatcher()
    for _ in range(5):
        work(3)
    assert calls == ["slow"] * 5
    with pytest.raises(ValueError, match="Malformed QD_PERFDISPATCH_FORCE entry 'work'"):
        _perf_dispatch._parse_force_map("a:b,work")


def test_perf_dispatch_over_kernels_and_gpu_graph_kernels() -> None:
    @qd.perf_dispatch(get_geometry_hash=lambda x: x.shape)
    def double(x: qd.types.NDArray[qd.f32, 1]) -> None: ...

    @double.register
    @qd.kernel(gpu_graph=True)
    def double_k(x: qd.types.NDArray[qd.f32, 1]):
        for i in range(x.shape[0]):
            x[i] *= 2.0

    a = np.ones(4, np.float32)
    double(a)
    double(a)
    assert a.tolist() == [4.0] * 4


def test_internal_module_names_programs_import() -> None:
    """Names Quadrants' tests and users import from `quadrants.lang.util` / `quadrants.lang.impl`."""
    from quadrants.lang.impl import Kernel, QuadrantsSyntaxError
    from quadrants.lang.util import has_pytorch

    @qd.kernel
    def k() -> None:
        pass

    assert isinstance(k._primal, Kernel) and QuadrantsSyntaxError is qd.QuadrantsSyntaxError
    assert has_pytorch() == (importlib.util.find_spec("torch") is not None)
