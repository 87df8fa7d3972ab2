"""Calling kernels: argument binding and checking, return values, debug bounds checks."""

from __future__ import annotations

import numpy as np
import pytest

import quadrants as qd
from quadrants.lang.fast_paths import KEPT as FAST_PATHS_KEPT

Nd = qd.types.NDArray


def test_keyword_and_default_arguments() -> None:
    @qd.kernel
    def k(a: qd.i32, b: qd.i32 = 10) -> qd.i32:
        return a * 100 + b

    assert k(1) == 110 and k(1, 2) == 102 and k(b=3, a=4) == 403


def test_wrong_argument_count_and_type_name_the_kernel_definition() -> None:
    @qd.kernel
    def k(a: qd.i32) -> qd.i32:
        return a

    with pytest.raises(qd.QuadrantsRuntimeTypeError, match="takes 1 argument") as e:
        k(1, 2)
    assert "test_calls.py" in str(e.value) and "def k(a: qd.i32)" in str(e.value)
    with pytest.raises(qd.QuadrantsRuntimeTypeError, match="Missing argument 'a'"):
        k()
    with pytest.raises(qd.QuadrantsRuntimeTypeError, match="cannot be converted into required type i32"):
        k(1.5)
    assert k(np.int64(7)) == 7


def test_scalar_argument_types() -> None:
    @qd.kernel
    def k(a: qd.u8, b: qd.f16, c: qd.i64, d: float, e: int) -> tuple[qd.u8, qd.f16, qd.i64, qd.f32, qd.i32]:
        return a, b, c, d, e

    assert k(200, 0.5, 2**40, 1.25, -3) == (200, 0.5, 2**40, 1.25, -3)


def test_return_value_types() -> None:
    @qd.kernel
    def k() -> tuple[qd.f32, qd.i32, qd.u1]:
        return 1.5, 2, 3 > 2

    r = k()
    assert r == (1.5, 2, 1)
    assert isinstance(r[0], float) and isinstance(r[1], int)


def test_reassigning_a_kernel_argument_is_a_syntax_error() -> None:
    @qd.kernel
    def k(a: qd.i32) -> qd.i32:
        a = 2
        return a

    with pytest.raises(qd.QuadrantsSyntaxError, match="cannot assign to kernel argument 'a'"):
        k(1)


def test_out_of_bounds_in_debug_mode_raises_with_index_and_shape() -> None:
    qd.init(arch=qd.cpu, debug=True, log_level="warn")

    @qd.kernel
    def k(a: Nd[qd.f32, 2], n: qd.i32):
        for i in range(n):
            a[i, 1] = 1.0

    a = qd.ndarray(qd.f32, (8, 3))
    k(a, 8)
    with pytest.raises(qd.QuadrantsIndexError, match="index 8 is out of bounds for axis 0 with size 8") as e:
        k(a, 100_000)
    text = str(e.value)
    assert "a[i, 1] = 1.0" in text and "test_calls.py" in text
    assert isinstance(e.value, IndexError) and isinstance(e.value, qd.QuadrantsAssertionError)
    k(a, 8)  # the error state is cleared


def test_negative_index_in_debug_mode_raises() -> None:
    qd.init(arch=qd.cpu, debug=True, log_level="warn")

    @qd.kernel
    def k(a: Nd[qd.i32, 1], i: qd.i32) -> qd.i32:
        return a[i]

    with pytest.raises(qd.QuadrantsIndexError, match="index -1"):
        k(np.zeros(4, np.int32), -1)


def test_compile_errors_are_raised_at_every_call() -> None:
    @qd.kernel
    def k() -> qd.i32:
        return undefined_name  # noqa: F821

    for _ in range(2):
        with pytest.raises(qd.QuadrantsNameError):
            k()


def test_reset_and_reinit_recompile() -> None:
    @qd.kernel
    def k(x: qd.f64) -> qd.f64:
        return x * 0.1

    a = k(1.0)
    qd.reset()
    qd.init(arch=qd.cpu, default_fp=qd.f64, log_level="warn")
    b = k(1.0)
    assert a == float(np.float32(0.1)) and b == 0.1


def test_gpu_arch_falls_back_to_cpu(capsys) -> None:
    qd.init(arch=qd.gpu)

    @qd.kernel
    def k() -> qd.i32:
        return 1

    assert k() == 1
    assert "falling back to the CPU" in capsys.readouterr().err or "not available" in capsys.readouterr().err


def test_unknown_init_option_raises_key_error() -> None:
    with pytest.raises(KeyError, match="Unrecognized keyword"):
        qd.init(arch=qd.cpu, no_such_option=1)


def test_argument_binding_errors_are_quadrants_syntax_errors() -> None:
    """As in Quadrants: QuadrantsSyntaxError with its words; also a QuadrantsRuntimeTypeError here."""
    qd.init(arch=qd.cpu)

    @qd.func
    def add(a, b):
        return a + b

    @qd.kernel
    def k(a: qd.i32, b: qd.i32) -> qd.i32:
        return a + b

    @qd.kernel
    def too_many() -> qd.i32:
        return add(1, 2, 3)

    @qd.kernel
    def twice() -> qd.i32:
        return add(1, a=2)

    assert k(1, 2) == 3  # the fast path exists; wrong calls still go through the checks
    cases = [(lambda: k(2), "Missing argument 'b'"), (lambda: k(b=2), "Missing argument 'a'"),
             (lambda: k(1, 2, c=2), "Unexpected argument 'c'"), (lambda: k(1, 2, 3), "Too many arguments"),
             (too_many, "Too many arguments"), (twice, "Multiple values for argument 'a'")]  # fmt: skip
    for call, words in cases:
        with pytest.raises(qd.QuadrantsSyntaxError, match=words) as e:
            call()
        assert isinstance(e.value, qd.QuadrantsArgumentError)


def _count_general_calls(k: object, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many calls of kernel `k` take the general path (specialize, look up, marshal) from now on."""
    calls = [0]
    general = k._call  # type: ignore[attr-defined]

    def counting(*a: object, **kw: object) -> object:
        calls[0] += 1
        return general(*a, **kw)

    monkeypatch.setattr(k, "_call", counting)
    return calls


def test_alternating_specializations_and_keyword_calls_take_the_fast_path(monkeypatch: pytest.MonkeyPatch) -> None:
    # Genesis calls `kernel_step_2(..., is_backward)` with a template flag that alternates, and passes arguments
    # by keyword: each call went through the general path (25x slower backward steps before)
    qd.init(arch=qd.cpu)

    @qd.kernel
    def k(a: Nd[qd.f32, 1], scale: qd.f32, flip: qd.template() = False) -> qd.f32:
        s = 0.0
        for i in range(a.shape[0]):
            s += a[i] * scale * (-1.0 if qd.static(flip) else 1.0)
        return s

    a = np.ones(4, np.float32)
    for flip in (False, True):  # compile both specializations
        k(a, 2.0, flip)
    calls = _count_general_calls(k, monkeypatch)
    results = [k(a, 2.0, flip=f) if i % 2 else k(a, scale=2.0, flip=f) for i, f in enumerate([False, True] * 20)]
    assert results == [8.0, -8.0] * 20
    assert k(a, 3.0) == 12.0  # the default of `flip`
    assert calls[0] == 0
    with pytest.raises(qd.QuadrantsArgumentError, match="Unexpected argument"):
        k(a, 2.0, flop=True)  # a wrong keyword still gets the general path's error
    for flavour in range(FAST_PATHS_KEPT + 1):  # more specializations than are kept: the oldest goes
        k(np.ones(flavour + 1, np.float32) if flavour % 2 else a, 1.0, flavour)
    calls[0] = 0
    k(a, 2.0, False)
    assert calls[0] == 1


def test_fast_paths_kept_do_not_keep_per_object_members_alive() -> None:
    qd.init(arch=qd.cpu)
    marker = 123457

    @qd.data_oriented
    class X:
        def __init__(self) -> None:
            self.py_l = [marker] * 1000  # guarded by identity, and cannot be weakly referenced

        @qd.kernel
        def run(self) -> qd.i32:
            return qd.static(len(self.py_l))  # read: its guard is checked

    for _ in range(12):
        assert X().run() == 1000
    assert _alive_lists(marker) <= 1  # the latest fast path's own; none kept beside it


def test_a_fast_path_not_kept_is_not_kept_when_another_is_promoted() -> None:
    # the latest specialization (holding a per-object list) was swapped into the kept ones when a call matched
    # one of those: alternating calls then kept up to 7 objects' members alive
    qd.init(arch=qd.cpu)
    marker = 123458

    @qd.data_oriented
    class X:
        def __init__(self) -> None:
            self.py_l = [marker] * 1000

    @qd.kernel
    def k(t: qd.template()) -> qd.i32:
        return qd.static(len(t.py_l) if hasattr(t, "py_l") else 1)  # X's list is read: its guard is checked

    for _ in range(12):
        assert k(X()) == 1000
        assert k(7) == 1  # through the kept fast path of `k(7)`, which becomes the latest
    assert _alive_lists(marker) <= 1


def _alive_lists(marker: int) -> int:
    """How many of the tests' 1000-element marker lists are still alive after a collection."""
    import gc

    gc.collect()
    return sum(1 for o in gc.get_objects() if type(o) is list and len(o) == 1000 and o[0] == marker)


def test_torch_tensor_arguments_take_the_fast_path_and_its_checks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Genesis passes fresh CPU torch tensors to `qd.types.ndarray()` parameters every step (FEM's get_state): each
    call took the general path, re-specializing the solver (0.7 ms a call)."""
    torch = pytest.importorskip("torch")
    qd.init(arch=qd.cpu)

    @qd.kernel
    def k(pos: qd.types.ndarray(), act: qd.types.ndarray(), s: qd.f32):
        for i in range(pos.shape[0]):
            for j in qd.static(range(3)):
                pos[i, j] = pos[i, j] * s + j
            act[i] = i

    k(torch.ones((4, 3)), torch.zeros(4, dtype=torch.int32), 2.0)
    calls = _count_general_calls(k, monkeypatch)
    for step in range(5):
        pos, act = torch.full((4, 3), float(step)), torch.zeros(4, dtype=torch.int32)  # new tensors each call
        k(pos, act, 2.0)
        assert pos.tolist() == [[2.0 * step + j for j in range(3)]] * 4 and act.tolist() == [0, 1, 2, 3]
    assert calls[0] == 0
    strided = torch.ones((4, 6))[:, ::2]  # not contiguous: the general path copies it in and out
    k(strided, torch.zeros(4, dtype=torch.int32), 3.0)
    assert strided.tolist() == [[3.0, 4.0, 5.0]] * 4 and calls[0] == 1
    k(torch.ones((4, 3), dtype=torch.float64), torch.zeros(4, dtype=torch.int32), 1.0)  # another dtype
    assert calls[0] == 2
    grad = torch.ones((4, 3), requires_grad=True)  # a tensor with a gradient: the general path passes it
    k(grad, torch.zeros(4, dtype=torch.int32), 1.0)
    assert calls[0] == 3
