"""An `assert`'s message with run-time values in it: `assert x[i] == 0, "x[%d] got %d" % (i, x[i])` (and the same
as an f-string or `str.format`) reports the values the failing thread saw, as Quadrants does.

The message becomes a `str.format` template of compile-time text (constants are formatted in now, as Python would)
and up to three run-time fields, the values a failed check records (`ir.Assert`'s index and extra). Each value
travels as an i64: integers widened, floats as the bits of their f64, and the site says which is which (a "message"
site's detail is JSON: the template and one kind per value, "i" or "f"), so the launcher formats them back
(runtime/launch.py `_message`). A `%d` of a float truncates and a `%f` of an integer converts, as Python's `%` does. A message
with more run-time values, or a vector among them, is reported as its source text.
"""

from __future__ import annotations

import ast
import json
import re
from typing import Any

from quadrants.frontend.builder import FrontendBuilder
from quadrants.frontend.printing import Field, FormattedText, format_call, joined_str
from quadrants.frontend.values import is_runtime
from quadrants.ir import nodes as ir
from quadrants.types import dtypes
from quadrants.types.dtypes import PrimitiveType

MAX_VALUES = 3  # what an error record carries (runtime/context.py)
_PERCENT = re.compile(r"%(?P<flags>[-+ #0]*)(?P<width>\d*)(?:\.(?P<prec>\d+))?(?P<conv>[diouxXeEfFgGcrs%])")
_INT_CONV, _FLOAT_CONV = set("diouxXc"), set("eEfFgG")


def runtime_message(fb: FrontendBuilder, node: ast.expr) -> tuple[str, tuple[ir.Value, ...]] | str | None:
    """The site detail and the i64 values of a message with run-time values; its source text where they cannot
    be carried; None for a message without run-time values."""
    pieces = _pieces(fb, node)
    if pieces is None:
        return None
    if pieces == "text":
        return ast.unparse(node)
    template: list[str] = []
    kinds: list[str] = []
    values: list[ir.Value] = []
    for p in pieces:
        if isinstance(p, str):
            template.append(p.replace("{", "{{").replace("}", "}}"))
            continue
        value, spec, want = p
        v = fb.ops.value(value, fb.loc(node))
        t = v.type
        if not isinstance(t, PrimitiveType) or len(values) == MAX_VALUES:
            return ast.unparse(node)
        kind = want or ("f" if t.is_float else "i")
        template.append(f"{{{len(values)}:{spec}}}")
        kinds.append(kind)
        values.append(_as_i64(fb, v, kind))
    if not values:
        return None
    return json.dumps({"format": "".join(template), "kinds": kinds}), tuple(values)


def _pieces(fb: FrontendBuilder, node: ast.expr) -> list[str | tuple[Any, str, str | None]] | str | None:
    """Text and (value, format spec, forced kind) fields of `"..." % args`, an f-string or `"...".format(...)`
    ("text" where there are run-time values but the form cannot be followed; None without run-time values)."""
    if isinstance(node, ast.JoinedStr):
        return _from_text(joined_str(fb, node))
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "format"
            and isinstance(node.func.value, ast.Constant) and isinstance(node.func.value.value, str)):  # fmt: skip
        return _from_text(format_call(fb, node.func.value.value, node))
    if (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod) and isinstance(node.left, ast.Constant)
            and isinstance(node.left.value, str)):  # fmt: skip
        args = [fb.expr(e) for e in node.right.elts] if isinstance(node.right, ast.Tuple) else [fb.expr(node.right)]
        if not any(is_runtime(a) for a in args):
            return None
        return _from_percent(node.left.value, args) or "text"
    return None


def _from_text(text: FormattedText) -> list[str | tuple[Any, str, str | None]] | None:
    out: list[str | tuple[Any, str, str | None]] = []
    for p in text.pieces:
        if isinstance(p, Field) and is_runtime(p.value):
            out.append((p.value, p.spec or "", None))
        else:
            out.append(p if isinstance(p, str) else format(p.value, p.spec or ""))
    return out if any(not isinstance(p, str) for p in out) else None


def _from_percent(fmt: str, args: list[Any]) -> list[str | tuple[Any, str, str | None]] | None:
    out: list[str | tuple[Any, str, str | None]] = []
    pos, k = 0, 0
    for m in _PERCENT.finditer(fmt):
        out.append(fmt[pos : m.start()])
        pos = m.end()
        if m["conv"] == "%":
            out.append("%")
            continue
        if k == len(args):
            return None  # too few arguments: Python would raise; the message stays source text
        arg, k = args[k], k + 1
        if not is_runtime(arg):
            out.append(m.group(0) % (arg,))
            continue
        out.append((arg, _format_spec(m), "i" if m["conv"] in _INT_CONV else "f" if m["conv"] in _FLOAT_CONV else None))
    out.append(fmt[pos:])
    return out if k == len(args) else None


def _format_spec(m: re.Match[str]) -> str:
    """A %-conversion as a `format` spec: `%-5d` is `<5d`, `%08.3f` is `08.3f`, `%s` is ``."""
    flags, conv = m["flags"], m["conv"]
    spec = "<" if "-" in flags else ""
    spec += "+" if "+" in flags else " " if " " in flags else ""
    spec += "#" if "#" in flags else ""
    spec += "0" if "0" in flags and "-" not in flags else ""
    spec += m["width"] + (f".{m['prec']}" if m["prec"] is not None else "")
    return spec + {"i": "d", "u": "d", "s": "", "r": ""}.get(conv, conv)


def _as_i64(fb: FrontendBuilder, v: ir.Value, kind: str) -> ir.Value:
    if kind == "f":
        return fb.b.emit(ir.Cast(value=fb.b.cast(v, dtypes.f64), type=dtypes.i64, bitcast=True))
    return fb.b.cast(v, dtypes.i64)
