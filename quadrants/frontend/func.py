"""`@qd.func`: a function inlined into the kernels that call it.

Consumes a Python function; produces a `Func` whose parsed source is read once, on first inlining.
"""

from __future__ import annotations

import ast
import contextlib
import contextvars
import functools
import sys
from collections.abc import Callable, Iterator
from typing import Any

from quadrants.errors import QuadrantsSyntaxError
from quadrants.frontend.source import FunctionSource, read_function
from quadrants.runtime import python_backend

# Set while a kernel evaluates Python at compile time (`qd.static(...)`): a func called there runs as Python, as
# in Quadrants, where its body builds compile-time values (Genesis' `qd.static(qd.grouped(self.stencil_range()))`).
_AS_PYTHON: contextvars.ContextVar[bool] = contextvars.ContextVar("qd_funcs_as_python", default=False)


@contextlib.contextmanager
def funcs_run_as_python() -> Iterator[None]:
    token = _AS_PYTHON.set(True)
    try:
        yield
    finally:
        _AS_PYTHON.reset(token)


class Func:
    """A kernel-language function. Calls inside kernels are inlined; recursion is a compile error."""

    def __init__(self, fn: Callable[..., Any], def_locals: dict[str, Any] | None = None) -> None:
        self.fn = fn
        self.def_locals = def_locals or {}  # for string annotations naming locals of the defining function
        self.is_real = False  # a qd.real_func: translated once per signature and called (frontend/real_funcs.py)
        self.requires_top_level = False  # @qd.func(requires_top_level=True): callable at the kernel's top level only
        self.python_callable = False  # @qd.pyfunc: also an ordinary Python function outside kernels
        self._source: FunctionSource | None = None
        functools.update_wrapper(self, fn)  # type: ignore[arg-type]

    @property
    def source(self) -> FunctionSource:
        if self._source is None:
            self._source = read_function(self.fn, "func")
        return self._source

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self.python_callable or _AS_PYTHON.get() or python_backend.active():  # qd.init(arch=qd.python) runs
            return self.fn(*args, **kwargs)  # funcs as Python anywhere
        raise QuadrantsSyntaxError(
            f"qd.func {self.fn.__qualname__!r} can only be called from a kernel or another qd.func"
        )

    def reads_self(self) -> bool:
        """Whether running the function as Python may read its first parameter's object: it names the parameter
        (or calls what sees a frame's names: `locals`, `vars`, `eval`, `exec`, `super`, `getattr` of a string
        built at run time counts as naming it). `def stencil_range(self): return qd.ndrange(3, 3, 3)` does not,
        so calling it inside `qd.static` leaves the object's compiled-in members unguarded (nothing read them)."""
        cached = self.__dict__.get("_reads_self")
        if cached is None:
            try:
                cached = _names_first_param(self.source.tree)
            except Exception:  # noqa: BLE001 - no source: assume it reads
                cached = True
            self.__dict__["_reads_self"] = cached
        return bool(cached)

    def __copy__(self) -> Func:
        made = object.__new__(Func)
        made.__dict__.update(self.__dict__)
        return made

    def __deepcopy__(self, memo: dict[int, Any]) -> Func:
        """A copy sharing the function, its defining scope and its parsed source, which are code, not data: pydantic
        deep-copies the `qd.func` attributes of Genesis' materials, and the defining scope may hold anything (a
        lock, a generator) that cannot be copied."""
        return self.__copy__()

    def __get__(self, obj: Any, objtype: Any = None) -> Any:
        """`self.method(...)` on data_oriented objects: bind like a Python method."""
        if obj is None:
            return self
        return BoundFunc(self, obj)

    def __repr__(self) -> str:
        return f"<qd.func {self.fn.__qualname__}>"


_FRAME_READERS = frozenset({"locals", "vars", "eval", "exec", "super", "globals"})


def _names_first_param(tree: ast.FunctionDef) -> bool:
    params = tree.args.posonlyargs + tree.args.args
    if not params:
        return True
    first = params[0].arg
    for node in ast.walk(tree):
        if node is tree:
            continue
        if isinstance(node, ast.Name) and (node.id == first or node.id in _FRAME_READERS):
            return True
    # decorators and defaults are evaluated where the function is defined, not when it runs
    return False


class BoundFunc:
    __slots__ = ("func", "obj", "on_python")

    def __init__(self, func: Func, obj: Any, on_python: Callable[[], None] | None = None) -> None:
        self.func = func
        self.obj = obj
        self.on_python = on_python  # told when the func runs as Python on `obj` (it may read any member)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if _AS_PYTHON.get() or python_backend.active():
            if self.on_python is not None and self.func.reads_self():
                self.on_python()
            return self.func(self.obj, *args, **kwargs)
        return self.func(*args, **kwargs)


def func(fn: Callable[..., Any] | None = None, *, requires_top_level: bool = False) -> Any:
    """Decorator: `@qd.func`, or `@qd.func(requires_top_level=True)` for a func whose top-level loops must stay
    top-level (parallel) loops of the kernel: calling it inside a runtime `for`, `if` or `while`, directly or
    through other funcs, is a compile error (inside `qd.static` loops it is fine)."""
    frame = sys._getframe(1)
    def_locals = dict(frame.f_locals) if frame.f_code.co_name != "<module>" else None

    def make(f: Callable[..., Any]) -> Func:
        made = Func(f, def_locals)
        made.requires_top_level = bool(requires_top_level)
        return made

    return make if fn is None else make(fn)


def pyfunc(fn: Callable[..., Any]) -> Func:
    """Decorator: `@qd.pyfunc`, a function that is a `qd.func` inside kernels (inlined) and an ordinary Python
    function outside them, as in Quadrants (so its body must mean the same in both)."""
    frame = sys._getframe(1)
    made = Func(fn, dict(frame.f_locals) if frame.f_code.co_name != "<module>" else None)
    made.python_callable = True
    return made
