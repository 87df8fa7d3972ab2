"""The precompile manifest: which modules to import, for which targets, and the signatures of each kernel.

`qd.toml` holds the keys at its top level; `pyproject.toml` holds them under `[tool.quadrants]`:

    modules = ["sim.kernels", "sim.cloth"]     # imported to find the kernels (required)
    python_path = ["src"]                      # put on sys.path first, relative to this file (default ["."])
    cache_dir = "build/qd-cache"               # relative to this file (default: QD_CACHE_DIR, else the user cache)
    targets = ["host", "x86-64-v3"]            # "host", an LLVM CPU name, or "cuda:sm_80,sm_90" (default ["host"])
    remote_cache = "redis://cache.internal/0"  # shared by the `qd` commands' processes (QD_REMOTE_CACHE wins)

    [init]                                     # the qd.init options the program runs with
    default_fp = "f64"

    [[kernel]]
    name = "sim.kernels:advance"               # module:qualname; module:Class.method for data_oriented methods
    signatures = [
        { x = "ndarray[f32, 1]", dt = "f32" },         # a type per parameter (see typespec.py)
        { x = "ndarray[vec3, 1]", dt = "f64" },
        { x = "numpy[f32, 2]", n = 4, mode = "FAST" },   # template value; enum member by name
        { state = { factory = "sim.setup:example_state" } },   # a dataclass / data_oriented example
        { state = { object = "State" } },                # ... or one described in [objects] (qd record writes it)
    ]
    # factory = "sim.setup:advance_args"       # or a function returning a list of argument dicts/tuples

    [objects.State]                            # see aot/objects.py
    class = "sim.state:State"
    members = { x = "ndarray[f32, 2]", dt = 0.01 }

    [[warmup]]                                 # kernels only the program can build the arguments of (see warmup.py)
    run = ["python", "app.py", "--steps", "2"] # run in this file's folder; "python" is qd's own interpreter
    kernels = ["sim.solver:Solver.substep"]    # what it must call (qd record writes both)
    env = { QD_AD_STACK_EXPERIMENTAL_ENABLED = "1" }   # optional; timeout = 1800 (seconds) by default

Parameters whose annotation fixes the type (`qd.types.NDArray[qd.f32, 1]`, `qd.f32`, `qd.math.vec3`) may be
left out of a signature; a kernel whose parameters are all fixed needs no `signatures` at all.

Every problem is a `ManifestError` naming the file, the line and what was expected.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field, fields
from typing import Any

from quadrants.aot import typespec
from quadrants.aot.objects import ObjectError, ObjectRef, ObjectSpec, parse_table
from quadrants.aot.tomlpos import Path, key_lines, line_of
from quadrants.targets import HOST, TargetError, parse_targets

try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

TOP_KEYS = {"modules", "python_path", "cache_dir", "targets", "init", "kernel", "remote_cache", "objects", "warmup"}
REMOTE_SCHEMES = ("redis://", "rediss://", "unix://", "s3://")
KERNEL_KEYS = {"name", "signatures", "factory"}
WARMUP_KEYS = {"run", "kernels", "env", "timeout"}
DEFAULT_WARMUP_TIMEOUT = 1800.0
_REF = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_][\w.]*$")


class ManifestError(Exception):
    """A manifest problem: `file:line: message`."""

    def __init__(self, message: str, file: str, line: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.file = file
        self.line = line

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else self.file
        return f"{where}: {self.message}"


@dataclass(frozen=True)
class Factory:
    """`{ factory = "module:function" }`: call it for an example value."""

    ref: str


@dataclass(frozen=True)
class Value:
    """A value written in the manifest: a template value, an enum member name, or (as a string) a type;
    `is_dtype`: `{ dtype = "f32" }`, a template parameter given a scalar type."""

    raw: Any
    is_dtype: bool = False


@dataclass(frozen=True)
class Signature:
    params: dict[str, Factory | Value]
    path: Path  # where it is written, for messages


@dataclass(frozen=True)
class KernelEntry:
    name: str  # module:qualname
    signatures: list[Signature]
    factory: str | None
    path: Path

    @property
    def module(self) -> str:
        return self.name.split(":", 1)[0]

    @property
    def qualname(self) -> str:
        return self.name.split(":", 1)[1]


@dataclass(frozen=True)
class WarmupEntry:
    """`[[warmup]]`: a command whose run compiles the kernels listed (their arguments are objects only the
    program builds); `qd precompile` runs it against the cache (quadrants/aot/warmup.py)."""

    run: tuple[str, ...]
    kernels: tuple[str, ...]
    env: tuple[tuple[str, str], ...]
    timeout: float
    path: Path


@dataclass
class Manifest:
    file: str
    modules: list[str]
    python_path: list[str]
    cache_dir: str | None
    targets: list[str]
    init: dict[str, Any]
    kernels: list[KernelEntry]
    prefix: Path = ()  # ("tool", "quadrants") in a pyproject.toml
    lines: dict[Path, int] = field(default_factory=dict)
    targets_overridden: bool = False  # the targets come from `--target`, not the file
    remote_cache: str | None = None  # the remote cache's URL (cache/remote.py)
    objects: dict[str, ObjectSpec] = field(default_factory=dict)  # [objects]: see aot/objects.py
    warmups: list[WarmupEntry] = field(default_factory=list)  # [[warmup]]: see aot/warmup.py

    @property
    def root(self) -> str:
        return os.path.dirname(os.path.abspath(self.file))

    def error(self, message: str, path: Path = ()) -> ManifestError:
        """An error about the item at `path` (relative to the manifest's table)."""
        return ManifestError(message, self.file, line_of(self.lines, self.prefix + path))

    def where(self, path: Path) -> str:
        """`file:line` of the item at `path`, for reports (the file alone where no line is known)."""
        line = line_of(self.lines, self.prefix + path)
        return f"{self.file}:{line}" if line else self.file

    def kernel(self, name: str) -> KernelEntry | None:
        return next((k for k in self.kernels if k.name == name), None)

    @property
    def kernel_names(self) -> list[str]:
        """Every kernel the manifest names: its [[kernel]] entries, then the kernels its warm-ups must call."""
        return [k.name for k in self.kernels] + [k for w in self.warmups for k in w.kernels]


def relative_inside(path: str, folder: str) -> str:
    """`path` relative to `folder` when it lies inside it, else absolute: how a manifest writes a path (a copied
    project keeps the paths inside it, never one of the recording machine's elsewhere)."""
    rel = os.path.relpath(os.path.abspath(path), folder)
    return os.path.abspath(path) if rel == os.pardir or rel.startswith(os.pardir + os.sep) else rel


def find(start: str | None = None) -> str | None:
    """`qd.toml`, else a `pyproject.toml` with a [tool.quadrants] table, in `start` or a folder above it."""
    folder = os.path.abspath(start or os.getcwd())
    while True:
        for name in ("qd.toml", "pyproject.toml"):
            path = os.path.join(folder, name)
            if os.path.isfile(path) and (name == "qd.toml" or _has_tool_table(path)):
                return path
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent


def _has_tool_table(path: str) -> bool:
    try:
        with open(path, "rb") as f:
            return "quadrants" in tomllib.load(f).get("tool", {})
    except (OSError, tomllib.TOMLDecodeError):
        return False


def load(path: str) -> Manifest:
    """Read and validate a manifest; raises ManifestError."""
    display = os.path.relpath(path) if not os.path.relpath(path).startswith("..") else path
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError as e:
        raise ManifestError(f"cannot read the manifest ({e.strerror})", display) from None
    try:
        text = raw.decode()
        data = tomllib.loads(text)
    except UnicodeDecodeError:
        raise ManifestError("not UTF-8 text", display) from None
    except RecursionError:
        raise ManifestError("arrays or tables nested too deeply for TOML", display) from None
    except tomllib.TOMLDecodeError as e:
        m = re.search(r"\(at line (\d+), column (\d+)\)", str(e))
        msg = re.sub(r"\s*\(at line \d+, column \d+\)", "", str(e))
        line = int(m.group(1)) if m else None
        col = f" (column {m.group(2)})" if m else ""
        raise ManifestError(f"invalid TOML: {msg}{col}", display, line) from None
    prefix: Path = ()
    if os.path.basename(path) == "pyproject.toml":
        prefix = ("tool", "quadrants")
        data = data.get("tool", {}).get("quadrants")
        if not isinstance(data, dict):
            raise ManifestError("no [tool.quadrants] table", display)
    manifest = Manifest(display, [], ["."], None, [str(HOST)], {}, [], prefix, key_lines(text))
    _validate(manifest, data)
    return manifest


def _validate(m: Manifest, data: dict[str, Any]) -> None:
    for key in data:
        if key not in TOP_KEYS:
            raise m.error(f"unknown key {key!r}; expected one of {', '.join(sorted(TOP_KEYS))}", (key,))
    if "modules" not in data:
        raise m.error('missing "modules": the list of modules that define the kernels, e.g. modules = ["app.sim"]')
    m.modules = _str_list(m, data, "modules", dotted=True)
    if not m.modules:
        raise m.error('"modules" is empty: name at least one module', ("modules",))
    if "python_path" in data:
        m.python_path = _str_list(m, data, "python_path")
    if "cache_dir" in data:
        if not isinstance(data["cache_dir"], str) or not data["cache_dir"]:
            raise m.error('"cache_dir" must be a folder path (a string)', ("cache_dir",))
        m.cache_dir = data["cache_dir"]
    if "remote_cache" in data:
        v = data["remote_cache"]
        if not isinstance(v, str) or not v.startswith(REMOTE_SCHEMES):
            raise m.error(f'"remote_cache" must be a URL starting with {", ".join(REMOTE_SCHEMES)}', ("remote_cache",))
        m.remote_cache = v
    if "targets" in data:
        m.targets = expand_targets(_str_list(m, data, "targets"), lambda msg, i: m.error(msg, ("targets", i)))
        if not m.targets:
            raise m.error('"targets" is empty: name at least one, e.g. targets = ["host"]', ("targets",))
    if "init" in data:
        m.init = _init_options(m, data["init"])
    if "objects" in data:
        try:
            m.objects = parse_table(data["objects"])
        except ObjectError as e:
            raise m.error(str(e), ("objects",) + e.path) from None
    kernels = data.get("kernel", [])
    if not isinstance(kernels, list):
        raise m.error('"kernel" must be an array of tables: write each as [[kernel]]', ("kernel",))
    for i, k in enumerate(kernels):
        m.kernels.append(_kernel(m, k, ("kernel", i)))
    warmups = data.get("warmup", [])
    if not isinstance(warmups, list):
        raise m.error('"warmup" must be an array of tables: write each as [[warmup]]', ("warmup",))
    m.warmups = [_warmup(m, w, ("warmup", i)) for i, w in enumerate(warmups)]
    seen: dict[str, int] = {}
    for i, k in enumerate(m.kernels):
        if k.name in seen:
            raise m.error(f"kernel {k.name!r} is listed twice (also in kernel #{seen[k.name] + 1})", ("kernel", i))
        seen[k.name] = i


def expand_targets(targets: list[str], error: Any) -> list[str]:
    """Validate targets and split `cuda:sm_80,sm_90` into one target per GPU architecture. `error(message,
    index)` makes the exception to raise."""
    out: list[str] = []
    for i, t in enumerate(targets):
        try:
            out += [str(x) for x in parse_targets(t)]
        except TargetError as e:
            raise error(str(e), i) from None
    return list(dict.fromkeys(out))


def _str_list(m: Manifest, data: dict[str, Any], key: str, dotted: bool = False) -> list[str]:
    v = data[key]
    if not isinstance(v, list) or not all(isinstance(x, str) and x for x in v):
        raise m.error(f'"{key}" must be a list of strings, e.g. {key} = ["..."]', (key,))
    if dotted:
        for i, x in enumerate(v):
            if not re.match(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*$", x):
                raise m.error(f"{x!r} is not a module name (dotted, like \"app.kernels\")", (key, i))
    return list(v)


def _init_options(m: Manifest, v: Any) -> dict[str, Any]:
    from quadrants._config import FIELDS, Config

    if not isinstance(v, dict):
        raise m.error("[init] must be a table of qd.init options", ("init",))
    known = {f.name for f in fields(Config)}
    for k in v:
        if k not in known:
            raise m.error(f"unknown qd.init option {k!r} (see quadrants/_config.py)", ("init", k))
        if k in ("offline_cache_file_path", "offline_cache", "arch"):
            raise m.error(f"{k!r} is set by qd precompile (use cache_dir / targets)", ("init", k))
        parse = FIELDS[k].metadata["parse"] if k in FIELDS else None
        if parse is not None:
            try:
                parse(v[k])
            except (ValueError, TypeError, KeyError) as e:
                raise m.error(f"init.{k} = {v[k]!r}: {e}", ("init", k)) from None
    return dict(v)


def _kernel(m: Manifest, k: Any, path: Path) -> KernelEntry:
    if not isinstance(k, dict):
        raise m.error("each [[kernel]] must be a table", path)
    for key in k:
        if key not in KERNEL_KEYS:
            raise m.error(f"unknown key {key!r} in [[kernel]]; expected one of {', '.join(sorted(KERNEL_KEYS))}",
                          path + (key,))  # fmt: skip
    name = k.get("name")
    if not isinstance(name, str) or not _REF.match(name):
        raise m.error('[[kernel]] needs name = "module:kernel" (or "module:Class.method")', path + ("name",))
    factory = k.get("factory")
    if factory is not None and (not isinstance(factory, str) or not _REF.match(factory)):
        raise m.error('factory must be "module:function"', path + ("factory",))
    sigs_raw = k.get("signatures", [])
    if not isinstance(sigs_raw, list):
        raise m.error("signatures must be an array of inline tables: [{ x = \"ndarray[f32, 1]\" }, ...]",
                      path + ("signatures",))  # fmt: skip
    sigs = []
    for j, s in enumerate(sigs_raw):
        spath = path + ("signatures", j)
        if not isinstance(s, dict):
            raise m.error('each signature must be an inline table, e.g. { x = "ndarray[f32, 1]", dt = "f32" }', spath)
        params: dict[str, Factory | Value] = {}
        for pname, pv in s.items():
            params[pname] = _param_value(m, pv, spath + (pname,))
            ref = params[pname]
            if isinstance(ref, Value) and isinstance(ref.raw, ObjectRef) and ref.raw.name not in m.objects:
                raise m.error(f"no [objects.{ref.raw.name}] entry", spath + (pname,))
        sigs.append(Signature(params, spath))
    return KernelEntry(name, sigs, factory, path)


def _warmup(m: Manifest, w: Any, path: Path) -> WarmupEntry:
    if not isinstance(w, dict):
        raise m.error("each [[warmup]] must be a table", path)
    for key in w:
        if key not in WARMUP_KEYS:
            raise m.error(f"unknown key {key!r} in [[warmup]]; expected one of {', '.join(sorted(WARMUP_KEYS))}",
                          path + (key,))  # fmt: skip
    run = w.get("run")
    if not isinstance(run, list) or not run or not all(isinstance(x, str) and x for x in run):
        raise m.error('[[warmup]] needs run = ["python", "app.py", ...]: the command, as a list of strings',
                      path + ("run",))  # fmt: skip
    kernels = w.get("kernels", [])
    if not isinstance(kernels, list) or not all(isinstance(x, str) and _REF.match(x) for x in kernels):
        raise m.error('kernels must be a list of "module:kernel" names (the kernels the run must call)',
                      path + ("kernels",))  # fmt: skip
    env = w.get("env", {})
    if not isinstance(env, dict) or not all(isinstance(v, str) for v in env.values()):
        raise m.error('env must be a table of strings, e.g. env = { QD_LOG_LEVEL = "warn" }', path + ("env",))
    timeout = w.get("timeout", DEFAULT_WARMUP_TIMEOUT)
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0:
        raise m.error("timeout must be a positive number of seconds", path + ("timeout",))
    return WarmupEntry(tuple(run), tuple(kernels), tuple(env.items()), float(timeout), path)


def _param_value(m: Manifest, v: Any, path: Path) -> Factory | Value:
    if isinstance(v, dict):
        if set(v) == {"factory"} and isinstance(v["factory"], str) and _REF.match(v["factory"]):
            return Factory(v["factory"])
        if set(v) == {"object"} and isinstance(v["object"], str):
            return Value(ObjectRef(v["object"]))
        if set(v) == {"value"}:
            return Value(_nested(m, v["value"], path))
        if set(v) == {"dtype"} and isinstance(v["dtype"], str) and v["dtype"] in typespec.SCALARS:
            return Value(v["dtype"], is_dtype=True)
        raise m.error('expected { factory = "module:function" }, { object = "Name" }, { value = ... } or '
                      '{ dtype = "f32" }', path)
    return Value(_nested(m, v, path))


def _nested(m: Manifest, v: Any, path: Path) -> Any:
    try:
        return _tuples(v)
    except ValueError as e:
        raise m.error(f"{e}; expected a number, a string or a short list", path) from None


MAX_DEPTH = 16  # template values nested deeper than this are no kernel argument anyone writes


def _tuples(v: Any, depth: int = 0) -> Any:
    if depth > MAX_DEPTH:
        raise ValueError(f"a value nested more than {MAX_DEPTH} deep")
    if isinstance(v, dict):
        for x in v.values():
            _tuples(x, depth + 1)
        return v
    return tuple(_tuples(x, depth + 1) for x in v) if isinstance(v, list) else v
