"""Meshes (Quadrants' MeshTaichi): `qd.Mesh.load_meta(path)`, a builder that declares per-element attributes, and
the built `MeshInstance` whose element sets kernels loop over (`for v in mesh.verts:`, frontend/mesh.py).

    builder = qd.lang.mesh._TetMesh()
    builder.verts.place({"x": qd.math.vec3, "m": qd.f32}, reorder=True)
    mesh = builder.build(qd.Mesh.load_meta("bunny.json"))   # a patcher's metadata (types/mesh.py says what it holds)

A built mesh keeps the metadata's index arrays as i32 fields (one set per metadata, shared by the meshes built
from it) and one field per attribute, `len(mesh.verts)` elements long. An attribute placed with `reorder=True` is
stored in the patches' order (`g2r`): kernels reach it through the element (`v.x`), and Python-scope `[i]` takes a
global index, as in Quadrants, while `to_numpy()` / `from_numpy()` see the storage order. The metadata is checked
when it is loaded, so a kernel never follows an index out of its arrays.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from quadrants.errors import QuadrantsSyntaxError
from quadrants.types.mesh import (  # noqa: F401  - Quadrants' names in qd.lang.mesh
    ELEMENT_NAMES,
    ConvType,
    ElementView,
    MeshElementType,
    MeshRelationType,
    MeshTopology,
    MeshView,
    RelationView,
    element_order,
    element_type_name,
    fixed_relation_size,
    from_end_element_order,
    inverse_relation,
    relation_by_orders,
    to_end_element_order,
)
from quadrants.types.struct import StructType

__all__ = ["Mesh", "MeshInstance"]


class MeshAttrType:
    def __init__(self, name: str, dtype: Any, reorder: bool, needs_grad: bool) -> None:
        self.name, self.dtype, self.reorder, self.needs_grad = name, dtype, reorder, needs_grad


def _check_attributes(members: dict[str, Any], existing: dict[str, Any]) -> None:
    for key, dtype in members.items():
        if key in ELEMENT_NAMES:
            raise QuadrantsSyntaxError(f"'{key}' cannot use as attribute name. It has been reserved as "
                                       "MeshQuadrants's keyword.")  # fmt: skip
        if key in existing or key == "id":
            raise QuadrantsSyntaxError(f"'{key}' has already use as attribute name.")
        if isinstance(dtype, StructType):
            raise QuadrantsSyntaxError(f"mesh attribute {key!r}: struct types are not supported as mesh attributes "
                                       "(MeshQuadrants has not support StructField yet); place each member")  # fmt: skip


# ---- metadata -------------------------------------------------------------------------------------------------


class MeshMetadata:
    """A patcher's metadata (the JSON `qd.Mesh.load_meta` reads), checked: every index it holds points inside the
    arrays it indexes, so kernels following them stay in bounds."""

    def __init__(self, data: dict[str, Any], source: str = "mesh metadata") -> None:
        self.source = source
        self.num_patches = _int(data, "num_patches", source)
        if self.num_patches < 1:
            raise ValueError(f"{source}: num_patches must be at least 1, got {self.num_patches}")
        self.num_elements: dict[MeshElementType, int] = {}
        self.max_num_per_patch: dict[MeshElementType, int] = {}
        self.elements: dict[int, dict[str, np.ndarray]] = {}
        for k, e in enumerate(_list(data, "elements", source)):
            where = f"{source}: elements[{k}]"
            order = _order(e, "order", where)
            if order in self.elements:
                raise ValueError(f"{where}: element order {order} appears twice")
            self.elements[order] = self._element(e, order, where)
            self.num_elements[MeshElementType(order)] = _int(e, "num", where)
            self.max_num_per_patch[MeshElementType(order)] = int(e.get("max_num_per_patch", 0))
        self.relations: dict[tuple[int, int], dict[str, np.ndarray]] = {}
        for k, r in enumerate(data.get("relations", [])):
            where = f"{source}: relations[{k}]"
            a, b = _order(r, "from_order", where), _order(r, "to_order", where)
            if a not in self.elements or b not in self.elements:
                raise ValueError(f"{where}: relation {a} -> {b} names an element order the metadata has no "
                                 "elements of")  # fmt: skip
            self.relations[(a, b)] = self._relation(r, a, b, where)
        x = data.get("attrs", {}).get("x")
        self.attrs = {"x": np.asarray(x, dtype=np.float64).reshape(-1, 3)} if x is not None else {}
        self.patcher = data.get("patcher")
        self._views: dict[str, Any] | None = None

    def _element(self, e: dict[str, Any], order: int, where: str) -> dict[str, np.ndarray]:
        n, p = _int(e, "num", where), self.num_patches
        out = {k: _array(e, k, where) for k in ("owned_offsets", "total_offsets", "l2g_mapping", "l2r_mapping",
                                                  "g2r_mapping")}  # fmt: skip
        owned, total = out["owned_offsets"], out["total_offsets"]
        for name, offs in (("owned_offsets", owned), ("total_offsets", total)):
            if len(offs) != p + 1 or offs[0] != 0 or np.any(np.diff(offs) < 0):
                raise ValueError(f"{where}: {name} must be {p + 1} non-decreasing offsets from 0 (one per patch, "
                                 f"then the end), got {offs.tolist()[:8]}")  # fmt: skip
        if owned[-1] != n:
            raise ValueError(f"{where}: the patches own {owned[-1]} elements, but num is {n}")
        if np.any(np.diff(total) < np.diff(owned)):
            raise ValueError(f"{where}: a patch holds fewer elements in all (total_offsets) than it owns")
        for name in ("l2g_mapping", "l2r_mapping"):
            _in_range(out[name], n, f"{where}: {name}", length=int(total[-1]))
        _in_range(out["g2r_mapping"], n, f"{where}: g2r_mapping", length=n)
        return out

    def _relation(self, r: dict[str, Any], a: int, b: int, where: str) -> dict[str, np.ndarray]:
        value = _array(r, "value", where)
        ea, eb = self.elements[a], self.elements[b]
        sizes_b = np.diff(eb["total_offsets"])  # a patch's local indices of b elements lie below its count
        if a > b:  # fixed: one row of `size` neighbours per element of each patch's total run
            size = fixed_relation_size(a, b)
            if len(value) != ea["total_offsets"][-1] * size:
                raise ValueError(f"{where}: a {ELEMENT_NAMES[a]} -> {ELEMENT_NAMES[b]} relation holds {size} "
                                 f"values per element, {ea['total_offsets'][-1] * size} in all; got {len(value)}")  # fmt: skip
            patch = np.repeat(np.arange(self.num_patches), np.diff(ea["total_offsets"]) * size)
            _local_in_range(value, sizes_b[patch], where)
            return {"value": value}
        offset, patch_offset = _array(r, "offset", where), _array(r, "patch_offset", where)
        owned, p = ea["owned_offsets"], self.num_patches
        if len(offset) != owned[-1] + p or len(patch_offset) < p:
            raise ValueError(f"{where}: offset must hold one entry per owned element and one per patch "
                             f"({owned[-1] + p}), patch_offset one per patch ({p}); got {len(offset)} and "
                             f"{len(patch_offset)}")  # fmt: skip
        for q in range(p):
            seg = offset[q + owned[q]: q + owned[q + 1] + 1]
            if seg[0] < 0 or np.any(np.diff(seg) < 0) or patch_offset[q] + seg[-1] > len(value):
                raise ValueError(f"{where}: patch {q}'s offsets are not non-decreasing offsets into value")
            _local_in_range(value[patch_offset[q] + seg[0]: patch_offset[q] + seg[-1]], sizes_b[q], where)
        return {"value": value, "offset": offset, "patch_offset": patch_offset}

    def views(self) -> dict[str, Any]:
        """The index arrays as i32 fields, made once (at the first build) and shared by the meshes built from it."""
        from quadrants.lang.field import field

        if self._views is None:
            def as_field(a: np.ndarray) -> Any:
                f = field(np.int32, shape=max(len(a), 1))  # an empty array still gets a field to address
                if len(a):
                    f.from_numpy(a.astype(np.int32))
                return f

            elements = {}
            for order, e in self.elements.items():
                owner = np.repeat(np.arange(self.num_patches), np.diff(e["owned_offsets"]))
                elements[order] = ElementView(order, int(e["owned_offsets"][-1]), as_field(e["owned_offsets"]),
                                              as_field(e["total_offsets"]), as_field(e["l2g_mapping"]),
                                              as_field(e["l2r_mapping"]), as_field(owner))  # fmt: skip
            relations = {k: RelationView(k[0], k[1], as_field(r["value"]),
                                         as_field(r["offset"]) if "offset" in r else None,
                                         as_field(r["patch_offset"]) if "patch_offset" in r else None)
                         for k, r in self.relations.items()}  # fmt: skip
            g2r = {order: as_field(e["g2r_mapping"]) for order, e in self.elements.items()}
            self._views = {"elements": elements, "relations": relations, "g2r": g2r}
        return self._views


def _int(d: Any, key: str, where: str) -> int:
    if not isinstance(d, dict) or key not in d:
        raise ValueError(f"{where}: missing {key!r}")
    v = d[key]
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
        raise ValueError(f"{where}: {key} must be an integer, got {v!r}")
    return int(v)


def _order(d: Any, key: str, where: str) -> int:
    v = _int(d, key, where)
    if not 0 <= v <= 3:
        raise ValueError(f"{where}: {key} must be an element order 0..3 (verts, edges, faces, cells), got {v}")
    return v


def _list(d: Any, key: str, where: str) -> list[Any]:
    if not isinstance(d, dict) or not isinstance(d.get(key), list):
        raise ValueError(f"{where}: missing the list {key!r}")
    return d[key]  # type: ignore[no-any-return]


def _array(d: Any, key: str, where: str) -> np.ndarray:
    a = np.asarray(_list(d, key, where))
    if a.size and (a.ndim != 1 or not np.issubdtype(a.dtype, np.integer)):
        raise ValueError(f"{where}: {key} must be a list of integers")
    return a.astype(np.int64)


def _in_range(a: np.ndarray, n: int, what: str, length: int) -> None:
    if len(a) != length:
        raise ValueError(f"{what} must hold {length} indices, got {len(a)}")
    if len(a) and (a.min() < 0 or a.max() >= n):
        raise ValueError(f"{what}: an index is outside [0, {n})")


def _local_in_range(values: np.ndarray, limits: Any, where: str) -> None:
    if len(values) and (values.min() < 0 or np.any(values >= limits)):
        raise ValueError(f"{where}: a value is not a local index of its patch (below the patch's total count)")


# ---- the built mesh -----------------------------------------------------------------------------------------


class _ReorderedAttribute:
    """An attribute stored in the patches' order: Python-scope `a[i]` takes a global index (through g2r), as
    Quadrants' proxy does; everything else (`to_numpy`, `fill`, kernels' `a[i]`) is the field's own."""

    def __init__(self, field: Any, g2r: Any) -> None:
        self.__dict__.update(_field=field, _g2r=g2r)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.__dict__["_field"], name)

    def __getitem__(self, key: Any) -> Any:
        return self._field[self._g2r[key]]

    def __setitem__(self, key: Any, value: Any) -> None:
        self._field[self._g2r[key]] = value

    def __repr__(self) -> str:
        return f"<mesh attribute (reordered) of {self._field!r}>"


class MeshElementField:
    """One element set of a built mesh (`mesh.verts`): its attributes as fields (`mesh.verts.x`), `len()`, and
    the set a mesh-for loops over."""

    def __init__(self, mesh: MeshInstance, element_type: MeshElementType) -> None:
        self.mesh = mesh
        self._type = element_type
        self.attr_dict: dict[str, MeshAttrType] = {}
        self.field_dict: dict[str, Any] = {}
        self.getter_dict: dict[str, Any] = {}

    def place(self, members: dict[str, Any], reorder: bool = False, needs_grad: bool = False,
              layout: Any = None) -> None:  # fmt: skip
        """Declare attributes of this element set (a dict of name -> scalar / vector / matrix type). `layout`
        is accepted: each attribute is a field of its own (results do not depend on it)."""
        from quadrants.lang.field import field

        _check_attributes(members, self.attr_dict)
        view = self._view()
        for key, dtype in members.items():
            self.attr_dict[key] = MeshAttrType(key, dtype, reorder, needs_grad)
            self.field_dict[key] = field(dtype, shape=max(view.num, 1), needs_grad=needs_grad)
            view.attrs[key] = (self.field_dict[key], reorder)

    def _view(self) -> ElementView:
        view = self.mesh._view.elements.get(int(self._type))
        if view is None:
            raise QuadrantsSyntaxError(f"this mesh's metadata has no {element_type_name(self._type)}")
        return view

    def __getattr__(self, key: str) -> Any:
        fields = self.__dict__.get("field_dict", {})
        if key not in fields:
            raise AttributeError(f"mesh {element_type_name(self._type)} have no attribute {key!r} "
                                 f"(placed: {', '.join(fields) or 'none'})")  # fmt: skip
        if key not in self.getter_dict:
            reorder = self.attr_dict[key].reorder
            g2r = self.mesh._g2r.get(int(self._type))
            self.getter_dict[key] = _ReorderedAttribute(fields[key], g2r) if reorder else fields[key]
        return self.getter_dict[key]

    @property
    def keys(self) -> list[str]:
        return list(self.field_dict)

    def get_member_field(self, key: str) -> Any:
        return self.field_dict[key]

    def __len__(self) -> int:
        return self.mesh._view.elements[int(self._type)].num if int(self._type) in self.mesh._view.elements else 0

    def __qd_mesh_elements__(self) -> tuple[MeshView, int]:
        """What a kernel's mesh-for reads (frontend/mesh.py)."""
        return self.mesh._view, int(self._type)

    def __iter__(self) -> Any:
        raise NotImplementedError("a mesh-for (`for v in mesh.verts`) runs in kernels only")

    def __repr__(self) -> str:
        return f"<mesh {element_type_name(self._type)}: {len(self)} elements, attributes {self.keys}>"


class MeshInstance:
    """A built mesh: `verts`, `edges`, `faces`, `cells` (those the metadata has elements of)."""

    def __init__(self, metadata: MeshMetadata | None = None) -> None:
        self.relation_set: set[MeshRelationType] = set()
        self.fields: dict[MeshElementType, MeshElementField] = {}
        self.patcher = None
        views = metadata.views() if metadata is not None else {"elements": {}, "relations": {}, "g2r": {}}
        # a view of its own (its attributes), over the metadata's shared index fields
        self._view = MeshView(metadata.num_patches if metadata is not None else 0,
                              {o: ElementView(**{**v.__dict__, "attrs": {}}) for o, v in views["elements"].items()},
                              dict(views["relations"]))  # fmt: skip
        self._g2r = views["g2r"]
        for t in MeshElementType:
            es = MeshElementField(self, t)
            setattr(self, element_type_name(t), es)
            if int(t) in self._view.elements:
                self.fields[t] = es
        if metadata is not None:
            self.relation_set = {relation_by_orders(a, b) for a, b in metadata.relations}
            self.patcher = metadata.patcher
            self._vert_position = metadata.attrs.get("x")

    @property
    def num_patches(self) -> int:
        return self._view.num_patches

    def get_position_as_numpy(self) -> np.ndarray:
        """The vertex positions of the metadata (`attrs.x`), an (n, 3) array."""
        position: np.ndarray | None = getattr(self, "_vert_position", None)
        if position is not None:
            return position
        raise QuadrantsSyntaxError("Position info is not in the file.")


# ---- builders ---------------------------------------------------------------------------------------------------


class MeshElement:
    """The attributes one element type of a mesh builder declares (`builder.verts.place({...})`)."""

    def __init__(self, element_type: MeshElementType, builder: MeshBuilder) -> None:
        self.builder = builder
        self._type = element_type
        self.attr_dict: dict[str, MeshAttrType] = {}

    def place(self, members: dict[str, Any], reorder: bool = False, needs_grad: bool = False) -> None:
        _check_attributes(members, self.attr_dict)
        for key, dtype in members.items():
            self.attr_dict[key] = MeshAttrType(key, dtype, reorder, needs_grad)


class MeshBuilder:
    """`qd.lang.mesh._TetMesh()` / `_TriMesh()`: declare attributes per element type, then `build(metadata)`."""

    def __init__(self) -> None:
        from quadrants.lang import program
        from quadrants.lang.compat import Extension, is_extension_supported

        cfg = program.current_config()
        arch = cfg.arch if cfg is not None else "cpu"
        if not is_extension_supported(arch, Extension.mesh):
            raise Exception(f"Backend {arch} doesn't support MeshQuadrants extension")
        for t in MeshElementType:
            setattr(self, element_type_name(t), MeshElement(t, self))

    def build(self, metadata: MeshMetadata) -> MeshInstance:
        instance = MeshInstance(metadata)
        for t in MeshElementType:
            declared: MeshElement = getattr(self, element_type_name(t))
            if not declared.attr_dict:
                continue
            if int(t) not in metadata.elements:
                raise QuadrantsSyntaxError(f"attributes were placed on {element_type_name(t)}, which the mesh "
                                           "metadata has no elements of")  # fmt: skip
            es: MeshElementField = getattr(instance, element_type_name(t))
            for key, attr in declared.attr_dict.items():
                es.place({key: attr.dtype}, reorder=attr.reorder, needs_grad=attr.needs_grad)
        return instance


class Mesh:
    """The mesh type: `qd.Mesh.load_meta(path)` reads a patcher's metadata (JSON), `generate_meta(dict)` takes
    it as a dict. Only on backends with `qd.extension.mesh` (the CPU and CUDA ones here)."""

    @staticmethod
    def load_meta(filename: str) -> MeshMetadata:
        with open(filename) as f:
            data = json.load(f)
        return MeshMetadata(data, source=str(filename))

    @staticmethod
    def generate_meta(data: dict[str, Any]) -> MeshMetadata:
        return MeshMetadata(data)

    @staticmethod
    def _create_instance(metadata: MeshMetadata) -> MeshInstance:
        """A mesh with no attributes yet: place them on its element sets (`mesh.verts.place({...})`)."""
        return MeshInstance(metadata)


def _TriMesh() -> MeshBuilder:  # noqa: N802  - Quadrants' name
    """(Deprecated in Quadrants) A triangle mesh builder: verts, edges, faces."""
    return MeshBuilder()


def _TetMesh() -> MeshBuilder:  # noqa: N802  - Quadrants' name
    """(Deprecated in Quadrants) A tetrahedral mesh builder: verts, edges, faces, cells."""
    return MeshBuilder()
