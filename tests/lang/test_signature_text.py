"""The signature text of a specialization (`lang/args.signature_text`): the stable half of the fastcache key.

Each case spells out the whole text, so that any change to it (which would silently re-key every cached
kernel) fails here; the asserts also say what the text must name: every runtime argument by its path and
type, every compiled-in value by its path, guard kind and value, and the return types.
"""

from __future__ import annotations

import dataclasses
import enum

import numpy as np
import pytest

import quadrants as qd
from quadrants.lang import program
from quadrants.lang._fast_caching import FIELD_METADATA_CACHE_VALUE
from quadrants.lang.args import Specialization, signature_text

HERE = __name__


class Mode(enum.Enum):
    FAST = 1
    SLOW = 2


@dataclasses.dataclass
class State:
    x: qd.types.ndarray(dtype=qd.f32, ndim=1)  # type: ignore[valid-type]
    k: qd.i32  # type: ignore[valid-type]
    v: qd.types.vector(2, qd.f32)  # type: ignore[valid-type]
    n: int = dataclasses.field(default=3, metadata={FIELD_METADATA_CACHE_VALUE: True})


@qd.data_oriented
class Sim:
    def __init__(self) -> None:
        self.a = qd.ndarray(qd.i32, (4, 4))
        self.gain = 2.5
        self.name = "sim"

    @qd.kernel
    def step(self, s: qd.f32) -> None:
        pass


def _spec(kernel: object, *args: object) -> Specialization:
    return kernel.specialize(args, {}, program.get().config)  # type: ignore[attr-defined, no-any-return]


def _text(kernel: object, *args: object) -> str:
    text, reason, silent = signature_text(_spec(kernel, *args))
    assert (reason, silent) == ("", False)
    assert text is not None
    return text


def test_scalars_and_arrays_name_each_argument_path_and_type() -> None:
    @qd.kernel
    def k(a: qd.f32, b: qd.i32, x: qd.types.ndarray(dtype=qd.f32, ndim=1), y: qd.types.ndarray(),  # type: ignore[valid-type]
          z: qd.types.ndarray(dtype=qd.types.vector(3, qd.f32), ndim=2)) -> qd.f32:  # type: ignore[valid-type]  # fmt: skip
        return 0.0

    text = _text(k, 1.0, 2, qd.ndarray(qd.f32, 4), np.zeros((2, 3), np.int64), np.zeros((2, 2, 3), np.float32))
    parts = text.split(";")
    assert parts == [
        "a.0=scalar:f32",
        "a.1=scalar:i32",
        "a.2=ndarray[f32, 1]",  # a qd.ndarray
        "a.3=ndarray[i64, 2]",  # a numpy array: the same text as a qd.ndarray of its type
        "a.4=ndarray[f32, 2, elem=3]",
        "->f32",
    ]


def test_numpy_and_qd_ndarray_share_one_text() -> None:
    @qd.kernel
    def k(x: qd.types.ndarray()) -> None:  # type: ignore[valid-type]
        pass

    assert _text(k, np.zeros(4, np.float32)) == _text(k, qd.ndarray(qd.f32, 4)) == "a.0=ndarray[f32, 1]"


def test_vectors_and_matrices_are_one_element_leaf_per_component() -> None:
    @qd.kernel
    def k(v: qd.types.vector(3, qd.f32), m: qd.types.matrix(2, 2, qd.i32)) -> None:  # type: ignore[valid-type]
        pass

    assert _text(k, (1.0, 2.0, 3.0), [[1, 2], [3, 4]]) == (
        "a.0=element:f32[0];a.0=element:f32[1];a.0=element:f32[2];"
        "a.1=element:i32[0];a.1=element:i32[1];a.1=element:i32[2];a.1=element:i32[3]"
    )


def test_templates_and_enums_are_guards_with_their_values() -> None:
    @qd.kernel
    def k(n: qd.template(), t: qd.template(), d: qd.template(), c: qd.template(), mode: Mode) -> None:  # type: ignore[valid-type]
        pass

    text = _text(k, 4, (1, 2.5, "s"), qd.f16, qd.Vector([1, 2]), Mode.FAST)
    c = np.asarray(qd.Vector([1, 2]))
    assert text.split(";") == [
        "a.0:value=int:4",
        "a.1:value=tuple(int:1,float:2.5,str:'s')",
        "a.2:value=type:f16",
        f"a.3:matrix=matrix:{c.dtype}:{c.shape}:{c.tobytes().hex()}",  # a Python-scope vector: by its elements
        f"a.4:value=enum:{HERE}.Mode.FAST=int:1",
    ]


def test_dataclass_members_follow_their_parameter_path() -> None:
    @qd.kernel
    def k(s: qd.f32, st: State) -> None:  # type: ignore[valid-type]
        pass

    text = _text(k, 0.5, State(qd.ndarray(qd.f32, 3), 1, (1.0, 2.0)))
    assert text.split(";") == [
        "a.0=scalar:f32",
        "a.1.x=ndarray[f32, 1]",  # runtime members: leaves first, in declaration order
        "a.1.k=scalar:i32",
        "a.1.v=element:f32[0]",
        "a.1.v=element:f32[1]",
        "a.1.n:value=int:3",  # FIELD_METADATA_CACHE_VALUE: compiled in by value
        f"a.1:class=class:{HERE}.State",
    ]


def test_data_oriented_self_members() -> None:
    sim = Sim()
    assert _text(Sim.step, sim, 1.0).split(";") == [
        "a.0.a=ndarray[i32, 2]",
        "a.1=scalar:f32",
        "a.0.gain:value=float:2.5",  # primitives of a data_oriented object are compiled in (template_primitives)
        "a.0.name:value=str:'sim'",
        f"a.0:class=class:{HERE}.Sim",
    ]


def test_unkeyable_values_give_a_reason_naming_the_parameter() -> None:
    @qd.kernel
    def k(a: qd.f32, obj: qd.template()) -> None:  # type: ignore[valid-type]
        pass

    assert signature_text(_spec(k, 1.0, object())) == (
        None,
        "Parameter with path obj and type a object",
        False,
    )
    f = qd.field(qd.f32, 4)
    assert signature_text(_spec(k, 1.0, f)) == (
        None,
        "Parameter with path obj and type a field (fields disable fastcache; use a qd.ndarray)",
        False,
    )


def test_a_field_through_a_tensor_parameter_steps_aside_silently() -> None:
    @qd.kernel
    def k(t: qd.Tensor) -> None:  # type: ignore[valid-type]
        pass

    text, reason, silent = signature_text(_spec(k, qd.field(qd.f32, 4)))
    assert text is None and silent and "path t" in reason
    assert _text(k, qd.ndarray(qd.f32, 4)) == "a.0=ndarray[f32, 1]"


@pytest.mark.parametrize("n", [1, 2])
def test_the_in_memory_key_separates_what_the_text_separates(n: int) -> None:
    @qd.kernel
    def k(x: qd.types.ndarray(), n: qd.template()) -> None:  # type: ignore[valid-type]
        pass

    a, b = _spec(k, np.zeros(3, np.float32), n), _spec(k, np.zeros(3, np.float32), n + 1)
    assert a.key != b.key and signature_text(a)[0] != signature_text(b)[0]
    c = _spec(k, qd.ndarray(qd.f32, 5), n)
    assert c.key == a.key and signature_text(c) == signature_text(a)  # numpy and qd.ndarray: one kernel
