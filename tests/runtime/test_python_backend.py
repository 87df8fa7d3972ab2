"""`qd.init(arch=qd.python)` (runtime/python_backend/): kernels and funcs run as plain Python on torch tensors.

The oracle is the compiled backend: one program run under both must leave the same data behind. Plus what only
the python backend has (funcs callable from Python scope, the tensors' shapes) and what it must not disturb (the
arch chosen after it, the caches)."""

from __future__ import annotations

import numpy as np
import pytest

import quadrants as qd
from quadrants.runtime import python_backend
from tests.conftest import qd_init

torch = pytest.importorskip("torch")

vec3 = qd.types.vector(3, qd.f32)


@qd.func
def _weight(i, scale):  # type: ignore[no-untyped-def]
    return qd.cast(i, qd.f32) * scale + 0.5


@qd.kernel
def _program(scale: qd.f32, n: qd.i32, a: qd.types.ndarray(dtype=vec3, ndim=1), counts: qd.template(),
             grid: qd.template(), big: qd.template()) -> qd.f32:  # fmt: skip
    total = 0.0
    for i in range(a.shape[0]):
        w = _weight(i, scale)
        a[i] = qd.Vector([w, w * 2.0, qd.sqrt(w)])
        qd.atomic_add(counts[i % n], 1)
        qd.atomic_max(counts[n], i)
        total += a[i][1]
    for I in qd.grouped(grid):
        grid[I] = I[0] * 10 + I[1]
    for i, j in qd.ndrange(2, (1, 3)):
        if qd.static(big):
            grid[i, j] += 100
    return total


def _run(arch_kwargs: dict) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    qd.init(**arch_kwargs)
    a = qd.ndarray(vec3, (7,))
    counts = qd.field(qd.i32, shape=(4,))
    grid = qd.field(qd.i32, shape=(2, 3))
    total = _program(0.25, 3, a, counts, grid, True)
    return a.to_numpy(), counts.to_numpy(), grid.to_numpy(), float(total)


def test_a_program_leaves_the_same_data_as_on_the_compiled_backend() -> None:
    compiled = _run({"arch": qd.cpu})
    as_python = _run({"arch": qd.python})
    assert qd.cfg.arch is qd.python
    for c, p in zip(compiled[:3], as_python[:3]):
        assert c.shape == p.shape and c.dtype == p.dtype
        np.testing.assert_allclose(p, c, rtol=1e-6)
    assert as_python[3] == pytest.approx(compiled[3], rel=1e-6)


def test_a_scalar_result_is_a_number_of_the_declared_type() -> None:
    qd.init(arch=qd.python)
    a = qd.ndarray(qd.f32, (1,))
    a[0] = 2.75

    @qd.kernel
    def read(a: qd.types.ndarray(dtype=qd.f32, ndim=1)) -> qd.i32:
        return a[0]

    r = read(a)
    assert type(r) is int and r == 2


def test_fields_and_ndarrays_are_tensors_whose_shape_is_the_index_space() -> None:
    qd.init(arch=qd.python)
    f = qd.field(qd.types.matrix(2, 3, qd.f64), shape=(4, 5))
    a = qd.ndarray(qd.u8, 6)
    s = qd.field(qd.f32, shape=None)
    assert isinstance(f, torch.Tensor) and tuple(f.shape) == (4, 5) and tuple(f.size()) == (4, 5, 2, 3)
    assert f.dtype == torch.float64 and a.dtype == torch.uint8 and tuple(a.shape) == (6,)
    assert tuple(s.size()) == ()
    s[None] = 2.5
    assert s[0] == 2.5
    assert list(qd.grouped(f))[-1].to_numpy().tolist() == [3, 4]


def test_scalar_arguments_are_checked_and_rounded_as_for_a_compiled_call() -> None:
    qd.init(arch=qd.python)
    seen = []

    @qd.kernel
    def k(x: qd.f32, n: qd.i8) -> qd.i32:
        seen.append((x, n))
        return 0

    k(0.1, 5)
    assert seen == [(float(np.float32(0.1)), 5)]
    with pytest.raises(qd.QuadrantsRuntimeTypeError, match="out of range"):
        k(0.1, 300)
    with pytest.raises(qd.QuadrantsRuntimeTypeError, match="cannot be converted"):
        k(0.1, 2.5)
    with pytest.raises(qd.QuadrantsArgumentError, match="Missing argument 'n'"):
        k(0.1)


def test_atomics_update_elements_in_place_and_return_the_old_value() -> None:
    qd.init(arch=qd.python)
    a = qd.ndarray(qd.i32, (3,))
    a[0], a[1], a[2] = 6, 3, 1
    assert qd.atomic_sub(a[0], 2) == 6 and qd.atomic_min(a[1], 1) == 3 and qd.atomic_xor(a[2], 3) == 1
    assert qd.atomic_cas(a[0], 4, 9) == 4 and qd.atomic_cas(a[0], 4, 7) == 9
    assert a.tolist() == [9, 1, 2]
    v = qd.field(vec3, shape=(2,))
    old = qd.atomic_add(v[1], qd.Vector([1.0, 2.0, 3.0]))
    assert old.tolist() == [0.0, 0.0, 0.0] and v[1].tolist() == [1.0, 2.0, 3.0]
    with pytest.raises(qd.QuadrantsSyntaxError, match="a local cannot be updated"):
        qd.atomic_add(5, 1)


def test_funcs_and_loop_config_run_from_python_scope_only_on_the_python_backend() -> None:
    @qd.func
    def twice(x):  # type: ignore[no-untyped-def]
        return 2 * x

    with pytest.raises(qd.QuadrantsSyntaxError, match="can only be called from a kernel"):
        twice(3)
    with pytest.raises(qd.QuadrantsSyntaxError, match="only be used inside a kernel"):
        qd.loop_config(serialize=True)
    qd.init(arch=qd.python)
    assert twice(3) == 6 and qd.loop_config(serialize=True) is None
    qd_init()
    assert not python_backend.active() and isinstance(qd.field(qd.f32, shape=2), qd.Field)
    with pytest.raises(qd.QuadrantsSyntaxError):
        twice(3)


def test_without_torch_the_python_arch_falls_back_to_the_cpu(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(python_backend, "available", lambda: False)
    qd.init(arch=qd.python)
    assert qd.cfg.arch is qd.cpu and not python_backend.active()
    with pytest.raises(RuntimeError, match="needs torch"):
        qd.init(arch=qd.python, enable_fallback=False)
