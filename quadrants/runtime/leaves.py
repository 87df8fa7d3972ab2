"""The records a specialization hands the launcher: leaves (where each native argument comes from) and guards
(the compiled-in values a later call must still match).

Produced by the specializer (lang/args.py), one walk over a call's arguments; consumed by the launchers
(runtime/launch.py, runtime/cuda_launch.py), which dispatch on the leaf's class. A path is the parameter's
index followed by attribute names (`(1, "x")` is `args[1].x`).
"""

from __future__ import annotations

import enum
import sys
from dataclasses import dataclass
from typing import Any

import numpy as np

from quadrants.ir.types import NdType
from quadrants.types.dtypes import PrimitiveType

Path = tuple[Any, ...]  # parameter index, then attribute names


def is_torch_tensor(v: Any) -> bool:
    """A torch tensor, of torch's class or a subclass (Genesis passes its `gs.Tensor`); torch is not imported
    for this: a program that never imported it has no tensors."""
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(v, torch.Tensor)


@dataclass(frozen=True, slots=True)
class NdarrayLeaf:
    """A qd.ndarray, passed by its descriptor."""

    path: Path
    dtype: PrimitiveType
    nd: NdType


@dataclass(frozen=True, slots=True)
class NumpyLeaf:
    """A numpy array: `np_dtype` and `ndim` (indexed dimensions) are what the fast path checks it by."""

    path: Path
    dtype: PrimitiveType
    nd: NdType
    np_dtype: np.dtype  # type: ignore[type-arg]
    ndim: int


@dataclass(frozen=True, slots=True)
class ExternalLeaf:
    """Another array type (a torch tensor): always marshalled by the general path."""

    path: Path
    dtype: PrimitiveType
    nd: NdType


@dataclass(frozen=True, slots=True)
class ScalarLeaf:
    """A scalar argument (or a scalar member of a struct)."""

    path: Path
    dtype: PrimitiveType
    wrap: bool = False  # a member of a qd.types.struct argument: integers wrap to the type, as in Quadrants


@dataclass(frozen=True, slots=True)
class ElementLeaf:
    """Component `index` (row-major) of a runtime vector/matrix argument: one native scalar per component."""

    path: Path
    dtype: PrimitiveType
    index: int
    wrap: bool = False


ArrayLeaf = NdarrayLeaf | NumpyLeaf | ExternalLeaf  # (also usable with isinstance)
Leaf = NdarrayLeaf | NumpyLeaf | ExternalLeaf | ScalarLeaf | ElementLeaf


class GuardKind(str, enum.Enum):
    """How a compiled-in value is checked; the value is the word the fastcache signature text uses. (A `str`
    enum: it hashes as fast as a string, and the in-memory key holds it.)"""

    VALUE = "value"  # plain data (numbers, strings, enums, dtypes, nested tuples): same type and ==
    MATRIX = "matrix"  # a Python-scope qd.Vector / qd.Matrix: same type and elements (a snapshot is kept)
    IDENTITY = "identity"  # any other object (a field, a function): the same object
    CLASS = "class"  # the class of a struct whose members are guarded or passed one by one
    ALIAS = "alias"  # a back-reference to an enclosing struct: the same object as the one at path `value`

    __str__ = str.__str__


@dataclass(frozen=True, slots=True)
class Guard:
    """A compiled-in value: the specialization holds while the value at `path` still matches."""

    path: Path
    kind: GuardKind
    value: Any
    via_tensor: bool = False  # a field that arrived through a `qd.Tensor` parameter
