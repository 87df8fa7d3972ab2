"""Kernel arguments -> a specialization: its key, the frontend's parameter specs, and the runtime leaves.

Compound arguments are flattened here. A dataclass contributes its declared members (ndarrays and primitives
become runtime arguments; members marked FIELD_METADATA_CACHE_VALUE are compiled in by value); a
data_oriented object contributes `vars(obj)` (ndarrays are runtime arguments; primitives, fields and other
objects are compiled in, unless `template_primitives=False`). Every compiled-in value becomes a `Guard` on its
access path, and every runtime value a `Leaf`: the key is made of both, and the generated fast path checks the
guards and reads the leaves with plain attribute access.
"""

from __future__ import annotations

import dataclasses
import enum
import numbers
import typing
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from quadrants.errors import QuadrantsRuntimeTypeError
from quadrants.frontend.records import ParamSpec
from quadrants.ir.types import NdType
from quadrants.lang._fast_caching import FIELD_METADATA_CACHE_VALUE
from quadrants.lang.data_oriented import is_data_oriented
from quadrants.runtime.launch import external_array
from quadrants.runtime.ndarray import Ndarray, nd_type
from quadrants.types import annotations as ann
from quadrants.types import dtypes
from quadrants.types.compound import MatrixType
from quadrants.types.dtypes import PrimitiveType

Path = tuple[Any, ...]  # parameter index, then attribute names


@dataclass(frozen=True)
class Leaf:
    """A runtime argument of the native function, read from the call's arguments along `path`."""

    path: Path
    kind: str  # "ndarray" (qd.ndarray), "numpy", "external" (torch...), "scalar", "element"
    dtype: PrimitiveType
    info: Any = None  # the NdType of an ndarray; the flat index of a vector element; (np dtype, ndim) of numpy


@dataclass(frozen=True)
class Guard:
    """A compiled-in value: the specialization holds while the value at `path` still matches."""

    path: Path
    kind: str  # "value" (same type and ==), "identity" (is), "class" (__class__ is)
    value: Any
    via_tensor: bool = False  # a field that arrived through a `qd.Tensor` parameter


@dataclass
class Specialization:
    key: tuple[Any, ...]
    specs: list[ParamSpec]
    leaves: list[Leaf] = field(default_factory=list)
    guards: list[Guard] = field(default_factory=list)
    returns: tuple[Any, ...] = ()  # the resolved `->` types (an alias may name another type in another process)


class ParamKind:
    TEMPLATE = "template"
    NDARRAY = "ndarray"
    SCALAR = "scalar"
    MATRIX = "matrix"
    DATACLASS = "dataclass"
    ENUM = "enum"
    TENSOR = "tensor"
    SELF = "self"


def classify_annotation(annotation: Any) -> str | None:
    if ann.is_template(annotation):
        return ParamKind.TEMPLATE
    if isinstance(annotation, ann.NdarrayType):
        return ParamKind.NDARRAY
    if ann.is_scalar_annotation(annotation):
        return ParamKind.SCALAR
    if isinstance(annotation, MatrixType):
        return ParamKind.MATRIX
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
    def __init__(self, kernel_name: str, default_ip: PrimitiveType, default_fp: PrimitiveType) -> None:
        self.kernel_name = kernel_name
        self.default_ip = default_ip
        self.default_fp = default_fp

    def specialize(self, params: list[Any], values: list[Any]) -> Specialization:
        sp = Specialization(key=(), specs=[])
        key: list[Any] = []
        for i, (p, v) in enumerate(zip(params, values)):
            sp.specs.append(self._param(p.name, p.kind, p.annotation, v, (i,), sp))
        for leaf in sp.leaves:
            if leaf.kind in ("ndarray", "numpy", "external"):
                key.append((leaf.path, leaf.info if leaf.kind == "ndarray" else leaf.info[2]))
            else:
                key.append((leaf.path, leaf.dtype))
        for g in sp.guards:
            key.append((g.path, g.kind, _hashable(g.value)))
        sp.key = tuple(key)
        return sp

    # ---- one parameter or member ----------------------------------------------------------------------

    def _param(self, name: str, kind: str, annotation: Any, v: Any, path: Path, sp: Specialization) -> ParamSpec:
        if kind == ParamKind.SCALAR:
            t = dtypes.to_dtype(annotation, self.default_ip, self.default_fp)
            sp.leaves.append(Leaf(path, "scalar", t))
            return ParamSpec(name, "scalar", type=t)
        if kind == ParamKind.NDARRAY:
            return self._ndarray(name, annotation, v, path, sp)
        if kind == ParamKind.MATRIX:
            return self._matrix(name, annotation, v, path, sp)
        if kind == ParamKind.DATACLASS:
            return self._dataclass(name, v, path, sp, annotation)
        if kind == ParamKind.TENSOR:
            return self._tensor(name, v, path, sp)
        if kind == ParamKind.SELF and not is_data_oriented(v):
            raise QuadrantsRuntimeTypeError(
                f"kernel {self.kernel_name!r}: 'self' must be an instance of a @qd.data_oriented class, got "
                f"{type(v).__name__}"
            )
        return self._compile_time(name, v, path, sp)

    def _compile_time(self, name: str, v: Any, path: Path, sp: Specialization) -> ParamSpec:
        """A template argument, a data_oriented `self`, an enum: compiled in (structs are flattened)."""
        if is_data_oriented(v):
            return self._data_oriented(name, v, path, sp)
        if dataclasses.is_dataclass(v) and not isinstance(v, type):
            return self._dataclass(name, v, path, sp, type(v))
        kind = _guard_kind(v)
        if kind == "matrix":  # compiled in by value: guard a snapshot (the object may change in place)
            v = v.copy() if hasattr(v, "copy") else v
        sp.guards.append(Guard(path, kind, v))
        return ParamSpec(name, "template", value=v)

    def _ndarray(self, name: str, annotation: Any, v: Any, path: Path, sp: Specialization) -> ParamSpec:
        v = getattr(v, "_unwrap", lambda: v)()
        want: ann.NdarrayType = annotation if isinstance(annotation, ann.NdarrayType) else ann.NdarrayType()
        want_prim, elem_shape = _element(want.dtype, self.default_ip, self.default_fp)
        if isinstance(v, Ndarray):
            t = v._spec
            if want_prim is not None and (t.dtype is not want_prim or t.elem_shape != elem_shape):
                raise QuadrantsRuntimeTypeError(f"argument {name!r}: expected an ndarray of {want.dtype!r}, got {t!r}")
            if want.ndim is not None and t.ndim != want.ndim:
                raise QuadrantsRuntimeTypeError(
                    f"argument {name!r}: expected an ndarray with {want.ndim} dimension(s), got {t.ndim}"
                )
            sp.leaves.append(Leaf(path, "ndarray", t.dtype, t))
            return ParamSpec(name, "ndarray", type=t)
        if isinstance(v, np.ndarray) or _is_torch(v):
            arr = external_array(v)
            prim = dtypes.from_numpy(arr.dtype)
            if want_prim is not None and prim is not want_prim:
                raise ValueError(
                    f"Invalid value for argument {name} - required array has dtype={want_prim}, array with "
                    f"dtype={arr.dtype} is provided (kernel {self.kernel_name!r})"
                )
            ndim = arr.ndim - len(elem_shape)
            if want.ndim is not None and ndim != want.ndim:
                raise ValueError(
                    f"argument {name!r} of kernel {self.kernel_name!r}: expected {want.ndim} dimension(s), got {ndim}"
                )
            if tuple(arr.shape[ndim:]) != elem_shape:
                raise ValueError(f"Invalid value for argument {name} - required element_shape={elem_shape}, array "
                                 f"with element shape of {tuple(arr.shape[ndim:])} is provided")  # fmt: skip
            t = nd_type(prim, ndim, elem_shape)
            kind = "numpy" if isinstance(v, np.ndarray) else "external"
            sp.leaves.append(Leaf(path, kind, prim, (arr.dtype, ndim, t)))
            return ParamSpec(name, "ndarray", type=t)
        raise QuadrantsRuntimeTypeError(
            f"argument {name!r} of kernel {self.kernel_name!r} must be an ndarray, got {type(v).__name__}"
        )

    def _matrix(self, name: str, annotation: MatrixType, v: Any, path: Path, sp: Specialization) -> ParamSpec:
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
            sp.leaves.append(Leaf(path, "element", t, k))
        return ParamSpec(name, "matrix", type=(annotation.shape, t))

    def _tensor(self, name: str, v: Any, path: Path, sp: Specialization) -> ParamSpec:
        impl = getattr(v, "_unwrap", lambda: v)()
        if getattr(impl, "__qd_field__", None) is not None:
            sp.guards.append(Guard(path, "identity", v, via_tensor=True))
            return ParamSpec(name, "template", value=impl)
        return self._ndarray(name, ann.NdarrayType(), v, path, sp)

    # ---- structs --------------------------------------------------------------------------------------

    def _dataclass(self, name: str, v: Any, path: Path, sp: Specialization, cls: type) -> ParamSpec:
        if not isinstance(v, cls):
            raise QuadrantsRuntimeTypeError(f"argument {name!r}: expected a {cls.__name__}, got {type(v).__name__}")
        hints = _type_hints(cls)
        members = []
        for f in dataclasses.fields(cls):
            value = getattr(v, f.name)
            mpath = path + (f.name,)
            a = ann.normalize(hints.get(f.name, f.type))
            if f.metadata.get(FIELD_METADATA_CACHE_VALUE):
                members.append(self._compile_time(f.name, value, mpath, sp))
                continue
            kind = classify_annotation(a)
            if kind in (ParamKind.SCALAR, ParamKind.NDARRAY, ParamKind.MATRIX, ParamKind.DATACLASS, ParamKind.TENSOR):
                members.append(self._param(f.name, kind, a, value, mpath, sp))
            else:
                members.append(self._member_by_value(f.name, value, mpath, sp, runtime_primitives=True))
        sp.guards.append(Guard(path, "class", cls))
        return ParamSpec(name, "struct", members=tuple(members), cls=cls)

    def _data_oriented(self, name: str, obj: Any, path: Path, sp: Specialization) -> ParamSpec:
        runtime_primitives = not getattr(type(obj), "_qd_template_primitives", True)
        members = []
        for k, value in vars(obj).items():
            if not k.isidentifier():
                continue
            members.append(self._member_by_value(k, value, path + (k,), sp, runtime_primitives))
        sp.guards.append(Guard(path, "class", type(obj)))
        return ParamSpec(name, "struct", members=tuple(members), cls=type(obj), obj=obj)

    def _member_by_value(
        self, name: str, v: Any, path: Path, sp: Specialization, runtime_primitives: bool
    ) -> ParamSpec:
        impl = getattr(v, "_unwrap", lambda: v)()
        if isinstance(impl, (Ndarray, np.ndarray)) or _is_torch(impl):
            return self._ndarray(name, ann.NdarrayType(), impl, path, sp)
        if runtime_primitives and isinstance(v, (bool, np.bool_, numbers.Real)) and not isinstance(v, enum.Enum):
            t = dtypes.u1 if isinstance(v, (bool, np.bool_)) else self._scalar_dtype(v)
            sp.leaves.append(Leaf(path, "scalar", t))
            return ParamSpec(name, "scalar", type=t)
        return self._compile_time(name, impl, path, sp)

    def _scalar_dtype(self, v: Any) -> PrimitiveType:
        if isinstance(v, np.generic):
            return dtypes.from_numpy(v.dtype)
        return self.default_ip if isinstance(v, numbers.Integral) else self.default_fp


def _element(
    dtype: Any, default_ip: PrimitiveType, default_fp: PrimitiveType
) -> tuple[PrimitiveType | None, tuple[int, ...]]:
    if dtype is None:
        return None, ()
    if isinstance(dtype, MatrixType):
        return dtype.resolve(default_ip, default_fp), dtype.shape
    return dtypes.to_dtype(dtype, default_ip, default_fp), ()


def _guard_kind(v: Any) -> str:
    """How a compiled-in value is guarded: "value" (same type and ==: plain data, nested tuples of it), "matrix"
    (a Python-scope qd.Vector/qd.Matrix: same elements), else "identity" (the same object)."""
    if _plain(v):
        return "value"
    if hasattr(v, "__qd_matrix__"):
        return "matrix"
    return "identity"


def _plain(v: Any) -> bool:
    if v is None or isinstance(v, (bool, numbers.Number, str, bytes, enum.Enum, np.generic, PrimitiveType, MatrixType)):
        return True
    return isinstance(v, tuple) and all(_plain(x) for x in v)


def _hashable(v: Any) -> Any:
    if hasattr(v, "__qd_matrix__"):
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
    field that came through a `qd.Tensor` parameter, with a warning otherwise."""
    parts: list[str] = []
    for leaf in sp.leaves:
        t = leaf.info if leaf.kind == "ndarray" else leaf.info[2] if leaf.kind in ("numpy", "external") else None
        desc = (
            repr(t)
            if t is not None
            else f"{leaf.kind}:{leaf.dtype}" + (f"[{leaf.info}]" if leaf.kind == "element" else "")
        )
        parts.append(f"{_path_text(leaf.path)}={desc}")
    for g in sp.guards:
        from quadrants.cache.fingerprint import fingerprint  # only when there are compiled-in values

        fp: str | None
        if g.kind == "class":
            fp = f"class:{g.value.__module__}.{g.value.__qualname__}"
        else:
            fp = fingerprint(g.value) if g.kind in ("value", "matrix") else None
        if fp is None:
            impl = g.value._unwrap() if hasattr(g.value, "_unwrap") else g.value
            is_field = getattr(impl, "__qd_field__", None) is not None
            what = "a field (fields disable fastcache; use a qd.ndarray)" if is_field else f"a {type(g.value).__name__}"
            named = _named_path(g.path, sp)
            return None, f"Parameter with path {named} and type {what}", g.via_tensor and is_field
        parts.append(f"{_path_text(g.path)}:{g.kind}={fp}")
    if sp.returns:
        parts.append("->" + ",".join(repr(r) for r in sp.returns))
    return ";".join(parts), "", False


def _named_path(path: Path, sp: Specialization) -> str:
    """`state.x` for a path (1, "x") whose parameter is named `state` (messages name parameters, keys do not)."""
    k = path[0]
    head = sp.specs[k].name if isinstance(k, int) and k < len(sp.specs) else f"a{k}"
    return head + "".join(f".{p}" for p in path[1:])


def _path_text(path: Path) -> str:
    return "a" + "".join(f".{p}" for p in path)


def _is_torch(v: Any) -> bool:
    return type(v).__module__.startswith("torch") and hasattr(v, "data_ptr")


def _type_hints(cls: type) -> dict[str, Any]:
    try:
        return typing.get_type_hints(cls)
    except Exception:  # noqa: BLE001 - unresolvable annotations: use the raw ones
        return {f.name: ann.resolve(f.type, vars(__import__(cls.__module__))) for f in dataclasses.fields(cls)}


__all__ = ["Leaf", "Guard", "Specialization", "Specializer", "ParamKind", "classify_annotation", "NdType"]
