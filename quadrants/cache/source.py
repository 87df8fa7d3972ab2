"""Source text of kernels and funcs as fastcache sees it, read without parsing or tokenizing.

A function's text is the lines from its first decorator to its last line, read from its file through
linecache; the code object gives both line numbers, so nothing tokenizes (unlike `inspect.getsource`). The text
carries no path and no line number, so a checkout moved elsewhere, or lines added above a kernel, keep their
keys. Source that cannot be read (exec'd code, a deleted file, a frozen module) gives None: fastcache then steps
aside and the kernel compiles normally.
"""

from __future__ import annotations

import hashlib
import linecache
import sys
import types
from dataclasses import asdict, dataclass
from typing import Any


def _last_line(code: types.CodeType) -> int:
    last = code.co_firstlineno
    positions = getattr(code, "co_positions", None)
    if positions is not None:
        for _, end, _, _ in positions():
            if end is not None and end > last:
                last = end
    else:  # Python 3.10
        for _, _, line in code.co_lines():
            if line is not None and line > last:
                last = line
    return last


def source_text(fn: Any) -> str | None:
    code = getattr(fn, "__code__", None)
    if code is None:
        return None
    filename = code.co_filename
    linecache.checkcache(filename)  # a file deleted or edited since it was read
    lines = linecache.getlines(filename)
    last = _last_line(code)
    if not lines or last > len(lines):
        return None
    return "".join(lines[code.co_firstlineno - 1 : last])


def digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


@dataclass(frozen=True)
class FuncRecord:
    """A qd.func a kernel reached: where to find it again, and the digest of its text when compiled."""

    module: str
    qualname: str
    first: int  # line numbers: only to re-read a func that cannot be found by name (defined in a function)
    last: int
    digest: str

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def func_record(fn: Any) -> FuncRecord | None:
    text = source_text(fn)
    if text is None:
        return None
    code = fn.__code__
    return FuncRecord(fn.__module__, fn.__qualname__, code.co_firstlineno, _last_line(code), digest(text))


def resolve(module: str, qualname: str) -> Any:
    """The object named `module:qualname`, or None (names inside functions cannot be resolved)."""
    if "<locals>" in qualname:
        return None
    obj: Any = sys.modules.get(module)
    for part in qualname.split("."):
        if obj is None:
            return None
        obj = vars(obj).get(part) if hasattr(obj, "__dict__") else getattr(obj, part, None)
    return getattr(obj, "fn", obj)  # a Func or Kernel wraps the Python function


def func_unchanged(rec: FuncRecord) -> bool:
    fn = resolve(rec.module, rec.qualname)
    if fn is not None and getattr(fn, "__code__", None) is not None:
        text = source_text(fn)
    else:
        mod = sys.modules.get(rec.module)
        filename = getattr(mod, "__file__", None)
        if filename is None:
            return False
        linecache.checkcache(filename)
        lines = linecache.getlines(filename)
        text = "".join(lines[rec.first - 1 : rec.last]) if len(lines) >= rec.last else None
    return text is not None and digest(text) == rec.digest
