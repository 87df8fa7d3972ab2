"""qd.types.quant: quantized ints, fixed-point and floats stored as bits of shared words (qd.BitpackedFields,
quant_array levels; lang/bitpacked.py, codegen/quant.py, passes/bit_stores.py).

Oracles: numpy models of the conversions (low bits, sign-extended; fixed-point digits rounded half away from
zero in f32; a float's relative error bounded by its digit count), and Python sums for the atomics."""

from __future__ import annotations

import numpy as np
import pytest

import quadrants as qd
from quadrants.errors import QuadrantsSyntaxError

quant = qd.types.quant


def _wrap(v: np.ndarray, bits: int, signed: bool) -> np.ndarray:
    """The value a `bits`-bit int reads back as: the low bits, sign-extended when signed."""
    low = v.astype(np.int64) & ((1 << bits) - 1)
    return np.where(signed & (low >= 1 << (bits - 1)), low - (1 << bits), low)


def test_the_types_describe_themselves_and_check_their_widths() -> None:
    assert repr(quant.int(13)) == "qd.types.quant.int(13)" and quant.int(7, False).compute == qd.u32
    assert quant.fixed(bits=8, max_value=2).scale == 2 / 128
    assert quant.fixed(8, signed=False, max_value=2).scale == 2 / 256
    f = quant.float(exp=5, frac=10)
    assert (f.exponent_bits, f.bits, f.compute) == (5, 10, qd.f32)
    with pytest.raises(ValueError, match="1 to 64 bits"):
        quant.int(0)
    with pytest.raises(ValueError, match="1 to 8 exponent bits"):
        quant.float(exp=9, frac=10)
    assert qd.is_extension_supported(qd.cpu, qd.extension.quant)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_ints_in_one_word_keep_their_low_bits_and_leave_their_neighbours_alone(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = 64
    widths = [(5, True), (11, False), (9, True), (7, True)]  # 32 bits: one word per cell
    fields = [qd.field(dtype=quant.int(b, s)) for b, s in widths]
    bits = qd.BitpackedFields(max_num_bits=32)
    bits.place(*fields)
    qd.root.dense(qd.i, n).place(bits)
    values = [rng.integers(-5000, 5000, n).astype(np.int32) for _ in widths]
    src = [qd.ndarray(qd.i32, (n,)) for _ in widths]
    for s, v in zip(src, values):
        s.from_numpy(v)

    @qd.kernel
    def store(a: qd.types.NDArray[qd.i32, 1], b: qd.types.NDArray[qd.i32, 1], c: qd.types.NDArray[qd.i32, 1],
              d: qd.types.NDArray[qd.i32, 1]):  # fmt: skip
        for i in range(n):
            fields[0][i] = a[i]
            fields[1][i] = b[i]
            if i % 3 == 0:  # a store of some members of a word: the others keep their bits
                fields[2][i] = c[i]
            fields[3][i] = d[i]

    store(*src)
    for k, ((b, s), f) in enumerate(zip(widths, fields)):
        want = _wrap(values[k], b, s)
        if k == 2:
            want = np.where(np.arange(n) % 3 == 0, want, 0)
        np.testing.assert_array_equal(f.to_numpy().astype(np.int64), want)
        assert int(f[5]) == want[5]  # Python scope reads the same bits


def test_fixed_point_rounds_half_away_from_zero_and_reads_back_its_digits() -> None:
    q = quant.fixed(12, max_value=4.0)  # scale 4 / 2**11
    q_u = quant.fixed(10, signed=False, max_value=2.0)
    x, y = qd.field(dtype=q), qd.field(dtype=q_u)
    bits = qd.BitpackedFields(max_num_bits=32)
    bits.place(x, y)
    n = 200
    qd.root.dense(qd.i, n).place(bits)
    rng = np.random.default_rng(7)
    vx = rng.uniform(-3.9, 3.9, n).astype(np.float32)
    vy = rng.uniform(0.0, 1.99, n).astype(np.float32)
    src_x, src_y = qd.ndarray(qd.f32, (n,)), qd.ndarray(qd.f32, (n,))
    src_x.from_numpy(vx)
    src_y.from_numpy(vy)

    @qd.kernel
    def store(a: qd.types.NDArray[qd.f32, 1], b: qd.types.NDArray[qd.f32, 1]):
        for i in range(n):
            x[i] = a[i]
            y[i] = b[i]

    store(src_x, src_y)
    for v, f, t in ((vx, x, q), (vy, y, q_u)):
        inv = np.float32(1.0 / t.scale)
        digits = np.trunc(v * inv + np.copysign(np.float32(0.5), v)).astype(np.int64)
        np.testing.assert_array_equal(f.to_numpy(), (digits * np.float32(t.scale)).astype(np.float32))
        assert np.max(np.abs(f.to_numpy() - v)) <= t.scale / 2 + 1e-7


def test_floats_keep_their_digits_and_a_shared_exponent_follows_the_largest() -> None:
    qf = quant.float(exp=6, frac=13)  # 13 digit bits with the sign: a relative step of 2**-11
    a, b = qd.field(dtype=qf), qd.field(dtype=qf)
    c, d = qd.field(dtype=qf), qd.field(dtype=qf)
    own = qd.BitpackedFields(max_num_bits=64)
    own.place(a, b)
    shared = qd.BitpackedFields(max_num_bits=32)
    shared.place(c, d, shared_exponent=True)
    n = 100
    qd.root.dense(qd.i, n).place(own, shared)
    rng = np.random.default_rng(3)
    big = (rng.uniform(1.0, 2.0, n) * 2.0 ** rng.integers(-6, 6, n)).astype(np.float32) * rng.choice([-1, 1], n)
    small = (big * np.float32(1e-3)).astype(np.float32)
    src_big, src_small = qd.ndarray(qd.f32, (n,)), qd.ndarray(qd.f32, (n,))
    src_big.from_numpy(big)
    src_small.from_numpy(small)

    @qd.kernel
    def store(p: qd.types.NDArray[qd.f32, 1], s: qd.types.NDArray[qd.f32, 1]):
        for i in range(n):
            a[i] = p[i]
            b[i] = s[i]
            c[i] = p[i]
            d[i] = s[i]

    store(src_big, src_small)
    step = 2.0**-11
    np.testing.assert_allclose(a.to_numpy(), big, rtol=step)
    np.testing.assert_allclose(b.to_numpy(), small, rtol=step)  # its own exponent: as exact as the big one
    np.testing.assert_allclose(c.to_numpy(), big, rtol=step)
    # sharing the big value's exponent, the small one keeps only the digits above the big one's last place
    err = np.abs(d.to_numpy() - small)
    assert np.all(err <= np.abs(big) * step) and np.any(err > np.abs(small) * step)


def test_parallel_stores_into_the_elements_of_one_word_are_not_lost() -> None:
    n = 4096
    x = qd.field(dtype=quant.int(4, False))
    qd.root.dense(qd.i, n // 8).quant_array(qd.i, 8, max_num_bits=32).place(x)  # 8 elements per word

    @qd.kernel
    def fill():
        for i in range(n):
            x[i] = (i * 7 + 3) % 16

    fill()
    np.testing.assert_array_equal(x.to_numpy(), (np.arange(n) * 7 + 3) % 16)


def test_atomic_adds_on_quantized_members_wrap_within_their_bits() -> None:
    x, y = qd.field(dtype=quant.int(10)), qd.field(dtype=quant.fixed(16, max_value=64.0))
    bits = qd.BitpackedFields(max_num_bits=32)
    bits.place(x, y)
    qd.root.place(bits)
    n = 1000

    @qd.kernel
    def add():
        for i in range(n):
            x[None] += 1  # 1000 wraps in a signed 10-bit int
            y[None] += 0.03125  # an exact step: 31.25 in total

    add()
    assert x[None] == _wrap(np.array([n]), 10, True)[0]
    assert y[None] == pytest.approx(n * 0.03125)


def test_layout_errors_name_what_does_not_fit() -> None:
    bits = qd.BitpackedFields(max_num_bits=16)
    with pytest.raises(QuadrantsSyntaxError, match="BitStructType overflows: 18 bits used out of 16"):
        bits.place(qd.field(dtype=quant.int(9)), qd.field(dtype=quant.int(9)))
    with pytest.raises(ValueError, match="max_num_bits must be 8, 16, 32 or 64"):
        qd.BitpackedFields(max_num_bits=24)
    with pytest.raises(qd.QuadrantsRuntimeError, match="declared without shape="):
        qd.field(dtype=quant.int(5), shape=4)


def test_the_bit_layout_is_in_the_offline_key(tmp_path: object) -> None:
    """The same kernel source over a field whose quantized width changed must not load the old code."""
    results = []
    for width in (4, 6):
        qd.init(arch=qd.cpu, offline_cache=True, offline_cache_file_path=str(tmp_path))
        x = qd.field(dtype=quant.int(width))
        bits = qd.BitpackedFields(max_num_bits=8)
        bits.place(x)
        qd.root.place(bits)

        @qd.kernel
        def put(v: qd.i32):
            x[None] = v

        put(40)
        results.append(int(x[None]))
    assert results == [_wrap(np.array([40]), 4, True)[0], _wrap(np.array([40]), 6, True)[0]]  # [8, -24]


@pytest.mark.parametrize("value", [-64, -1, 200, 1 << 20])
def test_python_scope_writes_out_of_the_compute_range_wrap_to_the_bits(value: int) -> None:
    """`b[None] = -64` into a 7-bit unsigned member (compute type u16, whose range -64 is outside) stores the
    low 7 bits, as a write into a dense field's array and Quadrants' Python-scope writes do; read back directly
    and through a kernel's cast, beside a signed neighbour that keeps its value."""
    a, b = qd.field(quant.int(5, True, qd.i16)), qd.field(quant.int(7, False, qd.u16))
    words = qd.BitpackedFields(max_num_bits=32)
    words.place(a, b)
    qd.root.place(words)
    out = qd.field(qd.i32, shape=2)

    @qd.kernel
    def read():
        out[0] = qd.cast(a[None], qd.i32)
        out[1] = qd.cast(b[None], qd.i32)

    a[None], b[None] = -16, value
    read()
    want = int(_wrap(np.array([value]), 7, False)[0])
    assert (a[None], b[None]) == (-16, want) and out.to_numpy().tolist() == [-16, want]
