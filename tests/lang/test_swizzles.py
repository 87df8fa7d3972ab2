"""Swizzles (`v.xy`, `v.rgb`, `v.stp`) read and write vector components in Python scope and in kernels, with
Quadrants' errors for a component beyond the vector (`vec2 only has attributes=...`) and for a value of the
wrong length. One definition serves both (types/compound.swizzle_indices)."""

from __future__ import annotations

import pytest

import quadrants as qd
from tests.helpers import define


def test_python_scope_swizzles_read_and_write() -> None:
    v = qd.math.vec3(0, 0, 0)
    v.rgb += 1
    v.zyx += qd.math.vec3(1, 2, 3)
    assert v.to_list() == [4, 3, 2] and v.stp.to_list() == [4, 3, 2] and v.s == 4 and v.b == 2
    assert v.xxzz.to_list() == [4, 4, 2, 2]
    v.p = 7
    assert v.z == 7


def test_kernel_swizzles_read_and_write() -> None:
    ns = define("""
        @qd.kernel
        def k() -> qd.f32:
            v = qd.math.vec3(0, 0, 0)
            v.brg += 1
            v.p = 3
            v.tps = qd.math.vec3(5, 6, 7)
            return v.s * 100 + v.t * 10 + v.p + v.xz.sum() * 1000
    """)
    assert ns["k"]() == 7 * 100 + 5 * 10 + 6 + (7 + 6) * 1000


@pytest.mark.parametrize(("attr", "words"), [
    ("z", "vec2 only has attributes=('x', 'y'), got=('z',)"),
    ("xyz", "vec2 only has attributes=('x', 'y'), got=('x', 'y', 'z')"),
    ("p", "vec2 only has attributes=('s', 't'), got=('p',)"),
])  # fmt: skip
def test_a_component_beyond_the_vector(attr: str, words: str) -> None:
    a = qd.math.vec2(1, 2)
    with pytest.raises(qd.QuadrantsSyntaxError, match=words.replace("(", r"\(").replace(")", r"\)")):
        setattr(a, attr, [1] * len(attr))
    ns = define(f"""
        @qd.kernel
        def k():
            b = qd.math.vec2(1, 2)
            b.{attr} = {[1] * len(attr) if len(attr) > 1 else 1}
    """)
    with pytest.raises(qd.QuadrantsSyntaxError, match=words.replace("(", r"\(").replace(")", r"\)")):
        ns["k"]()


def test_a_value_of_the_wrong_length() -> None:
    a = qd.math.vec2(1, 2)
    with pytest.raises(qd.QuadrantsRuntimeError, match="value len does not match the swizzle pattern=xy"):
        a.xy = [1, 2, 3]
    with pytest.raises(AttributeError, match="no attribute 'foo'"):
        a.foo  # noqa: B018
