"""Line numbers of the keys and values in a TOML document, for error messages.

`tomllib` parses but keeps no positions. This scanner walks text that `tomllib` has already accepted and
records, for every key path (`("kernel", 2, "signatures", 0, "x")`), the line where it is written: a table
header, a `key =`, or the start of an array element. It trusts the syntax (tomllib checked it) and only tracks
structure: headers, dotted and quoted keys, inline tables, arrays, strings and comments.
"""

from __future__ import annotations

import re

Path = tuple[str | int, ...]

_TOKEN = re.compile(
    r"""
    (?P<nl>\n)
  | (?P<ws>[ \t\r]+)
  | (?P<comment>\#[^\n]*)
  | (?P<mlstr>\"\"\"(?:[^\\]|\\.)*?\"\"\"\"{0,2}|'''.*?''''{0,2})
  | (?P<str>"(?:[^"\\\n]|\\.)*"|'[^'\n]*')
  | (?P<punct>[\[\]{}=,.])
  | (?P<bare>[^\s\[\]{}=,\#"']+)
    """,
    re.VERBOSE | re.DOTALL,
)


def _tokens(text: str) -> list[tuple[str, str, int, int]]:
    """(kind, text, line, offset) per token, without blanks and comments."""
    out: list[tuple[str, str, int, int]] = []
    line = 1
    pos = 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:  # not valid TOML; tomllib reports it
            break
        kind = m.lastgroup or ""
        value = m.group()
        if kind not in ("ws", "comment"):
            out.append((kind, value, line, pos))
        line += value.count("\n")
        pos = m.end()
    return out


def _key_text(kind: str, value: str) -> str:
    if kind == "str":
        return value[1:-1]
    return value


class _Scanner:
    def __init__(self, text: str) -> None:
        self.toks = _tokens(text)
        self.i = 0
        self.lines: dict[Path, int] = {}
        self.aot_counts: dict[Path, int] = {}

    def peek(self, ahead: int = 0) -> tuple[str, str, int]:
        i = self.i + ahead
        return self.toks[i][:3] if i < len(self.toks) else ("eof", "", 0)

    def take(self) -> tuple[str, str, int]:
        t = self.peek()
        self.i += 1
        return t

    def adjacent(self) -> bool:
        """The current token and the next are written with nothing between them (`[[`, `]]`)."""
        i = self.i
        return i + 1 < len(self.toks) and self.toks[i + 1][3] == self.toks[i][3] + 1

    def key(self) -> tuple[list[str], int]:
        """A dotted key: its parts and its line."""
        kind, value, line = self.take()
        parts = [_key_text(kind, value)]
        if kind == "bare" and "." in value:  # tokenized as one bare word: a.b.c
            parts = value.split(".")
        while self.peek()[1] == ".":
            self.take()
            k, v, _ = self.take()
            parts.append(_key_text(k, v))
        return parts, line

    def scan(self) -> dict[Path, int]:
        table: Path = ()
        while self.peek()[0] != "eof":
            kind, value, line = self.peek()
            if kind == "nl":
                self.take()
            elif value == "[":
                array = self.adjacent() and self.peek(1)[1] == "["
                self.take()
                if array:
                    self.take()
                parts, _ = self.key()
                self.take()
                if array:
                    self.take()
                base = tuple(parts)
                if array:
                    n = self.aot_counts.get(base, 0)
                    self.aot_counts[base] = n + 1
                    table = base + (n,)
                    self.lines.setdefault(base, line)
                else:
                    table = base
                self.lines[table] = line
            else:
                self.keyval(table)
        return self.lines

    def keyval(self, table: Path) -> None:
        parts, line = self.key()
        path = table + tuple(parts)
        self.lines[path] = line
        self.take()  # =
        self.value(path)

    def value(self, path: Path) -> None:
        kind, value, line = self.peek()
        if value == "{":
            self.take()
            while self.peek()[1] != "}" and self.peek()[0] != "eof":
                if self.peek()[1] == "," or self.peek()[0] == "nl":
                    self.take()
                    continue
                self.keyval(path)
            self.take()
        elif value == "[":
            self.take()
            index = 0
            while self.peek()[1] != "]" and self.peek()[0] != "eof":
                k, v, ln = self.peek()
                if v == "," or k == "nl":
                    self.take()
                    continue
                self.lines[path + (index,)] = ln
                self.value(path + (index,))
                index += 1
            self.take()
        else:
            self.take()
            while self.peek()[0] == "bare" and kind == "bare":  # a date-time written with a space
                self.take()


def key_lines(text: str) -> dict[Path, int]:
    """Every key path of a (valid) TOML document and the line it is written on."""
    return _Scanner(text).scan()


def line_of(lines: dict[Path, int], path: Path) -> int | None:
    """The line of `path`, or of its nearest written ancestor."""
    while path:
        if path in lines:
            return lines[path]
        path = path[:-1]
    return None
