"""Kernel arguments -> a specialization: its key, its signature text, the frontend's parameter specs, and the
runtime leaves.

Compound arguments are flattened here. A dataclass contributes its declared members (ndarrays and primitives
become runtime arguments; members marked FIELD_METADATA_CACHE_VALUE are compiled in by value); a
data_oriented object contributes `vars(obj)` (ndarrays are runtime arguments; primitives, fields and other
objects are compiled in, unless `template_primitives=False`). Every compiled-in value becomes a `Guard` on its
access path, and every runtime value a leaf (`runtime/leaves.py`: one record class per kind of argument); the
generated fast path checks the guards and reads the leaves with plain attribute access.

One walk over the arguments records each leaf and guard together with its two descriptions: its part of the
in-memory key (`Specialization.key`, built on every slow-path call, so only cheap tuples), and its part of
the stable signature text the fastcache key is made of (`signature_text`), kept as a deferred part and joined
only when asked (the first call of a specialization): formatting, and fingerprinting compiled-in values,
would cost every call.
"""

from __future__ import annotations

import dataclasses
import enum
import numbers
import typing
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from quadrants.errors import QuadrantsArgumentValueError, QuadrantsRuntimeTypeError, QuadrantsSyntaxError
from quadrants.frontend.records import ParamSpec, SpecKind
from quadrants.ir.types import NdType
from quadrants.lang import program
from quadrants.lang._fast_caching import FIELD_METADATA_CACHE_VALUE
from quadrants.lang.data_oriented import is_data_oriented
from quadrants.lang.tensor import Tensor
from quadrants.runtime.launch import external_array, shape_beyond_i32
from quadrants.runtime.leaves import (
    ArrayLeaf,
    ElementLeaf,
    ExternalLeaf,
    Guard,
    GuardKind,
    Leaf,
    NdarrayLeaf,
    NumpyLeaf,
    Path,
    ScalarLeaf,
    is_torch_tensor,
)
from quadrants.runtime.ndarray import Ndarray, nd_type
from quadrants.types import annotations as ann
from quadrants.types import dtypes
from quadrants.types.compound import MatrixType, element_dim_mismatch, element_mismatch
from quadrants.types.dtypes import PrimitiveType
from quadrants.types.struct import StructType


@dataclass(frozen=True)
class Unkeyable:
    """A compiled-in value the signature text cannot describe: where, what it is, and whether fastcache steps
    aside silently."""

    path: Path
    what: str
    silent: bool


TextPart = Callable[[], "str | Unkeyable"]  # a deferred part of the signature text


@dataclass(slots=True)
class Specialization:
    """What one call's arguments select: `key` (in-memory), `specs` (for the frontend), `leaves` and `guards`
    (for the launcher), and the signature text's deferred parts (`signature_text` joins them)."""

    key: tuple[Any, ...]
    specs: list[ParamSpec]
    leaves: list[Leaf] = field(default_factory=list)
    guards: list[Guard] = field(default_factory=list)
    returns: tuple[Any, ...] = ()  # the resolved `->` types (an alias may name another type in another process)
    leaf_keys: list[Any] = field(default_factory=list)  # key parts, as the walk records leaves...
    guard_keys: list[Any] = field(default_factory=list)  # ...and guards
    leaf_text: list[TextPart] = field(default_factory=list)  # signature text parts, likewise
    guard_text: list[TextPart] = field(default_factory=list)
    walking: dict[int, Path] = field(default_factory=dict)  # id -> path of the structs being flattened

    # Each record's key part and text part are written side by side: the key (a tuple, built on every
    # slow-path call) and the text (a deferred part) must separate the same specializations.

    def add_scalar(self, path: Path, dtype: PrimitiveType, wrap: bool = False) -> None:
        self.leaves.append(ScalarLeaf(path, dtype, wrap))
        self.leaf_keys.append((path, dtype))
        self.leaf_text.append(lambda: f"{_path_text(path)}=scalar:{dtype}")

    def add_element(self, path: Path, dtype: PrimitiveType, index: int, wrap: bool = False) -> None:
        self.leaves.append(ElementLeaf(path, dtype, index, wrap))
        self.leaf_keys.append((path, dtype))
        self.leaf_text.append(lambda: f"{_path_text(path)}=element:{dtype}[{index}]")

    def add_array(self, leaf: ArrayLeaf, boundary: str = "unsafe") -> None:
        """numpy, torch and qd.ndarray arguments of one type share the key and the text (and the kernel); a
        `boundary="clamp"` parameter compiles other code."""
        self.leaves.append(leaf)
        clamp = ":clamp" if boundary == "clamp" else ""
        self.leaf_keys.append((leaf.path, leaf.nd, boundary))
        self.leaf_text.append(lambda: f"{_path_text(leaf.path)}={leaf.nd!r}{clamp}")

    def add_guard(self, guard: Guard) -> None:
        """A compiled-in value; its text part fingerprints the value (the costly part, and it may fail)."""
        self.guards.append(guard)
        self.guard_keys.append((guard.path, guard.kind, _hashable(guard.value)))
        self.guard_text.append(lambda: _guard_text(guard))


class ParamKind(str, enum.Enum):
    """How a kernel parameter's annotation asks its argument to be passed (a `str` enum: it prints as its word,
    which `qd record` writes)."""

    TEMPLATE = "template"
    NDARRAY = "ndarray"
    SCALAR = "scalar"
    MATRIX = "matrix"
    DATACLASS = "dataclass"
    STRUCT = "struct"  # a qd.types.struct / @qd.dataclass type
    ENUM = "enum"
    TENSOR = "tensor"
    BUFFER_VIEW = "buffer_view"  # a qd.BufferView: its ndarray, offset and size
    SPARSE_BUILDER = "sparse_matrix_builder"  # a qd.linalg.SparseMatrixBuilder: its triplet arrays
    SELF = "self"

    __str__ = str.__str__


def classify_annotation(annotation: Any) -> ParamKind | None:
    if ann.is_template(annotation):
        return ParamKind.TEMPLATE
    if isinstance(annotation, ann.NdarrayType):
        return ParamKind.NDARRAY
    if ann.is_scalar_annotation(annotation):
        return ParamKind.SCALAR
    if ann.is_buffer_view_annotation(annotation):
        return ParamKind.BUFFER_VIEW
    if ann.is_sparse_builder_annotation(annotation):
        return ParamKind.SPARSE_BUILDER
    if isinstance(annotation, MatrixType):
        return ParamKind.MATRIX
    if isinstance(annotation, StructType):
        return ParamKind.STRUCT
    if isinstance(annotation, type) and dataclasses.is_dataclass(annotation):
        return ParamKind.DATACLASS
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        return ParamKind.ENUM
    if getattr(annotation, "__name__", None) == "Tensor" and getattr(annotation, "__module__", "").startswith(
        "quadrants"
    ):
        return ParamKind.TENSOR
    return None


class Specializer:
    def __init__(self, kernel_name: str, default_ip: PrimitiveType, default_fp: PrimitiveType,
                 grads: bool | Callable[[], bool] = True) -> None:  # fmt: skip
        self.kernel_name = kernel_name
        self.default_ip = default_ip
        self.default_fp = default_fp
        # ndarray arguments pass their .grad (an adjoint, or a kernel that reads `.grad`); a callable is asked
        # only when an argument has a grad to pass (the question reads sources: not on every first call)
        self._grads = grads

    @property
    def grads(self) -> bool:
        if callable(self._grads):
            self._grads = bool(self._grads())
        return self._grads

    def specialize(self, params: list[Any], values: list[Any]) -> Specialization:
        sp = Specialization(key=(), specs=[])
        for i, (p, v) in enumerate(zip(params, values)):
            sp.specs.append(self._param(p.name, p.kind, p.annotation, v, (i,), sp))
        sp.key = tuple(sp.leaf_keys + sp.guard_keys)
        return sp

    # ---- one parameter or member ----------------------------------------------------------------------

    def _param(self, name: str, kind: ParamKind, annotation: Any, v: Any, path: Path, sp: Specialization) -> ParamSpec:
        return _BY_KIND.get(kind, Specializer._template)(self, name, annotation, v, path, sp)

    def _scalar(self, name: str, annotation: Any, v: Any, path: Path, sp: Specialization) -> ParamSpec:
        t = dtypes.to_dtype(annotation, self.default_ip, self.default_fp)
        sp.add_scalar(path, t)
        return ParamSpec(name, SpecKind.SCALAR, type=t)

    def _self(self, name: str, annotation: Any, v: Any, path: Path, sp: Specialization) -> ParamSpec:
        if not is_data_oriented(v):
            raise QuadrantsSyntaxError(
                f"kernel {self.kernel_name!r}: 'self' must be an instance of a @qd.data_oriented class, got "
                f"{type(v).__name__}"
            )
        return self._compile_time(name, v, path, sp)

    def _template(self, name: str, annotation: Any, v: Any, path: Path, sp: Specialization) -> ParamSpec:
        if type(v) is float:
            cfg = program.current_config()
            if cfg is not None and cfg.raise_on_templated_floats:
                raise ValueError(f"kernel {self.kernel_name!r}: template parameter {name!r} got the float {v!r}, which "
                                 "would be compiled in (each value compiles again); raise_on_templated_floats=True "
                                 "refuses that: annotate it qd.f32 / qd.f64")  # fmt: skip
        if _holds_ndarray(v):  # ndarrays are runtime arguments: refused as Quadrants does
            raise QuadrantsRuntimeTypeError(
                "Ndarray shouldn't be passed in via `qd.template()`, please annotate your kernel using "
                "`qd.types.ndarray(...)` instead"
            )
        impl = v._unwrap() if isinstance(v, Tensor) else None
        if impl is not None and getattr(impl, "__qd_field__", None) is not None:  # a wrapped field: the field
            sp.add_guard(Guard(path, GuardKind.IDENTITY, v, via_tensor=True))
            return ParamSpec(name, SpecKind.TEMPLATE, value=impl)
        return self._compile_time(name, v, path, sp)

    def _compile_time(self, name: str, v: Any, path: Path, sp: Specialization) -> ParamSpec:
        """A template argument, a data_oriented `self`, an enum: compiled in (structs are flattened)."""
        if is_data_oriented(v):
            return self._data_oriented(name, v, path, sp)
        if dataclasses.is_dataclass(v) and not isinstance(v, type):
            return self._dataclass(name, type(v), v, path, sp, typed=False)
        kind = _guard_kind(v)
        if kind is GuardKind.MATRIX:  # compiled in by value: guard a snapshot (the object may change in place)
            v = v.copy() if hasattr(v, "copy") else v
        sp.add_guard(Guard(path, kind, v))
        return ParamSpec(name, SpecKind.TEMPLATE, value=v)

    def _ndarray(self, name: str, annotation: Any, v: Any, path: Path, sp: Specialization) -> ParamSpec:
        unwrap = getattr(v, "_unwrap", None)
        if unwrap is not None:
            v = unwrap()
        want: ann.NdarrayType = annotation if isinstance(annotation, ann.NdarrayType) else _ANY_NDARRAY
        if want is _ANY_NDARRAY or want == _ANY_NDARRAY:  # `qd.types.ndarray()`: any qd.ndarray as it is
            if isinstance(v, Ndarray):
                t = v._spec
                sp.add_array(NdarrayLeaf(path, t.dtype, t), "unsafe")
                return ParamSpec(name, SpecKind.NDARRAY, type=t, value="unsafe", grad=_grad_spec(name, v, path, sp, want, self))
        want_prim, elem_shape = _element(want.dtype, self.default_ip, self.default_fp)
        if isinstance(v, Ndarray):
            t = v._spec
            if want.element_dim is not None:  # vectors / matrices of any size: the array's own
                wrong_dim = element_dim_mismatch(name, want.element_dim, t.dtype, t.elem_shape)
                if wrong_dim is not None:
                    raise QuadrantsArgumentValueError(wrong_dim)
                elem_shape = t.elem_shape
            wrong = None if want_prim is None else element_mismatch(name, want_prim, elem_shape, t.dtype, t.elem_shape)
            if wrong is not None:
                raise (QuadrantsRuntimeTypeError if wrong[0] is TypeError else QuadrantsArgumentValueError)(wrong[1])
            if want.ndim is not None and t.ndim != want.ndim:
                raise QuadrantsArgumentValueError(f"Invalid value for argument {name} - required ndim={want.ndim}, "
                                                  f"but {t.ndim}d ndarray with shape {v.shape} is provided")
            sp.add_array(NdarrayLeaf(path, t.dtype, t), want.boundary)
            return ParamSpec(name, SpecKind.NDARRAY, type=t, value=want.boundary, grad=_grad_spec(name, v, path, sp, want, self))
        if isinstance(v, np.ndarray) or _is_torch(v):
            arr = external_array(v)
            prim = dtypes.from_numpy(arr.dtype)
            # as in Quadrants, an external array's dtype is checked against a scalar element type only: with a
            # vector/matrix one, the array's own dtype is the element's
            if want_prim is not None and prim is not want_prim and not elem_shape:
                raise QuadrantsArgumentValueError(
                    f"Invalid value for argument {name} - required array has dtype={want_prim}, array with "
                    f"dtype={prim} is provided (kernel {self.kernel_name!r})"
                )
            if want.element_dim is not None:  # the last element_dim dimensions are the elements'
                if want.ndim is not None and arr.ndim != want.ndim + want.element_dim:
                    raise QuadrantsArgumentValueError(f"Invalid value for argument {name} - required array has ndim={want.ndim} "
                                     f"element_dim={want.element_dim}, array with {arr.ndim} dimensions is provided "
                                     f"(kernel {self.kernel_name!r})")  # fmt: skip
                elem_shape = tuple(arr.shape[arr.ndim - want.element_dim :])
            ndim = arr.ndim - len(elem_shape)
            if want.ndim is not None and ndim != want.ndim:
                element_dim = f" element_dim={len(elem_shape)}" if elem_shape else ""
                raise QuadrantsArgumentValueError(f"Invalid value for argument {name} - required array has ndim={want.ndim}"
                                 f"{element_dim}, array with {arr.ndim} dimensions is provided (kernel "
                                 f"{self.kernel_name!r})")  # fmt: skip
            if tuple(arr.shape[ndim:]) != elem_shape:
                raise QuadrantsArgumentValueError(f"Invalid value for argument {name} - required element_shape={elem_shape}, array "
                                 f"with element shape of {tuple(arr.shape[ndim:])} is provided")  # fmt: skip
            too_long = shape_beyond_i32(name, arr.shape[:ndim])
            if too_long is not None:
                raise QuadrantsArgumentValueError(f"{too_long} (kernel {self.kernel_name!r})")
            t = nd_type(prim, ndim, elem_shape)
            if isinstance(v, np.ndarray):
                sp.add_array(NumpyLeaf(path, prim, t, arr.dtype, ndim), want.boundary)
                return ParamSpec(name, SpecKind.NDARRAY, type=t, value=want.boundary)
            sp.add_array(ExternalLeaf(path, prim, t), want.boundary)
            needs = v.requires_grad and prim.is_float
            if needs and v.grad is None:  # as in Quadrants (whatever the annotation says): a Function fills it
                import torch

                v.grad = torch.zeros_like(v)
            passed = needs and self.grads and getattr(want, "needs_grad", None) is not False
            grad = _torch_grad_spec(name, path, sp, t) if passed else None
            return ParamSpec(name, SpecKind.NDARRAY, type=t, value=want.boundary, grad=grad)
        shown = repr(v) if isinstance(v, (int, float, bool, str)) else type(v).__name__
        raise QuadrantsRuntimeTypeError(f"Invalid type for argument {name}, got {shown}: argument {name!r} of kernel "
                                        f"{self.kernel_name!r} must be an ndarray")  # fmt: skip

    def _matrix(
        self, name: str, annotation: MatrixType, v: Any, path: Path, sp: Specialization, wrap: bool = False
    ) -> ParamSpec:
        t = annotation.resolve(self.default_ip, self.default_fp)
        try:
            size = np.asarray(v).size
        except Exception:  # noqa: BLE001
            size = -1
        if size != annotation.size:
            raise QuadrantsRuntimeTypeError(
                f"argument {name!r} of kernel {self.kernel_name!r}: expected {annotation!r}, got {v!r}"
            )
        for k in range(annotation.size):
            sp.add_element(path, t, k, wrap)
        return ParamSpec(name, SpecKind.MATRIX, type=(annotation.shape, t))

    def _tensor(self, name: str, annotation: Any, v: Any, path: Path, sp: Specialization) -> ParamSpec:
        if v is None:  # an absent tensor: compiled in, so `qd.static(t is not None)` can test it, as in Quadrants
            return self._compile_time(name, v, path, sp)
        impl = getattr(v, "_unwrap", lambda: v)()
        if getattr(impl, "__qd_field__", None) is not None:
            sp.add_guard(Guard(path, GuardKind.IDENTITY, v, via_tensor=True))
            return ParamSpec(name, SpecKind.TEMPLATE, value=impl)
        return self._ndarray(name, _ANY_NDARRAY, v, path, sp)

    def _buffer_view(self, name: str, annotation: Any, v: Any, path: Path, sp: Specialization) -> ParamSpec:
        """A `qd.BufferView`: its ndarray (`arr`) and two i32 runtime scalars (`offset`, `size`), so views at other
        offsets or of other lengths share the kernel; the frontend binds them as a view (frontend/views.py)."""
        if getattr(type(v), "__qd_buffer_view__", False) is not True:
            raise QuadrantsRuntimeTypeError(f"Argument {name} expects a BufferView, got {type(v).__name__}")
        want = annotation.dtype if isinstance(annotation, ann.BufferViewType) else None
        arr = self._ndarray("arr", ann.NdarrayType(want, 1), v.arr, path + ("arr",), sp)
        sp.add_scalar(path + ("offset",), dtypes.i32)
        sp.add_scalar(path + ("size",), dtypes.i32)
        sp.add_guard(Guard(path, GuardKind.CLASS, type(v)))
        members = (arr, ParamSpec("offset", SpecKind.SCALAR, type=dtypes.i32),
                   ParamSpec("size", SpecKind.SCALAR, type=dtypes.i32))  # fmt: skip
        return ParamSpec(name, SpecKind.STRUCT, members=members, cls=type(v))

    def _sparse_builder(self, name: str, annotation: Any, v: Any, path: Path, sp: Specialization) -> ParamSpec:
        """A `qd.linalg.SparseMatrixBuilder`: its triplet arrays (rows, columns, values) and its counter, as
        ndarrays; `A[i, j] += x` in the kernel appends a triplet (frontend/sparse_builders.py)."""
        if getattr(type(v), "__qd_sparse_builder__", False) is not True:
            raise QuadrantsRuntimeTypeError(
                f"Argument {name} expects a qd.linalg.SparseMatrixBuilder, got {type(v).__name__}"
            )
        members = tuple(self._ndarray(k, _ANY_NDARRAY, getattr(v, k), path + (k,), sp)
                        for k in ("_rows", "_cols", "_vals", "_count"))  # fmt: skip
        sp.add_guard(Guard(path, GuardKind.CLASS, type(v)))
        return ParamSpec(name, SpecKind.STRUCT, members=members, cls=type(v))

    # ---- structs --------------------------------------------------------------------------------------

    def _dataclass(self, name: str, cls: type, v: Any, path: Path, sp: Specialization, typed: bool = True) -> ParamSpec:
        """A dataclass: `typed` when its class is a parameter's (or a typed member's) annotation, else a value
        passed to a template parameter."""
        if not isinstance(v, cls):
            raise QuadrantsRuntimeTypeError(f"argument {name!r}: expected a {cls.__name__}, got {type(v).__name__}")
        alias = _back_reference(name, v, path, sp)
        if alias is not None:
            return alias
        sp.walking[id(v)] = path
        try:
            return self._dataclass_members(name, cls, v, path, sp, typed)
        finally:
            del sp.walking[id(v)]

    def _dataclass_members(
        self, name: str, cls: type, v: Any, path: Path, sp: Specialization, typed: bool
    ) -> ParamSpec:
        members = []
        for fname, a, kind in _dataclass_plan(cls):
            value = getattr(v, fname)
            mpath = path + (fname,)
            if typed and isinstance(a, type) and getattr(a, "_qd_data_oriented", False):
                raise QuadrantsSyntaxError(
                    f"Kernel arg {name!r}: field {fname!r} has @qd.data_oriented type {a.__name__!r}, which cannot "
                    f"be flattened into a typed-dataclass kernel arg. Use ``{name}: qd.template()`` for the outer "
                    "kernel arg annotation instead; data_oriented contents (including nested ndarrays) are walked "
                    "at kernel-compile time via the template path."
                )
            if kind is _COMPILED_IN:
                members.append(self._compile_time(fname, value, mpath, sp))
            elif kind in _RUNTIME_MEMBERS:
                members.append(self._param(fname, kind, a, value, mpath, sp))
            else:
                members.append(self._member_by_value(fname, value, mpath, sp, runtime_primitives=True))
        sp.add_guard(Guard(path, GuardKind.CLASS, cls))
        return ParamSpec(name, SpecKind.STRUCT, members=tuple(members), cls=cls)

    def _struct(self, name: str, annotation: StructType, v: Any, path: Path, sp: Specialization) -> ParamSpec:
        """A `qd.types.struct` argument (a `qd.Struct` value, e.g. `S(a=1, b=...)`): every member is a runtime
        argument, read through its attribute path."""
        t = annotation.resolve(self.default_ip, self.default_fp)
        members = []
        for k, mt in t.members.items():
            try:
                value = getattr(v, k)
            except AttributeError:
                raise QuadrantsRuntimeTypeError(f"argument {name!r} of kernel {self.kernel_name!r}: expected a "
                                                f"{annotation!r} value, got {v!r}") from None  # fmt: skip
            mpath = path + (k,)
            if isinstance(mt, StructType):
                members.append(self._struct(k, mt, value, mpath, sp))
            elif isinstance(mt, MatrixType):
                members.append(self._matrix(k, mt, value, mpath, sp, wrap=True))
            else:
                sp.add_scalar(mpath, mt, wrap=True)
                members.append(ParamSpec(k, SpecKind.SCALAR, type=mt))
        return ParamSpec(name, SpecKind.STRUCT, members=tuple(members), cls=t)

    def _data_oriented(self, name: str, obj: Any, path: Path, sp: Specialization) -> ParamSpec:
        alias = _back_reference(name, obj, path, sp)
        if alias is not None:
            return alias
        runtime_primitives = not getattr(type(obj), "_qd_template_primitives", True)
        members = []
        sp.walking[id(obj)] = path
        try:
            for k, value in vars(obj).items():
                if not k.isidentifier():
                    continue
                members.append(self._member_by_value(k, value, path + (k,), sp, runtime_primitives))
        finally:
            del sp.walking[id(obj)]
        sp.add_guard(Guard(path, GuardKind.CLASS, type(obj)))
        return ParamSpec(name, SpecKind.STRUCT, members=tuple(members), cls=type(obj), obj=obj)

    def _member_by_value(
        self, name: str, v: Any, path: Path, sp: Specialization, runtime_primitives: bool
    ) -> ParamSpec:
        impl = getattr(v, "_unwrap", lambda: v)()
        if isinstance(impl, np.ndarray) and impl.size <= SMALL_NUMPY_MEMBER and impl.dtype.kind in "biuf":
            # a small numpy member (`self.grid_res`): compiled in, as in Quadrants (`qd.ndrange(*self.res)`,
            # `self.res[1]` are compile-time values there), guarded by a snapshot of its elements
            return self._compile_time(name, impl, path, sp)
        if isinstance(impl, (Ndarray, np.ndarray)) or _is_torch(impl):
            return self._ndarray(name, _ANY_NDARRAY, impl, path, sp)
        if runtime_primitives and isinstance(v, (bool, np.bool_, numbers.Real)) and not isinstance(v, enum.Enum):
            # a bool is lifted as the default integer, as in Quadrants: the member may later hold 2 (an int)
            t = self.default_ip if isinstance(v, (bool, np.bool_)) else self._scalar_dtype(v)
            sp.add_scalar(path, t)
            return ParamSpec(name, SpecKind.SCALAR, type=t)
        return self._compile_time(name, impl, path, sp)

    def _scalar_dtype(self, v: Any) -> PrimitiveType:
        if isinstance(v, np.generic):
            return dtypes.from_numpy(v.dtype)
        return self.default_ip if isinstance(v, numbers.Integral) else self.default_fp


def _grad_spec(
    name: str, v: Ndarray, path: Path, sp: Specialization, want: Any, by: Specializer
) -> ParamSpec | None:
    """The grad pointer of an ndarray argument: its `.grad` companion, passed as a hidden ndarray argument right
    after it (ARCHITECTURE.md, "Automatic differentiation"); none for a `needs_grad=False` parameter, or where
    the kernel passes no grads."""
    g = v.__dict__.get("grad")
    if not isinstance(g, Ndarray) or getattr(want, "needs_grad", None) is False or not by.grads:
        return None
    t = g._spec
    sp.add_array(NdarrayLeaf(path + ("grad",), t.dtype, t), "unsafe")
    return ParamSpec(name + ".grad", SpecKind.NDARRAY, type=t, value="unsafe")


def _torch_grad_spec(name: str, path: Path, sp: Specialization, t: Any) -> ParamSpec:
    """The grad pointer of a torch tensor argument that requires grad: its `.grad` (a tensor of its shape)."""
    sp.add_array(ExternalLeaf(path + ("grad",), t.dtype, t), "unsafe")
    return ParamSpec(name + ".grad", SpecKind.NDARRAY, type=t, value="unsafe")


def _holds_ndarray(v: Any) -> bool:
    """A qd.ndarray, or a tuple holding one (a template argument may be a tuple of values)."""
    return isinstance(v, Ndarray) or (isinstance(v, tuple) and any(_holds_ndarray(x) for x in v))


def _back_reference(name: str, obj: Any, path: Path, sp: Specialization) -> ParamSpec | None:
    """A struct member that is one of the structs enclosing it (`sim.solver.sim is sim`): not walked again
    (the walk would never end) but bound to that struct, under a guard that it stays the same object. Shared
    members that close no cycle are walked at each path, like any other member."""
    outer = sp.walking.get(id(obj))
    if outer is None:
        return None
    sp.add_guard(Guard(path, GuardKind.ALIAS, outer))
    return ParamSpec(name, SpecKind.ALIAS, value=len(path) - len(outer))


# The most elements a numpy member of a data_oriented object / dataclass may have to be compiled in (guarded by
# value at every call); a bigger one is a runtime array argument (it is data, not a description of the data).
SMALL_NUMPY_MEMBER = 64

# How each kind of parameter is specialized (the others are compiled in: templates, enums).
_BY_KIND: dict[ParamKind, Callable[[Specializer, str, Any, Any, Path, Specialization], ParamSpec]] = {
    ParamKind.SCALAR: Specializer._scalar,
    ParamKind.NDARRAY: Specializer._ndarray,
    ParamKind.MATRIX: Specializer._matrix,
    ParamKind.DATACLASS: Specializer._dataclass,
    ParamKind.STRUCT: Specializer._struct,
    ParamKind.TENSOR: Specializer._tensor,
    ParamKind.SELF: Specializer._self,
    ParamKind.BUFFER_VIEW: Specializer._buffer_view,
    ParamKind.SPARSE_BUILDER: Specializer._sparse_builder,
}
# Dataclass members passed as runtime arguments by their annotation (any other member is judged by its value).
_RUNTIME_MEMBERS = frozenset(_BY_KIND) - {ParamKind.SELF}


def _element(
    dtype: Any, default_ip: PrimitiveType, default_fp: PrimitiveType
) -> tuple[PrimitiveType | None, tuple[int, ...]]:
    if dtype is None:
        return None, ()
    if isinstance(dtype, MatrixType):
        return dtype.resolve(default_ip, default_fp), dtype.shape
    return dtypes.to_dtype(dtype, default_ip, default_fp), ()


def _guard_kind(v: Any) -> GuardKind:
    """How a compiled-in value is guarded: VALUE (same type and ==: plain data, nested tuples of it), MATRIX
    (a Python-scope qd.Vector/qd.Matrix: same elements), else IDENTITY (the same object)."""
    if _plain(v):
        return GuardKind.VALUE
    if hasattr(v, "__qd_matrix__") or isinstance(v, np.ndarray):
        return GuardKind.MATRIX
    return GuardKind.IDENTITY


def _plain(v: Any) -> bool:
    if v is None or isinstance(v, (bool, numbers.Number, str, bytes, enum.Enum, np.generic, PrimitiveType, MatrixType)):
        return True
    return isinstance(v, tuple) and all(_plain(x) for x in v)


def _hashable(v: Any) -> Any:
    if hasattr(v, "__qd_matrix__") or isinstance(v, np.ndarray):
        arr = np.asarray(v)
        return ("matrix", arr.dtype.str, arr.shape, arr.tobytes())
    try:
        hash(v)
    except TypeError:
        return ("id", id(v))
    return (type(v), v) if not isinstance(v, type) else v


def signature_text(sp: Specialization) -> tuple[str | None, str, bool]:
    """The specialization as stable text for the fastcache key: (text, "", False), or (None, reason, silent)
    when an argument cannot be keyed (a field, an arbitrary object): fastcache then steps aside, silently for a
    field that came through a `qd.Tensor` parameter, with a warning otherwise.

    The text joins the parts the walk recorded: the leaves' (`a.<path>=<type>`), then the guards'
    (`a.<path>:<kind>=<fingerprint>`), then the return types."""
    parts: list[str] = []
    for part in sp.leaf_text + sp.guard_text:
        text = part()
        if isinstance(text, Unkeyable):
            return None, f"Parameter with path {_named_path(text.path, sp)} and type {text.what}", text.silent
        parts.append(text)
    if sp.returns:
        parts.append("->" + ",".join(repr(r) for r in sp.returns))
    return ";".join(parts), "", False


def _guard_text(g: Guard) -> str | Unkeyable:
    """A compiled-in value's part of the signature text, or why it has none."""
    from quadrants.cache.fingerprint import fingerprint  # only when there are compiled-in values

    fp: str | None
    if g.kind is GuardKind.CLASS:
        from quadrants.cache.source import qualified

        fp = f"class:{qualified(g.value)}"
    elif g.kind is GuardKind.ALIAS:
        fp = _path_text(g.value)
    else:
        fp = fingerprint(g.value) if g.kind in (GuardKind.VALUE, GuardKind.MATRIX) else None
    if fp is None:
        impl = g.value._unwrap() if hasattr(g.value, "_unwrap") else g.value
        is_field = getattr(impl, "__qd_field__", None) is not None or hasattr(impl, "__qd_struct_field__")
        what = "a field (fields disable fastcache; use a qd.ndarray)" if is_field else f"a {type(g.value).__name__}"
        return Unkeyable(g.path, what, g.via_tensor and is_field)
    return f"{_path_text(g.path)}:{g.kind.value}={fp}"


def _named_path(path: Path, sp: Specialization) -> str:
    """`state.x` for a path (1, "x") whose parameter is named `state` (messages name parameters, keys do not)."""
    k = path[0]
    head = sp.specs[k].name if isinstance(k, int) and k < len(sp.specs) else f"a{k}"
    return head + "".join(f".{p}" for p in path[1:])


def _path_text(path: Path) -> str:
    return "a" + "".join(f".{p}" for p in path)


_is_torch = is_torch_tensor


_ANY_NDARRAY = ann.NdarrayType()  # an ndarray parameter that constrains nothing
_COMPILED_IN = "compiled in"  # a dataclass member marked FIELD_METADATA_CACHE_VALUE
_PLANS: weakref.WeakKeyDictionary[type, tuple[tuple[str, Any, Any], ...]] = weakref.WeakKeyDictionary()


def _dataclass_plan(cls: type) -> tuple[tuple[str, Any, Any], ...]:
    """A dataclass's members as the walk needs them, once per class: (name, annotation, kind), kind _COMPILED_IN
    for members whose value is compiled in (FIELD_METADATA_CACHE_VALUE). Dataclass fields are fixed when the class is
    made, so this never goes stale (Genesis passes a dozen dataclasses of ~30 members to each kernel)."""
    plan = _PLANS.get(cls)
    if plan is None:
        hints = _type_hints(cls)
        plan = tuple(
            (f.name, a, _COMPILED_IN if f.metadata.get(FIELD_METADATA_CACHE_VALUE) else classify_annotation(a))
            for f in dataclasses.fields(cls)
            for a in (ann.normalize(hints.get(f.name, f.type)),)
        )
        _PLANS[cls] = plan
    return plan


def _type_hints(cls: type) -> dict[str, Any]:
    try:
        return typing.get_type_hints(cls)
    except Exception:  # noqa: BLE001 - unresolvable annotations: use the raw ones
        return {f.name: ann.resolve(f.type, vars(__import__(cls.__module__))) for f in dataclasses.fields(cls)}


__all__ = ["Leaf", "Guard", "GuardKind", "Specialization", "Specializer", "ParamKind", "classify_annotation", "NdType",
           "signature_text"]  # fmt: skip

