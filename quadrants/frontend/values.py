"""Compound compile-time values of the frontend.

- `Matrix`: a fixed-shape vector (`shape == (n,)`) or matrix (`(n, m)`) whose elements are IR scalars or
  Python numbers, row-major. It never reaches the IR as such: operations expand element by element, so vectors
  and matrices live in registers and cost nothing at run time.
- `Struct`: a dataclass or data_oriented parameter after specialization: a name -> binding map of its members
  (runtime arguments, compile-time values, nested structs), plus the Python class for method lookup; or a
  value of a `qd.types.struct` type (`cls` is the StructType; see structs.py).

`is_runtime(v)` tells these and IR values (known only at run time) from compile-time Python objects.
"""

from __future__ import annotations

import ast
import functools
import inspect
from dataclasses import dataclass, field
from typing import Any

from quadrants.errors import QuadrantsCompilationError
from quadrants.frontend.func import BoundFunc, Func
from quadrants.frontend.source import read_function
from quadrants.ir import nodes as ir
from quadrants.types.compound import Shaped
from quadrants.types.dtypes import PrimitiveType


@dataclass(eq=False)
class Matrix(Shaped):
    shape: tuple[int, ...]
    elements: list[Any]
    clamp: bool = False  # the element of a boundary="clamp" ndarray: a runtime index into it is clamped too

    def __post_init__(self) -> None:
        n = 1
        for s in self.shape:
            n *= s
        assert len(self.elements) == n, (self.shape, len(self.elements))

    def __len__(self) -> int:
        return self.shape[0]

    def at(self, i: int, j: int | None = None) -> Any:
        if j is None:
            return self.elements[i] if self.is_vector else self.row(i)
        return self.elements[i * self.m + j]

    def row(self, i: int) -> Matrix:
        return Matrix((self.m,), self.elements[i * self.m : (i + 1) * self.m])

    def rows(self) -> list[list[Any]]:
        return [self.elements[i * self.m : (i + 1) * self.m] for i in range(self.n)]

    def unpack_values(self) -> list[Any]:
        """Iterating / unpacking a vector gives its elements; a matrix gives its rows (as vectors)."""
        return list(self.elements) if self.is_vector else [self.row(i) for i in range(self.n)]

    def __repr__(self) -> str:
        return f"Matrix{self.shape}({self.elements!r})"


def is_runtime(v: Any) -> bool:
    return isinstance(v, (ir.Value, Matrix))


def matrix_dtype(m: Matrix) -> PrimitiveType:
    """The dtype of a Matrix whose elements are IR values (all of one dtype, see `vectors.make_matrix`)."""
    t = m.elements[0].type
    assert isinstance(t, PrimitiveType)
    return t


@functools.lru_cache(maxsize=1024)
def getter_member(fget: Any) -> str | None:
    """`m` when a property's getter is `return self.m` (or `self.m.a.b`: what it reads is inside `m`), the common
    getter (Genesis' `dt`, `substep_dt`); else None."""
    try:
        fn = read_function(fget, "property").tree
    except QuadrantsCompilationError:
        return None
    if not fn.args.args:
        return None
    body = fn.body[1:] if fn.body and isinstance(fn.body[0], ast.Expr) and isinstance(fn.body[0].value, ast.Constant) else fn.body
    if len(body) != 1 or not isinstance(body[0], ast.Return) or not isinstance(body[0].value, ast.Attribute):
        return None
    node: ast.expr = body[0].value
    while isinstance(node, ast.Attribute) and isinstance(node.value, ast.Attribute):
        node = node.value
    assert isinstance(node, ast.Attribute)
    if isinstance(node.value, ast.Name) and node.value.id == fn.args.args[0].arg:
        return node.attr
    return None


def type_name(cls: Any) -> str:
    """A struct's class name (a dataclass, a data_oriented class), or its struct type's text."""
    return getattr(cls, "__name__", None) or repr(cls)


@dataclass(eq=False)
class Struct:
    cls: Any  # the dataclass / data_oriented class, or the StructType
    members: dict[str, Any] = field(default_factory=dict)
    obj: Any = None  # the data_oriented instance (None for dataclasses)
    on_class_read: Any = None  # called with (cls, name, value) when a class attribute is read as a constant
    # a kernel parameter's struct: its path in the specialization (lang/args.py), and what is told the paths of
    # the members the kernel reads (`note_read`), so that only their compiled-in values guard the code
    _path: tuple[Any, ...] | None = None
    _on_read: Any = None

    def note_read(self, name: str | None = None) -> None:
        """Member `name` is read (None: the whole struct, as Python code run on the object may read anything)."""
        notify = self.__dict__.get("_on_read")
        if notify is not None:
            path = self.__dict__["_path"]
            notify(path if name is None else path + (name,))

    def __repr__(self) -> str:
        return f"<{type_name(self.cls)} members={sorted(self.members)}>"

    def class_attribute(self, name: str) -> Any:
        """A class attribute (`self.K`, `p.GAIN`): compiled in, so reported to `on_class_read` (fastcache
        records it and re-checks it in the next process)."""
        cls = self.__dict__.get("cls")
        obj = self.__dict__.get("obj")
        prop = inspect.getattr_static(cls, name, None) if obj is not None else None
        if isinstance(prop, (property, functools.cached_property)):
            # a property of a data_oriented instance: evaluated on it at compile time, as Quadrants does (its value
            # comes from the instance's members, which the fastcache key walks); a getter `return self.m...`
            # reads member `m`, any other may read anything
            member = getter_member(prop.fget if isinstance(prop, property) else prop.func)
            self.note_read(member if member in self.__dict__.get("members", {}) else None)
            return getattr(obj, name)
        value = getattr(cls, name)
        if isinstance(value, Func):  # `self.stencil()` inside qd.static(...): runs as Python on the object
            return BoundFunc(value, obj, self.note_read) if obj is not None else BoundFunc(value, self)
        if inspect.isfunction(value) and obj is not None:
            # a plain Python method, bound to the data_oriented object: it runs at compile time, as any Python
            # function a kernel calls, and may read anything of the object
            self.note_read()
            return getattr(obj, name)
        notify = self.__dict__.get("on_class_read")
        if notify is not None and (not callable(value) or isinstance(value, type)):
            notify(cls, name, value)
        return value

    def __getattr__(self, name: str) -> Any:
        """Member access from compile-time Python code (`qd.static(self.n)`): compile-time members only."""
        members = self.__dict__.get("members", {})
        if name in members:
            self.note_read(name)
            v = members[name]
            if type(v).__name__ in ("Fixed", "Var", "MatVar"):
                from quadrants.errors import QuadrantsTypeError

                raise QuadrantsTypeError(
                    f"qd.static() arguments must be compile-time constants, but member {name!r} of {type_name(self.cls)} is a "
                    "runtime kernel argument"
                )
            return v
        return self.class_attribute(name)
