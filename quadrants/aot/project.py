"""A project as `qd precompile`, `qd audit` and `qd cache explain` see it: its modules imported, its kernels
found by `module:qualname`, and a manifest signature turned into the example arguments of a call.

Example arguments go through the same `Kernel` code as a real call (binding, specialization, the fastcache
key), so what precompile stores is exactly what the program looks up.
"""

from __future__ import annotations

import contextlib
import enum
import importlib
import os
import sys
import traceback
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, NoReturn

from quadrants.aot import typespec
from quadrants.aot.manifest import Factory, KernelEntry, Manifest, ManifestError, Signature, Value
from quadrants.aot.objects import ObjectError, ObjectRef, build
from quadrants.lang.args import ParamKind
from quadrants.lang.kernel import Kernel
from quadrants.lang.params import EMPTY, Param
from quadrants.types import annotations as ann
from quadrants.types import dtypes
from quadrants.types.compound import MatrixType


class ProjectError(Exception):
    """The project cannot be imported or a name in the manifest does not exist."""


@dataclass(frozen=True)
class Found:
    name: str  # module:qualname
    kernel: Kernel
    file: str
    line: int

    @property
    def where(self) -> str:
        return f"{_display(self.file)}:{self.line}"


@contextlib.contextmanager
def project_code(what: str) -> Iterator[None]:
    """Run the project's code (an import, a factory): `sys.exit()` and `os._exit()` there become a ProjectError
    naming `what`, instead of ending `qd` with that status and no word (a precompile that "succeeded")."""
    real_exit = os._exit

    def refuse(code: int) -> NoReturn:
        raise SystemExit(code)

    os._exit = refuse  # type: ignore[assignment]
    try:
        yield
    except SystemExit as e:
        raise ProjectError(f"{what} called sys.exit({e.code!r}) (or os._exit): the project must not exit "
                           "while qd imports it or calls its factories") from None  # fmt: skip
    finally:
        os._exit = real_exit


def import_modules(manifest: Manifest) -> list[Any]:
    """Put the manifest's python_path first on sys.path and import its modules."""
    for p in reversed(manifest.python_path):
        full = os.path.normpath(os.path.join(manifest.root, p))
        if full not in sys.path:
            sys.path.insert(0, full)
    out = []
    for i, name in enumerate(manifest.modules):
        try:
            with project_code(f"importing {name}"):
                out.append(importlib.import_module(name))
        except ModuleNotFoundError as e:
            if e.name and name.startswith(e.name):
                raise manifest.error(f"module {name!r} not found (python_path: {manifest.python_path})",
                                     ("modules", i)) from None  # fmt: skip
            raise ProjectError(f"importing {name}: {_short_tb()}") from None
        except ProjectError:
            raise
        except Exception:  # noqa: BLE001 - the project's own error, reported with its traceback
            raise ProjectError(f"importing {name}: {_short_tb()}") from None
    return out


def import_paths_or_modules(specs: list[str]) -> list[Any]:
    """Import what `qd audit` was given: dotted module names, .py files or folders (every .py file below it).
    A file's module name comes from the packages around it (folders with an __init__.py)."""
    names: list[str] = []
    for spec in specs:
        if os.path.isdir(spec):
            for folder, dirs, files in os.walk(spec):
                dirs[:] = sorted(d for d in dirs if not d.startswith((".", "__pycache__")))
                names += [_module_of(os.path.join(folder, f)) for f in sorted(files) if f.endswith(".py")]
        elif spec.endswith(".py") or os.sep in spec:
            if not os.path.isfile(spec):
                raise ProjectError(f"{spec}: no such file")
            names.append(_module_of(spec))
        else:
            names.append(spec)
    out = []
    for name in dict.fromkeys(names):
        try:
            with project_code(f"importing {name}"):
                out.append(importlib.import_module(name))
        except ModuleNotFoundError as e:
            if e.name and name.startswith(e.name):  # the module itself, not one it imports: as precompile says it
                raise ProjectError(f"module {name!r} not found (from the current folder {os.getcwd()})") from None
            raise ProjectError(f"importing {name}: {_short_tb()}") from None
        except ProjectError:
            raise
        except Exception:  # noqa: BLE001 - the project's own error, with its traceback
            raise ProjectError(f"importing {name}: {_short_tb()}") from None
    return out


def _module_of(path: str) -> str:
    path = os.path.abspath(path)
    folder, base = os.path.split(path)
    parts = [] if base == "__init__.py" else [base[:-3]]
    while os.path.isfile(os.path.join(folder, "__init__.py")):
        folder, pkg = os.path.split(folder)
        parts.insert(0, pkg)
    if folder not in sys.path:
        sys.path.insert(0, folder)
    return ".".join(parts)


def _short_tb() -> str:
    return "".join(traceback.format_exc(limit=-3)).strip()


def discover(modules: list[Any]) -> dict[str, Found]:
    """Every kernel defined in these modules (module globals and methods of classes defined there)."""
    out: dict[str, Found] = {}
    for mod in modules:
        for value in list(vars(mod).values()):
            for k in _kernels_in(value, mod.__name__):
                name = f"{k.fn.__module__}:{k.fn.__qualname__}"
                if name not in out:
                    code = k.fn.__code__
                    out[name] = Found(name, k, code.co_filename, code.co_firstlineno)
    return dict(sorted(out.items()))


def add_differentiated(found: dict[str, Found], names: list[str]) -> None:
    """The manifest's names of differentiated kernels (`mod:k.grad`, the adjoint; `mod:k.dual`, the forward-mode
    kernel: aot/record.py writes them) whose primal `mod:k` was found, added to `found` as kernels of their own:
    precompiled, probed and bundled like any other."""
    for name in names:
        base, dot, attr = name.rpartition(".")
        if dot and attr in ("grad", "dual") and base in found and name not in found:
            primal = found[base]
            found[name] = Found(name, getattr(primal.kernel, attr), primal.file, primal.line)


def _kernels_in(value: Any, module: str) -> Iterator[Kernel]:
    for _ in range(8):  # through decorators that keep what they wrap (qd.perf_dispatch's `register`, functools)
        if isinstance(value, Kernel) or getattr(value, "__wrapped__", None) is None:
            break
        value = value.__wrapped__
    if isinstance(value, Kernel) and value.fn.__module__ == module:
        yield value
    elif isinstance(value, type) and value.__module__ == module:
        for attr in vars(value).values():
            if isinstance(attr, Kernel):
                yield attr


def _display(path: str) -> str:
    rel = os.path.relpath(path)
    return path if rel.startswith("..") else rel


def resolve_ref(ref: str) -> Any:
    """`module:qual.name` -> the object."""
    module, _, qual = ref.partition(":")
    obj: Any = importlib.import_module(module)
    for part in qual.split("."):
        obj = getattr(obj, part)
    return obj


# ---- signatures -> example arguments ----------------------------------------------------------------------


def calls(manifest: Manifest, entry: KernelEntry, kernel: Kernel) -> list[tuple[Path, list[Any]]]:
    """The example argument lists of every signature of `entry`: (where it is written, values)."""
    out: list[tuple[Path, list[Any]]] = []
    params = kernel.params
    if not entry.signatures and entry.factory is None:
        out.append((entry.path, example_args(manifest, kernel, params, Signature({}, entry.path))))
    for sig in entry.signatures:
        out.append((sig.path, example_args(manifest, kernel, params, sig)))
    if entry.factory is not None:
        out.extend(_factory_calls(manifest, entry, params))
    return out


Path = tuple[Any, ...]


def _factory_calls(manifest: Manifest, entry: KernelEntry, params: list[Param]) -> list[tuple[Path, list[Any]]]:
    where = entry.path + ("factory",)
    try:
        fn = resolve_ref(entry.factory)  # type: ignore[arg-type]
    except (ImportError, AttributeError) as e:
        raise manifest.error(f"factory {entry.factory!r} not found ({e})", where) from None
    produced = _call_factory(fn, str(entry.factory), manifest, where)
    if not isinstance(produced, (list, tuple)) and not hasattr(produced, "__iter__"):
        raise manifest.error(f"factory {entry.factory} returned a {type(produced).__name__}; expected a list of "
                             "argument lists or dicts", where)  # fmt: skip
    produced = list(produced)
    out = []
    for item in produced:
        if isinstance(item, dict):
            unknown = set(item) - {p.name for p in params}
            if unknown:
                raise manifest.error(f"factory {entry.factory} returned unknown parameter(s) {sorted(unknown)}", where)
            values = [item[p.name] if p.name in item else p.default for p in params]
            if any(v is EMPTY for v in values):
                missing = [p.name for p, v in zip(params, values) if v is EMPTY]
                raise manifest.error(f"factory {entry.factory} left out parameter(s) {missing}", where)
        else:
            values = list(item)
            if len(values) != len(params):
                raise manifest.error(
                    f"factory {entry.factory} returned {len(values)} argument(s); the kernel takes {len(params)}",
                    where,
                )
        out.append((where, values))
    return out


def _call_factory(fn: Any, ref: str, manifest: Manifest, where: Path) -> Any:
    """Call a factory of the project: its exceptions (and exits) are the manifest's problem, named at `where`."""
    try:
        with project_code(f"factory {ref}"):
            return fn()
    except ProjectError as e:
        raise manifest.error(str(e), where) from None
    except Exception as e:  # noqa: BLE001 - the project's code
        raise manifest.error(f"factory {ref} raised {type(e).__name__}: {e}", where) from None


def example_args(manifest: Manifest, kernel: Kernel, params: list[Param], sig: Signature) -> list[Any]:
    names = {p.name for p in params}
    for pname in sig.params:
        if pname not in names:
            raise manifest.error(
                f"{kernel.fn.__qualname__} has no parameter {pname!r}; its parameters: {', '.join(names) or 'none'}",
                sig.path + (pname,),
            )
    return [_example(manifest, kernel, p, sig.params.get(p.name), sig.path + (p.name,), sig.path) for p in params]


def _example(manifest: Manifest, kernel: Kernel, p: Param, given: Any, path: Path, sig_path: Path) -> Any:
    what = f"parameter {p.name!r} of {kernel.fn.__qualname__}"

    def need(form: str) -> ManifestError:
        return manifest.error(f"{what} needs {form} in this signature", path if given is not None else sig_path)

    if isinstance(given, Factory):
        try:
            fn = resolve_ref(given.ref)
        except (ImportError, AttributeError) as e:
            raise manifest.error(f"factory {given.ref!r} not found ({e})", path) from None
        return _call_factory(fn, given.ref, manifest, path)
    if given is None:
        if p.default is not EMPTY:
            return p.default
        derived = _from_annotation(p)
        if derived is not None:
            return derived
        forms = {
            ParamKind.TEMPLATE: "a value (n = 4)",
            ParamKind.ENUM: "an enum member name (mode = \"FAST\")",
            ParamKind.NDARRAY: 'a type (x = "ndarray[f32, 1]")',
            ParamKind.TENSOR: 'a type (x = "ndarray[f32, 1]")',
            ParamKind.DATACLASS: 'an example ({ factory = "module:function" })',
            ParamKind.SELF: 'an instance ({ factory = "module:function" })',
            ParamKind.BUFFER_VIEW: 'an example view ({ factory = "module:function" })',
            ParamKind.SPARSE_BUILDER: 'an example builder ({ factory = "module:function" })',
        }
        raise need(forms.get(p.kind, "a value"))
    assert isinstance(given, Value)
    raw = given.raw
    if isinstance(raw, ObjectRef):
        if p.kind not in (ParamKind.TEMPLATE, ParamKind.DATACLASS, ParamKind.SELF):
            raise manifest.error(f"{what} is a {p.kind}: an object fits a template, dataclass or self parameter", path)
        try:
            with project_code(f"building [objects.{raw.name}]"):
                return build(manifest.objects, raw.name, resolve_ref)
        except ObjectError as e:
            raise manifest.error(str(e), ("objects",) + e.path) from None
    if p.kind == ParamKind.TEMPLATE:
        return dtypes.to_dtype(raw) if given.is_dtype else raw
    if p.kind == ParamKind.ENUM:
        return _enum_member(manifest, p, raw, path, what)
    if p.kind in (ParamKind.DATACLASS, ParamKind.SELF):
        raise manifest.error(f'{what} is a {p.kind}: give an example with {{ factory = "module:function" }}', path)
    if not isinstance(raw, str):
        raise manifest.error(f"{what}: expected a type string, got {raw!r}; expected {typespec.EXPECTED}", path)
    try:
        t = typespec.parse(raw)
    except typespec.TypeSpecError as e:
        raise manifest.error(f"{what}: {e}", path) from None
    _check_against_annotation(manifest, p, t, path, what)
    return t.example()


def _from_annotation(p: Param) -> Any:
    a = p.annotation
    if p.kind == ParamKind.SCALAR:
        t = dtypes.to_dtype(a)
        return typespec.TypeSpec(t).example()
    if p.kind == ParamKind.MATRIX and isinstance(a, MatrixType):
        import numpy as np

        return np.zeros(a.shape)
    if p.kind == ParamKind.STRUCT:
        return a()  # a struct's members are runtime arguments fixed by its type: a zero value stands for all
    if p.kind == ParamKind.NDARRAY and isinstance(a, ann.NdarrayType) and a.dtype is not None and a.ndim is not None:
        if isinstance(a.dtype, MatrixType):
            prim = a.dtype.resolve(dtypes.i32, dtypes.f32)
            return typespec.TypeSpec(prim, "ndarray", a.ndim, a.dtype.shape).example()
        return typespec.TypeSpec(dtypes.to_dtype(a.dtype), "ndarray", a.ndim).example()
    return None


def _check_against_annotation(manifest: Manifest, p: Param, t: typespec.TypeSpec, path: Path, what: str) -> None:
    a = p.annotation
    if p.kind == ParamKind.SCALAR:
        want = dtypes.to_dtype(a)
        if t.container is not None or t.dtype is not want:
            raise manifest.error(f"{what} is annotated {want}; the signature says {t.text()}", path)
        return
    if p.kind in (ParamKind.NDARRAY, ParamKind.TENSOR):
        if t.container is None:
            raise manifest.error(f"{what} is an array: write its type like \"ndarray[f32, 1]\"", path)
        if isinstance(a, ann.NdarrayType):
            if a.ndim is not None and a.ndim != t.ndim:
                raise manifest.error(f"{what} is annotated with {a.ndim} dimension(s); the signature says {t.ndim}", path)
            if a.dtype is not None:
                want_shape = a.dtype.shape if isinstance(a.dtype, MatrixType) else ()
                want_prim = a.dtype.resolve(dtypes.i32, dtypes.f32) if isinstance(a.dtype, MatrixType) else dtypes.to_dtype(a.dtype)
                if want_prim is not t.dtype or want_shape != t.elem_shape:
                    have = typespec.element_text(want_prim, want_shape)
                    raise manifest.error(f"{what} is annotated with elements of {have}; the signature says {t.text()}", path)
        return
    raise manifest.error(f"{what} has its type fixed by its annotation; leave it out of the signature", path)


def _enum_member(manifest: Manifest, p: Param, raw: Any, path: Path, what: str) -> Any:
    cls = p.annotation
    assert isinstance(cls, type) and issubclass(cls, enum.Enum)
    name = raw.rsplit(".", 1)[-1] if isinstance(raw, str) else None
    if name is None or name not in cls.__members__:
        raise manifest.error(f"{what}: expected a member of {cls.__name__} ({', '.join(cls.__members__)}), got {raw!r}",
                             path)  # fmt: skip
    return cls[name]


__all__ = ["ProjectError", "Found", "import_modules", "import_paths_or_modules", "discover",
           "resolve_ref", "calls", "example_args"]  # fmt: skip
