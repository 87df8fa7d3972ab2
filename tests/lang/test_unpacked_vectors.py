"""`qd.types.vector(n, dt, unpacked=True)` as a `@qd.dataclass` member: stored as scalar members `_r0 ..`,
read and written as `obj.r[i]` with `i` known at compile time (struct values, nested structs, struct-field
elements); Quadrants' errors for a runtime or out-of-range index, for the type used as a value, and for a
member name that collides with a component member."""

from __future__ import annotations

import numpy as np
import pytest

import quadrants as qd
from tests.helpers import define


@qd.dataclass
class Tile:
    r: qd.types.vector(3, qd.f32, unpacked=True)  # type: ignore[valid-type]
    w: qd.f32


@qd.dataclass
class Holder:
    tile: Tile
    k: qd.i32


def test_the_members_are_the_components() -> None:
    assert list(Tile.members) == ["_r0", "_r1", "_r2", "w"]
    assert Tile._unpacked_groups["r"][:2] == (3, qd.f32)


def test_components_in_values_nested_structs_and_field_elements() -> None:
    tiles = Tile.field(shape=(2,))
    ns = define("""
        @qd.kernel
        def k(out: qd.types.NDArray[qd.f32, 1]):
            for _ in range(1):
                t = Tile()
                for i in qd.static(range(3)):
                    t.r[i] = 1.0 + i
                t.r[2] += 10.0
                h = Holder()
                h.tile.r[1] = 4.0
                out[0] = t.r[0] + t.r[1] * 10 + t.r[2] * 100 + h.tile.r[1] * 1000
            for n in range(2):
                for i in qd.static(range(3)):
                    tiles[n].r[i] = n * 10.0 + i
            out[1] = tiles[1].r[2] + tiles[0].r[1]
    """, Tile=Tile, Holder=Holder, tiles=tiles)
    out = np.zeros(2, np.float32)
    ns["k"](out)
    assert out.tolist() == [1 + 20 + 1300 + 4000, 12 + 1]
    assert tiles[1]._r2 == 12.0  # Python scope sees the component members


@pytest.mark.parametrize(("index", "words"), [("j", "python-int"), ("5", "out of bounds")])
def test_a_runtime_or_out_of_range_index(index: str, words: str) -> None:
    ns = define(f"""
        @qd.kernel
        def k(j: qd.i32) -> qd.f32:
            t = Tile()
            return t.r[{index}]
    """, Tile=Tile)
    with pytest.raises(qd.QuadrantsSyntaxError, match=words):
        ns["k"](1)


def test_the_type_is_only_a_member_annotation() -> None:
    t = qd.types.vector(4, qd.f32, unpacked=True)
    for make in (lambda: t(1.0, 2.0, 3.0, 4.0), lambda: t.field(shape=(2,)), lambda: t.ndarray(shape=(2,))):
        with pytest.raises(qd.QuadrantsSyntaxError, match=r"unpacked=True\).*@qd.dataclass"):
            make()


def test_a_member_colliding_with_a_component() -> None:
    with pytest.raises(qd.QuadrantsSyntaxError, match="'_r1' collides with a component member of the unpacked"):
        qd.types.struct(r=qd.types.vector(2, qd.f32, unpacked=True), _r1=qd.f32)
    with pytest.raises(qd.QuadrantsSyntaxError, match="'_r0' collides"):
        qd.types.struct(_r0=qd.f32, r=qd.types.vector(2, qd.f32, unpacked=True))
