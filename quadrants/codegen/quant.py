"""Loads, stores and atomics of quantized fields: bits of words (ir/bits.py), converted as Quadrants 1.3.3 does.

Consumes the element pointers of fields whose `ir.GlobalNd.bits` is set (`note_pointer`, from
`FnLowering.ext_ptr`: the word's address and the element's bit offset) and the `Load`, `Store`, `BitStore` and
`AtomicRMW` statements through them; produces LLVM integer arithmetic on the words. The conversions are
Quadrants' own, step by step, so values round alike:

- int: the low bits of the value (a load sign- or zero-extends them into the compute type);
- fixed: `int(value * (1 / scale) + copysign(0.5, value))` in the compute type, read back as `digits * scale`;
- float: the f32's bits rounded at the digits' last place (a carry goes into the exponent), the exponent
  rebased by `127 - 2**(e - 1) + 1` and clamped at 0 (0 flushes the digits to zero); with a shared exponent,
  the largest of the floats' exponents and each float's digits shifted to it (its leading one kept).

A store to some members of a word replaces only their bits with a compare-exchange loop; a store of every
member (passes/bit_stores.py fuses consecutive ones) writes the word. Atomic add on ints and fixed-point
numbers adds the digits in place (wrapping within the member); other atomics on them, and every atomic on a
float, are a read-modify-write, as Quadrants demotes them.
"""

from __future__ import annotations

from typing import Any

from llvmlite import ir as ll

from quadrants.codegen.llvm_types import F32, I32, reg
from quadrants.ir import nodes as ir
from quadrants.ir.bits import BitMember, BitSlot
from quadrants.types import dtypes
from quadrants.types.dtypes import PrimitiveType

# `lw` is the FnLowering (codegen/lower.py) lowering the function: not imported, lower.py imports this module.


def _c(t: ll.IntType, v: int) -> ll.Constant:
    return ll.Constant(t, v & ((1 << t.width) - 1))


def note_pointer(lw: Any, s: ir.ExtPtr, idx: list[ll.Value]) -> None:
    """Record the bit offset of a quantized element (`idx`: its i64 indices) beside its word's address."""
    assert isinstance(s.arr, ir.GlobalNd) and s.arr.bits is not None
    slot = s.arr.bits
    wt = ll.IntType(slot.word.bits)
    off: ll.Value = _c(wt, slot.this.offset)
    if slot.array:
        b = lw.b
        flat: ll.Value | None = None
        for pos, div, mod in slot.array:
            d = b.udiv(idx[pos], ll.Constant(idx[pos].type, div)) if div != 1 else idx[pos]
            d = b.urem(d, ll.Constant(d.type, mod))
            flat = d if flat is None else b.add(b.mul(flat, ll.Constant(d.type, mod)), d)
        assert flat is not None
        flat = b.trunc(flat, wt) if wt.width < 64 else flat
        off = b.add(b.mul(flat, _c(wt, slot.this.bits)), off)
    lw.bit_ptrs[id(s)] = (slot, off)


def is_bit_pointer(lw: Any, ptr: ir.Value) -> bool:
    return id(ptr) in lw.bit_ptrs


# ---- conversions -----------------------------------------------------------------------------------------


def _intcast(b: ll.IRBuilder, v: ll.Value, t: ll.IntType, signed: bool) -> ll.Value:
    if v.type.width > t.width:
        return b.trunc(v, t)
    if v.type.width < t.width:
        return b.sext(v, t) if signed else b.zext(v, t)
    return v


def _extract_int(b: ll.IRBuilder, word: ll.Value, off: ll.Value, bits: int, signed: bool) -> ll.Value:
    """The member's bits as an integer of the word's width: shifted up to the top, then back down."""
    wt = word.type
    left = b.sub(_c(wt, wt.width), b.add(off, _c(wt, bits)))
    up = b.shl(word, left)
    return (b.ashr if signed else b.lshr)(up, _c(wt, wt.width - bits))


def _max_i32(b: ll.IRBuilder, x: ll.Value, y: ll.Value) -> ll.Value:
    return b.select(b.icmp_signed(">", x, y), x, y)


def _min_u32(b: ll.IRBuilder, x: ll.Value, y: ll.Value) -> ll.Value:
    return b.select(b.icmp_unsigned("<", x, y), x, y)


def _max_u32(b: ll.IRBuilder, x: ll.Value, y: ll.Value) -> ll.Value:
    return b.select(b.icmp_unsigned(">", x, y), x, y)


def _conversion_offset(exp_bits: int) -> int:
    """What a stored exponent adds to become an f32's (f32's bias is 127)."""
    return 127 - (1 << (exp_bits - 1)) + 1


def decode(lw: Any, word: ll.Value, off: ll.Value, slot: BitSlot, k: int) -> ll.Value:
    """Member `k` of `word` (at bit `off`) as its compute type."""
    b = lw.b
    m = slot.members[k]
    if m.kind == "float":
        return _decode_float(b, word, slot, k)
    digits = _intcast(b, _extract_int(b, word, off, m.bits, m.signed), I32 if m.kind == "fixed" else reg(m.compute),
                      m.signed)  # fmt: skip
    if m.kind != "fixed":
        return digits
    ct = reg(m.compute)
    f = b.sitofp(digits, ct) if m.signed else b.uitofp(digits, ct)
    return b.fmul(f, _fp_const(m.compute, m.scale))


def _fp_const(t: PrimitiveType, v: float) -> ll.Constant:
    """A double constant cast to `t` (Quadrants makes the scale an f64 constant and casts it)."""
    if t is dtypes.f32:
        import numpy as np

        return ll.Constant(F32, float(np.float32(v)))
    return ll.Constant(reg(t), v)


def _decode_float(b: ll.IRBuilder, word: ll.Value, slot: BitSlot, k: int) -> ll.Value:
    m = slot.members[k]
    e = slot.members[m.exponent]
    wt = word.type
    digits_in = _intcast(b, _extract_int(b, word, _c(wt, m.offset), m.bits, m.signed), I32, m.signed)
    exp_in = _intcast(b, _extract_int(b, word, _c(wt, e.offset), e.bits, False), I32, False)
    shared = slot.shares_exponent(k)
    db = m.digit_bits
    offset: ll.Value = ll.Constant(I32, _conversion_offset(e.bits))
    if e.bits < 8:  # a stored zero stays zero
        offset = b.select(b.icmp_unsigned("!=", exp_in, ll.Constant(I32, 0)), offset, ll.Constant(I32, 0))
    digits = b.and_(digits_in, _c(I32, (1 << m.bits) - 1))
    sign: ll.Value | None = None
    if shared:
        if m.signed:
            sign = b.and_(digits, ll.Constant(I32, 1 << db))
            digits = b.xor(digits, sign)
            sign = b.shl(sign, ll.Constant(I32, 31 - db))
            digits = b.shl(digits, ll.Constant(I32, 1))
        lz = b.ctlz(digits, ll.Constant(ll.IntType(1), 0))
        extra = b.sub(ll.Constant(I32, 31 - db), lz)
        offset = b.add(offset, extra)
        if not m.signed:
            offset = b.add(offset, ll.Constant(I32, 1))
        digits = b.shl(digits, b.sub(ll.Constant(I32, 23 - db), extra))
    else:
        digits = b.shl(digits, ll.Constant(I32, 23 - db))
    fraction = b.and_(digits, ll.Constant(I32, (1 << 23) - 1))
    bits = b.or_(b.shl(b.add(exp_in, offset), ll.Constant(I32, 23)), fraction)
    if shared:
        zero = b.or_(b.icmp_unsigned("==", exp_in, ll.Constant(I32, 0)),
                     b.icmp_unsigned("==", digits_in, ll.Constant(I32, 0)))  # fmt: skip
        bits = b.select(zero, ll.Constant(I32, 0), bits)
    if m.signed:
        if sign is None:
            sign = b.shl(b.and_(digits, ll.Constant(I32, 1 << 23)), ll.Constant(I32, 8))
        bits = b.or_(bits, sign)
    return b.bitcast(bits, F32)


def _fixed_digits(lw: Any, m: BitMember, value: ll.Value, wrap: bool = False) -> ll.Value:
    """`int(value / scale + copysign(0.5, value))` as an i32, in the compute type (Quadrants' to_quant_fixed)."""
    b = lw.b
    ct = reg(m.compute)
    scaled = b.fmul(value, _fp_const(m.compute, 1.0 / m.scale))
    it = ll.IntType(64 if isinstance(ct, ll.DoubleType) else 32)
    half = b.bitcast(ll.Constant(ct, 0.5), it)
    sign = b.and_(b.bitcast(scaled, it), _c(it, 1 << (it.width - 1)))
    scaled = b.fadd(scaled, b.bitcast(b.or_(sign, half), ct))
    if m.signed:
        return b.fptosi(scaled, I32)
    # unsigned: Quadrants' fptoui of a value out of range is LLVM's poison; what its x86 code gives is spelled
    # out: all ones in a store (AVX-512's unsigned conversion), the low bits of a signed 64-bit conversion in an
    # atomic add (a negative addend subtracts)
    low = b.trunc(b.fptosi(scaled, ll.IntType(64)), I32)
    if wrap:
        return low
    out = b.or_(b.fcmp_unordered("<=", scaled, ll.Constant(ct, -1.0)),
                b.fcmp_ordered(">=", scaled, ll.Constant(ct, 2.0**32)))  # fmt: skip
    return b.select(out, ll.Constant(I32, -1), low)


def _int_bits(lw: Any, m: BitMember, value: ll.Value, wt: ll.IntType) -> ll.Value:
    """An int or fixed member's bits (not yet shifted into place), as Quadrants makes them."""
    b = lw.b
    if m.kind == "fixed":
        value = _fixed_digits(lw, m, value)
    if m.bits < value.type.width:
        value = b.and_(value, _c(value.type, (1 << m.bits) - 1))
    return _intcast(b, value, wt, False)


def _exponent(b: ll.IRBuilder, f: ll.Value) -> ll.Value:
    return b.and_(b.lshr(b.bitcast(f, I32), ll.Constant(I32, 23)), ll.Constant(I32, 0xFF))


def _float_bits(b: ll.IRBuilder, slot: BitSlot, k: int, value: ll.Value, wt: ll.IntType) -> tuple[ll.Value, int]:
    """A float with an exponent of its own: its digits and exponent placed in a word, and their mask."""
    m = slot.members[k]
    e = slot.members[m.exponent]
    db = m.digit_bits
    fb = b.bitcast(value, I32)
    if db < 23:  # round to nearest: a carry out of the digits goes into the exponent
        fb = b.add(fb, ll.Constant(I32, 1 << (22 - db)))
    exp = b.and_(b.ashr(fb, ll.Constant(I32, 23)), ll.Constant(I32, 0xFF))
    digits = b.and_(b.ashr(fb, ll.Constant(I32, 23 - db)), ll.Constant(I32, (1 << db) - 1))
    if m.signed:
        digits = b.or_(digits, b.lshr(b.and_(fb, _c(I32, 0x80000000)), ll.Constant(I32, 31 - db)))
    rebase = b.select(b.icmp_unsigned("!=", exp, ll.Constant(I32, 0)), ll.Constant(I32, _conversion_offset(e.bits)),
                      ll.Constant(I32, 0))  # fmt: skip
    exp = _max_i32(b, b.sub(exp, rebase), ll.Constant(I32, 0))
    out = b.shl(_intcast(b, exp, wt, False), _c(wt, e.offset))
    digits = b.select(b.icmp_unsigned("!=", exp, ll.Constant(I32, 0)), digits, ll.Constant(I32, 0))  # FTZ
    out = b.or_(out, b.shl(_intcast(b, digits, wt, False), _c(wt, m.offset)))
    return out, _mask(e.bits, e.offset) | _mask(m.bits, m.offset)


def _mask(bits: int, offset: int) -> int:
    return ((1 << bits) - 1) << offset


def _shared_bits(lw: Any, slot: BitSlot, word: ll.Value, stored: dict[int, ll.Value]) -> tuple[ll.Value | None, int]:
    """The shared exponents that the stored members use, with all their floats (the stored ones' new values, the
    others' current ones) re-encoded against the largest exponent."""
    b = lw.b
    wt = word.type
    out: ll.Value | None = None
    mask = 0
    for e in slot.members:
        if len(e.users) < 2 or not any(u in stored for u in e.users):
            continue
        floats = [stored[u] if u in stored else _decode_float(b, word, slot, u) for u in e.users]
        top = _exponent(b, floats[0])
        for f in floats[1:]:
            top = _max_u32(b, top, _exponent(b, f))
        rebase = b.select(b.icmp_unsigned("!=", top, ll.Constant(I32, 0)),
                          ll.Constant(I32, _conversion_offset(e.bits)), ll.Constant(I32, 0))  # fmt: skip
        exp = _max_i32(b, b.sub(top, rebase), ll.Constant(I32, 0))
        v = b.shl(b.zext(exp, wt) if wt.width > 32 else _intcast(b, exp, wt, False), _c(wt, e.offset))
        out = v if out is None else b.or_(out, v)
        mask |= _mask(e.bits, e.offset)
        for u, f in zip(e.users, floats):
            m = slot.members[u]
            fb = b.bitcast(f, I32)
            own = _exponent(b, f)
            implicit = b.shl(b.zext(b.icmp_unsigned("!=", own, ll.Constant(I32, 0)), I32), ll.Constant(I32, 23))
            d = b.or_(b.or_(b.and_(fb, ll.Constant(I32, (1 << 23) - 1)), ll.Constant(I32, 1 << 23)), implicit)
            d = b.lshr(d, _min_u32(b, b.sub(top, own), ll.Constant(I32, 31)))
            shift = 24 - m.digit_bits
            d = b.add(d, ll.Constant(I32, 1 << (shift - 1)))  # round to nearest, without overflowing
            d = b.lshr(_min_u32(b, d, ll.Constant(I32, (1 << 24) - 1)), ll.Constant(I32, shift))
            if m.signed:
                d = b.or_(d, b.lshr(b.and_(fb, _c(I32, 1 << 31)), ll.Constant(I32, 31 - m.digit_bits)))
            out = b.or_(out, b.shl(_intcast(b, d, wt, False), _c(wt, m.offset)))
            mask |= _mask(m.bits, m.offset)
    return out, mask


# ---- memory ----------------------------------------------------------------------------------------------


def load(lw: Any, s: ir.Load) -> None:
    slot, off = lw.bit_ptrs[id(s.ptr)]
    word = lw.b.load(lw.v(s.ptr), typ=ll.IntType(slot.word.bits))
    lw.values[id(s)] = decode(lw, word, off, slot, slot.member)


def store(lw: Any, ptrs: tuple[ir.Value, ...], values: tuple[ir.Value, ...]) -> None:
    """Store `values` into the members `ptrs` point at (one word)."""
    b = lw.b
    slot, off = lw.bit_ptrs[id(ptrs[0])]
    wt = ll.IntType(slot.word.bits)
    ptr = lw.v(ptrs[0])
    if slot.array:  # a quant_array element: its bits at a run-time offset
        m = slot.this
        v = b.shl(_intcast(b, _fixed_digits(lw, m, lw.v(values[0])) if m.kind == "fixed" else lw.v(values[0]), wt,
                           False), off)  # fmt: skip
        mask = b.shl(_c(wt, (1 << m.bits) - 1), off)
        _set_masked(lw, ptr, wt, mask, v)
        return
    stored = {lw.bit_ptrs[id(p)][0].member: lw.v(v) for p, v in zip(ptrs, values)}
    if any(slot.shares_exponent(k) for k in stored):
        shared, smask = _shared_bits(lw, slot, b.load(ptr, typ=wt), stored)
        if shared is not None:
            _store_mask(lw, ptr, wt, smask, shared)
    word: ll.Value | None = None
    mask = 0
    for k, v in stored.items():
        m = slot.members[k]
        if slot.shares_exponent(k):
            continue
        if m.kind == "float":
            bits, kmask = _float_bits(b, slot, k, v, wt)
        else:
            bits, kmask = b.shl(_int_bits(lw, m, v, wt), _c(wt, m.offset)), _mask(m.bits, m.offset)
        word = bits if word is None else b.or_(word, bits)
        mask |= kmask
    if word is None:
        return
    everything = len(stored) == sum(1 for m in slot.members if m.kind != "exp")
    if everything and not any(slot.shares_exponent(k) for k in stored):
        b.store(word, ptr)  # every member: the word as computed (Quadrants masks nothing here)
        return
    _store_mask(lw, ptr, wt, mask, word)


def _store_mask(lw: Any, ptr: ll.Value, wt: ll.IntType, mask: int, value: ll.Value) -> None:
    if mask == (1 << wt.width) - 1:
        lw.b.store(value, ptr)
        return
    _set_masked(lw, ptr, wt, _c(wt, mask), value)


def _cas(lw: Any, ptr: ll.Value, wt: ll.IntType, update: Any) -> ll.Value:
    """A compare-exchange loop writing `update(old word)`; returns the old word."""
    b = lw.b
    pre = b.block
    first = b.load(ptr, typ=wt)
    loop = lw.fn.append_basic_block("bits.cas")
    done = lw.fn.append_basic_block("bits.done")
    b.branch(loop)
    b.position_at_end(loop)
    old = b.phi(wt)
    old.add_incoming(first, pre)
    res = b.cmpxchg(ptr, old, update(old), "seq_cst", "seq_cst")
    old.add_incoming(b.extract_value(res, 0), loop)
    b.cbranch(b.extract_value(res, 1), done, loop)
    b.position_at_end(done)
    return old


def _set_masked(lw: Any, ptr: ll.Value, wt: ll.IntType, mask: ll.Value, value: ll.Value) -> None:
    b = lw.b
    keep = b.xor(mask, _c(wt, -1))
    _cas(lw, ptr, wt, lambda old: b.or_(b.and_(old, keep), b.and_(value, mask)))


def atomic(lw: Any, s: ir.AtomicRMW) -> None:
    """An atomic update of a quantized element; its value is the element's old value."""
    b = lw.b
    slot, off = lw.bit_ptrs[id(s.ptr)]
    m = slot.this
    wt = ll.IntType(slot.word.bits)
    ptr = lw.v(s.ptr)
    t = s.type
    assert isinstance(t, PrimitiveType)
    if s.op in ("add", "sub") and m.kind in ("int", "fixed"):
        v = lw.v(s.value)
        if s.op == "sub":  # Quadrants adds the negated value
            v = b.fneg(v) if t.is_float else b.neg(v)
        add = _fixed_digits(lw, m, v, wrap=True) if m.kind == "fixed" else v
        add = b.shl(_intcast(b, add, wt, m.kind == "fixed" or t.kind == "int"), off)
        mask = b.shl(_c(wt, (1 << m.bits) - 1), off)
        keep = b.xor(mask, _c(wt, -1))
        old = _cas(lw, ptr, wt, lambda w: b.or_(b.and_(w, keep), b.and_(b.add(w, add), mask)))
        lw.values[id(s)] = decode(lw, old, off, slot, slot.member)
        return
    # a read-modify-write (Quadrants demotes atomics on floats; it has no others on bits)
    word = b.load(ptr, typ=wt)
    old_v = decode(lw, word, off, slot, slot.member)
    v = lw.v(s.value)
    if s.op == "xchg":
        new_v = v
    elif t.is_float and s.op in ("add", "sub"):  # plain IEEE (no contraction with the operand's multiply)
        new_v = b.fadd(old_v, b.fneg(v)) if s.op == "sub" else b.fadd(old_v, v)
    else:
        new_v = lw.math.binop(s.op, old_v, v, t)
    tmp = ir.Value(type=t)
    lw.values[id(tmp)] = new_v
    store(lw, (s.ptr,), (tmp,))
    lw.values[id(s)] = old_v
