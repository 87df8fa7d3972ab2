"""Read and parse the source of a kernel or func, and map AST positions back to the user's file.

Consumes a Python function; produces a `FunctionSource` (file, absolute first line, the parsed `ast.FunctionDef`)
whose `loc(node)` is the single place an AST node becomes a `SourceLoc`.
"""

from __future__ import annotations

import ast
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from quadrants.errors import QuadrantsCompilationError, SourceLoc


@dataclass(eq=False)
class FunctionSource:
    fn: Callable[..., Any]
    name: str
    filename: str
    first_line: int  # absolute line number of lines[0] (the first decorator, or the def)
    lines: list[str]  # the source lines as in the file
    indent: int  # indentation removed before parsing
    tree: ast.FunctionDef
    mutable_names: frozenset[str] | None = None  # seqvars.mutable_names, computed on first use

    def has_return(self, with_value: bool = False) -> bool:
        """Whether the body has a `return` (`with_value`: a `return x`) of its own, not of a nested function."""
        todo: list[ast.AST] = list(self.tree.body)
        while todo:
            node = todo.pop()
            if isinstance(node, ast.Return) and (node.value is not None or not with_value):
                return True
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
                todo.extend(ast.iter_child_nodes(node))
        return False

    def loc(self, node: ast.AST) -> SourceLoc:
        lineno = getattr(node, "lineno", 1)
        end_lineno = getattr(node, "end_lineno", None) or lineno
        line = self.lines[lineno - 1] if 0 < lineno <= len(self.lines) else ""
        col = self._column(line, getattr(node, "col_offset", 0))
        end_line = self.lines[end_lineno - 1] if 0 < end_lineno <= len(self.lines) else line
        end_col = self._column(end_line, getattr(node, "end_col_offset", None) or 0)
        return SourceLoc(
            filename=self.filename,
            lineno=self.first_line + lineno - 1,
            col=col,
            end_lineno=self.first_line + end_lineno - 1,
            end_col=end_col,
            line_text=line.rstrip("\n"),
            func_name=self.name,
        )

    def _column(self, line: str, byte_col: int) -> int:
        """AST columns are UTF-8 byte offsets into the dedented line; return a character column in the
        original line."""
        dedented = line[self.indent :] if line[: self.indent].strip() == "" else line.lstrip()
        shift = len(line) - len(dedented)
        if dedented.isascii():  # bytes are characters
            return min(byte_col, len(dedented)) + shift
        return len(dedented.encode("utf-8")[:byte_col].decode("utf-8", errors="ignore")) + shift


def read_function(fn: Callable[..., Any], what: str = "kernel") -> FunctionSource:
    """Parse `fn`'s source. Raises QuadrantsCompilationError when the source cannot be read (functions made
    by `exec`, frozen modules, deleted files)."""
    fn = inspect.unwrap(fn)
    name = getattr(fn, "__qualname__", getattr(fn, "__name__", "?"))
    try:
        lines, first_line = inspect.getsourcelines(fn)
        filename = inspect.getsourcefile(fn) or inspect.getfile(fn)
    except (OSError, TypeError) as e:
        raise QuadrantsCompilationError(f"cannot read the source of {what} {name!r}: {e}") from None
    first_line = max(first_line, 1)
    first = lines[0]
    indent = len(first) - len(first.lstrip())
    # a blank line keeps its newline (slicing off the indentation would drop it, and every later line number)
    body = ["\n" if not ln.strip() else ln[indent:] if ln[:indent].strip() == "" else ln.lstrip() for ln in lines]
    try:
        module = ast.parse("".join(body))
    except SyntaxError as e:
        raise QuadrantsCompilationError(f"cannot parse the source of {what} {name!r}: {e}") from None
    defs = [n for n in module.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    if not defs or isinstance(defs[0], ast.AsyncFunctionDef):
        raise QuadrantsCompilationError(f"{what} {name!r} must be a plain `def` function")
    return FunctionSource(
        fn=fn, name=name, filename=filename, first_line=first_line, lines=lines, indent=indent, tree=defs[0]
    )


def read_lambda(fn: Callable[..., Any]) -> FunctionSource:
    """A lambda's source as a function that returns its body (`lambda x: x * x` reads as `def <lambda>(x):
    return x * x`), found in its file's parsed text by its line and parameters, so that a kernel can inline it
    as it inlines a qd.func. Raises QuadrantsCompilationError when no single lambda there matches."""
    import linecache

    code = fn.__code__
    filename = code.co_filename
    lines = linecache.getlines(filename)
    name = "<lambda>"
    try:
        module = ast.parse("".join(lines))
    except SyntaxError as e:
        raise QuadrantsCompilationError(f"cannot parse the source of lambda in {filename}: {e}") from None
    params = list(code.co_varnames[: code.co_argcount + code.co_kwonlyargcount])
    found = [n for n in ast.walk(module) if isinstance(n, ast.Lambda) and n.lineno == code.co_firstlineno
             and [a.arg for a in n.args.posonlyargs + n.args.args + n.args.kwonlyargs] == params]  # fmt: skip
    if len(found) != 1:
        raise QuadrantsCompilationError(f"cannot find the source of the lambda at {filename}:{code.co_firstlineno}")
    lam = found[0]
    ret = ast.Return(value=lam.body)
    tree = ast.FunctionDef(name=name, args=lam.args, body=[ret], decorator_list=[], returns=None)
    for node in (ret, tree):
        ast.copy_location(node, lam)
    return FunctionSource(fn=fn, name=name, filename=filename, first_line=1, lines=lines, indent=0, tree=tree)
