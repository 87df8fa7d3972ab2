"""Source text of kernels and funcs as fastcache sees it, read without parsing or tokenizing.

A function's text is the lines from its first decorator to its last line, read from its file through
linecache; the code object gives both line numbers, so nothing tokenizes (unlike `inspect.getsource`). The text
carries no path and no line number, so a checkout moved elsewhere, or lines added above a kernel, keep their
keys. Source that cannot be read (exec'd code, a deleted file, a frozen module) gives None: fastcache then steps
aside and the kernel compiles normally.
"""

from __future__ import annotations

import functools
import linecache
import os
import sys
import types
from dataclasses import asdict, dataclass
from typing import Any

_LAST_LINES: dict[types.CodeType, int] = {}


def _last_line(code: types.CodeType) -> int:
    """The last line with code in it (nested code objects' lines lie within their parent's); once per code
    object (a fastcache lookup re-reads the text of every func a kernel calls)."""
    last = _LAST_LINES.get(code)
    if last is None:
        last = max((line for _, _, line in code.co_lines() if line is not None), default=code.co_firstlineno)
        _LAST_LINES[code] = last
    return last


def source_text(fn: Any) -> str | None:
    code = getattr(fn, "__code__", None)
    if code is None:
        return None
    filename = code.co_filename
    _check_once(filename)
    lines = linecache.getlines(filename)
    last = _last_line(code)
    if not lines or last > len(lines):
        return None
    return "".join(lines[code.co_firstlineno - 1 : last])


_CHECKED: set[str] = set()


def _check_once(filename: str) -> None:
    """Drop linecache's copy of a file deleted or edited before this process read it (once per file)."""
    if filename not in _CHECKED:
        _CHECKED.add(filename)
        linecache.checkcache(filename)


@functools.lru_cache(maxsize=64)
def module_of_file(path: str) -> str:
    """The dotted module name of a .py file, from the packages (folders with __init__.py) around it."""
    folder, base = os.path.split(os.path.abspath(path))
    parts = [os.path.splitext(base)[0]]
    while os.path.isfile(os.path.join(folder, "__init__.py")):
        folder, pkg = os.path.split(folder)
        parts.insert(0, pkg)
    return ".".join(parts)


def stable_module(name: str) -> str:
    """A module's name as every process spells it: a script's `__main__` is named after its file (`sim.py` run
    as a script and `import sim` define the same classes and kernels, and key them alike). On the lookup path
    (fingerprints of enums and functions): the file's name is worked out once."""
    if name != "__main__":
        return name
    path = getattr(sys.modules.get("__main__"), "__file__", None)
    return module_of_file(path) if path else name


def qualified(obj: Any) -> str:
    """`module.qualname` of a class or function, with `stable_module`."""
    return f"{stable_module(obj.__module__)}.{obj.__qualname__}"


def digest(text: str) -> str:
    from quadrants.cache.keys import sha256

    return sha256(text.encode()).hexdigest()


@dataclass(frozen=True)
class FuncRecord:
    """A qd.func a kernel reached: where to find it again, and the digest of its text when compiled.

    It is found by name (`module`, `qualname`) when possible; otherwise (defined inside a function, or the
    module is `__main__` of another program) its lines are re-read from `relpath`, its file relative to the
    kernel's, so a moved checkout still finds it."""

    module: str
    qualname: str
    relpath: str
    first: int
    last: int
    digest: str

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def func_record(fn: Any, kernel_fn: Any) -> FuncRecord | None:
    text = source_text(fn)
    if text is None:
        return None
    code = fn.__code__
    rel = os.path.relpath(code.co_filename, os.path.dirname(kernel_fn.__code__.co_filename))
    return FuncRecord(fn.__module__, fn.__qualname__, rel, code.co_firstlineno, _last_line(code), digest(text))


def resolve(module: str, qualname: str, unwrap: bool = True) -> Any:
    """The object named `module:qualname`, or None (names inside functions cannot be resolved). With `unwrap`, a
    Func or Kernel gives the Python function it wraps."""
    if "<locals>" in qualname:
        return None
    obj: Any = sys.modules.get(module)
    for part in qualname.split("."):
        if obj is None:
            return None
        obj = vars(obj).get(part) if hasattr(obj, "__dict__") else getattr(obj, part, None)
    return getattr(obj, "fn", obj) if unwrap else obj


def resolve_name(name: str, unwrap: bool = True) -> Any:
    """`resolve` of a "module:qualname" text (how records name funcs and classes)."""
    module, _, qualname = name.partition(":")
    return resolve(module, qualname, unwrap)


_UNCHANGED: dict[FuncRecord, bool] = {}


def func_unchanged(rec: FuncRecord, kernel_fn: Any) -> bool:
    """Whether the func's text still has the recorded digest (decided once per func and process)."""
    known = _UNCHANGED.get(rec)
    if known is None:
        known = _UNCHANGED[rec] = _func_unchanged(rec, kernel_fn)
    return known


def _func_unchanged(rec: FuncRecord, kernel_fn: Any) -> bool:
    fn = resolve(rec.module, rec.qualname)
    code = getattr(fn, "__code__", None)
    if code is not None:  # the func the name means now, wherever it is (another script's `__main__.helper`)
        text = source_text(fn)
    else:
        filename = os.path.normpath(os.path.join(os.path.dirname(kernel_fn.__code__.co_filename), rec.relpath))
        _check_once(filename)
        lines = linecache.getlines(filename)
        text = "".join(lines[rec.first - 1 : rec.last]) if len(lines) >= rec.last else None
    return text is not None and digest(text) == rec.digest
