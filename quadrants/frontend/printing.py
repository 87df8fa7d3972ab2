"""`print(...)` inside kernels, with f-strings and `str.format`, as Quadrants prints them.

Consumes the call's AST; emits one `ir.Print` whose parts are strings and scalar values, each value with the
printf spec its replacement field gave (checked against its dtype here, merged with the dtype's own directive
by codegen: ir/printf.py). The rules, as in Quadrants 1.3.3:
- A value printed without a spec prints as its dtype does (`%f` for f32, `%.12f` for f64, decimal integers);
  a vector or matrix prints as nested `[a, b]` lists, a spec applying to each element.
- A replacement field with a spec (`{x:.2f}`, `{:e}`, `{:.10d}`, `{:.2}`: the conversion letter may be left out)
  prints at run time even when its value is a Python number (`"{:.2}".format(3.0)` is `3.00`: the number
  becomes a constant of the default type); without a spec a Python value is formatted here, as Python does.
- `"...".format(...)` takes positional (`{}` counts from 0 on its own, beside `{2}`) and keyword fields;
  every positional argument and keyword must be used, and each field must have its argument.
"""

from __future__ import annotations

import ast
import string
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from quadrants.errors import QuadrantsSyntaxError, QuadrantsTypeError
from quadrants.frontend.builder import FrontendBuilder
from quadrants.frontend.ops import is_static_number
from quadrants.frontend.static_eval import static_eval
from quadrants.frontend.values import Matrix, is_runtime
from quadrants.ir import nodes as ir
from quadrants.ir import printf


@dataclass(frozen=True)
class Field:
    """A replacement field's value and its printf spec (None: printed as its type prints)."""

    value: Any
    spec: str | None


@dataclass(frozen=True)
class FormattedText:
    """A string formatted in a kernel (an f-string or `str.format` with runtime values): text to print."""

    pieces: tuple[str | Field, ...]


_CONVERSIONS: dict[int, Callable[[Any], str]] = {ord("s"): str, ord("r"): repr, ord("a"): ascii}  # `!s` `!r` `!a`


def print_call(fb: FrontendBuilder, node: ast.Call) -> None:
    sep, end = " ", "\n"
    for kw in node.keywords:
        if kw.arg not in ("sep", "end"):
            raise fb.error(node, f"print() does not take {kw.arg!r} in kernels")
        val = static_eval(fb, kw.value)
        sep, end = (val, end) if kw.arg == "sep" else (sep, val)
    out = _Parts(fb)
    for i, a_node in enumerate(node.args):
        if i:
            out.text(sep)
        value = joined_str(fb, a_node) if isinstance(a_node, ast.JoinedStr) else fb.expr(a_node)
        out.add(value, None, a_node)
    out.text(end)
    fb.b.emit(ir.Print(parts=tuple(out.parts), specs=tuple(out.specs)))


def joined_str(fb: FrontendBuilder, node: ast.JoinedStr) -> FormattedText:
    """An f-string's pieces; a field's spec is evaluated at compile time (it may hold `{...}` itself)."""
    pieces: list[str | Field] = []
    for piece in node.values:
        if isinstance(piece, ast.Constant):
            pieces.append(str(piece.value))
            continue
        assert isinstance(piece, ast.FormattedValue)
        value = fb.expr(piece.value)
        spec = static_eval(fb, piece.format_spec) if piece.format_spec is not None else ""
        convert = _CONVERSIONS.get(piece.conversion)
        if convert is not None and not is_runtime(value):
            value = convert(value)
        pieces.append(Field(value, spec or None))
    return FormattedText(tuple(pieces))


def has_runtime(text: FormattedText) -> bool:
    return any(isinstance(p, Field) and is_runtime(p.value) for p in text.pieces)


def python_str(text: FormattedText) -> str:
    """The string of formatted text whose values are all compile-time ones, as Python formats it."""
    return "".join(p if isinstance(p, str) else format(p.value, p.spec or "") for p in text.pieces)


def format_call(fb: FrontendBuilder, template: str, node: ast.Call) -> FormattedText:
    """`template.format(*args, **kwargs)` in a kernel."""
    args = [fb.expr(a) for a in node.args]
    kwargs = {kw.arg: fb.expr(kw.value) for kw in node.keywords if kw.arg is not None}
    if len(kwargs) != len(node.keywords):
        raise fb.error(node, "str.format(**mapping) is not supported in kernels")
    try:
        parsed = list(string.Formatter().parse(template))
    except ValueError as e:
        raise fb.error(node, f"invalid format string {template!r}: {e}") from None
    fields: list[tuple[int | str, str]] = []
    auto = 0
    for _, name, spec, _ in parsed:
        if name is None:
            continue
        if name == "":
            fields.append((auto, spec or ""))
            auto += 1
        else:
            fields.append((int(name) if name.isdigit() else name, spec or ""))
    _check_arguments(fb, node, fields, len(args), kwargs)
    pieces: list[str | Field] = []
    it = iter(fields)
    for literal, name, _, _ in parsed:
        if literal:
            pieces.append(literal)
        if name is not None:
            key, spec = next(it)
            pieces.append(Field(args[key] if isinstance(key, int) else kwargs[key], spec or None))
    return FormattedText(tuple(pieces))


def _check_arguments(
    fb: FrontendBuilder, node: ast.AST, fields: list[tuple[int | str, str]], n_args: int, kwargs: dict[str, Any]
) -> None:
    expected = max((k for k, _ in fields if isinstance(k, int)), default=-1) + 1
    if expected != n_args:
        raise fb.error(node, f"Expected {expected} positional argument(s), but received {n_args} instead.",
                       QuadrantsSyntaxError)  # fmt: skip
    names = {k for k, _ in fields if isinstance(k, str)}
    for name in sorted(names - kwargs.keys()):
        raise fb.error(node, f"Keyword '{name}' not found.", QuadrantsSyntaxError)
    for name in kwargs:
        if name not in names:
            raise fb.error(node, f"Keyword '{name}' not used.", QuadrantsSyntaxError)


class _Parts:
    """The parts and specs of one `ir.Print`, flattened from values, lists, matrices and formatted text."""

    def __init__(self, fb: FrontendBuilder) -> None:
        self.fb = fb
        self.parts: list[str | ir.Value] = []
        self.specs: list[str] = []

    def text(self, s: str) -> None:
        if self.parts and isinstance(self.parts[-1], str):
            self.parts[-1] += s
        else:
            self.parts.append(s)
            self.specs.append("")

    def add(self, v: Any, spec: str | None, node: ast.AST) -> None:
        if isinstance(v, FormattedText):
            for p in v.pieces:
                if isinstance(p, str):
                    self.text(p)
                else:
                    self.add(p.value, p.spec, node)
        elif isinstance(v, (Matrix, list, tuple)):
            self.text("[")
            for j, e in enumerate(v.unpack_values() if isinstance(v, Matrix) else v):
                if j:
                    self.text(", ")
                self.add(e, spec, node)
            self.text("]")
        elif isinstance(v, ir.Value) or (spec is not None and is_static_number(v)):
            self.scalar(self.fb.ops.value(v, self.fb.loc(node)), spec, node)
        else:
            self.text(str(v) if spec is None else format(v, spec))

    def scalar(self, x: ir.Value, spec: str | None, node: ast.AST) -> None:
        if spec is not None:
            error = printf.check(spec, x.type)  # type: ignore[arg-type]
            if error is not None:
                raise self.fb.error(node, error, QuadrantsTypeError)
        self.parts.append(x)
        self.specs.append(spec or "")
