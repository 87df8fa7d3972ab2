"""Exception classes, source locations, and the one renderer of `file:line:col` + the frames down to it (source
lines and carets, as Quadrants prints them).

Every user-facing compile error carries a `SourceLoc`; `render()` is the only place that formats one.
The class hierarchy matches real Quadrants so that `except` clauses in user code keep working.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

TAB = 4  # tabs of a source line shown as spaces, as Python's tracebacks show them
WRAP = 80  # a longer source line is shown in pieces of this many columns, each with its carets


@dataclass(frozen=True, slots=True)
class SourceLoc:
    """A span in a user's source file. Lines are 1-based and absolute; columns are 0-based. `callers`: for a span
    in a `qd.func`, the call sites that led there from the kernel (outermost first)."""

    filename: str
    lineno: int
    col: int
    end_lineno: int
    end_col: int
    line_text: str  # the source line, as written (indentation kept)
    func_name: str = ""
    callers: tuple[SourceLoc, ...] = ()

    def short(self) -> str:
        return f"{self.filename}:{self.lineno}:{self.col + 1}"

    def frame(self) -> str:
        """The span as a traceback frame, as Quadrants prints one: `File "...", line N, in name:`, the source line
        as written (tabs expanded; a long line in pieces of WRAP columns) and carets under the span on it (to the
        line's end for a span over several lines)."""
        name = self.func_name.rsplit(".", 1)[-1]
        lines = [f'File "{self.filename}", line {self.lineno}' + (f", in {name}" if name else "") + ":"]
        raw = self.line_text.rstrip()
        text = raw.expandtabs(TAB)
        start = len(raw[: self.col].expandtabs(TAB))
        stop = self.end_col if self.end_lineno == self.lineno and self.end_col > self.col else len(raw)
        end = max(start + 1, len(raw[:stop].expandtabs(TAB)))
        for at in range(0, max(len(text), 1), WRAP):
            lines.append(text[at : at + WRAP])
            lo, hi = max(start, at), min(end, at + WRAP)
            if hi > lo:
                lines.append(" " * (lo - at) + "^" * (hi - lo))
        return "\n".join(lines)

    def render(self) -> str:
        """`file:line:col: in <qualified name>`, then the frames from the kernel down to the span."""
        head = f"{self.short()}: in {self.func_name}" if self.func_name else self.short()
        return "\n".join([head, *(c.frame() for c in self.callers), self.frame()])

    def called_from(self, call: SourceLoc) -> SourceLoc:
        """This span as reached through one more call site (an outer one)."""
        return replace(self, callers=(replace(call, callers=()), *self.callers))


class QuadrantsError(Exception):
    """Base of every exception this package raises on purpose."""


class QuadrantsCompilationError(QuadrantsError):
    """A kernel or func could not be compiled. Raised at the first call, and again at every later call."""

    def __init__(self, message: str = "", loc: SourceLoc | None = None) -> None:
        self.message = message
        self.loc = loc
        text = f"\n{loc.render()}\n{message}" if loc is not None else message
        super().__init__(text)


class QuadrantsSyntaxError(QuadrantsCompilationError, SyntaxError):
    """Python that the kernel language does not support, used where it cannot be."""

    def __init__(self, message: str = "", loc: SourceLoc | None = None) -> None:
        QuadrantsCompilationError.__init__(self, message, loc)
        self.msg = self.args[0]  # what `traceback` prints for SyntaxError subclasses


class MissingGradientError(QuadrantsSyntaxError):
    """A kernel reads the `.grad` of an ndarray argument that was passed without one. A primal kernel whose
    gradients were withheld (lang/kernel.py `_passes_grads`) compiles again with them on this error."""


class QuadrantsTypeError(QuadrantsCompilationError, TypeError):
    pass


class QuadrantsNameError(QuadrantsCompilationError, NameError):
    pass


class QuadrantsRuntimeError(QuadrantsError, RuntimeError):
    pass


class QuadrantsRuntimeTypeError(QuadrantsRuntimeError, TypeError):
    """A kernel was called with arguments that do not fit its parameters."""

    def __init__(self, message: str = "", loc: SourceLoc | None = None) -> None:
        self.message = message
        self.loc = loc
        super().__init__(f"\n{loc.render()}\n{message}" if loc is not None else message)


class QuadrantsArgumentError(QuadrantsSyntaxError, QuadrantsRuntimeTypeError):
    """A call whose arguments do not bind to the parameters (missing, unexpected, too many, given twice). Quadrants
    raises QuadrantsSyntaxError there; it is also a QuadrantsRuntimeTypeError, like the other bad arguments."""

    def __init__(self, message: str = "", loc: SourceLoc | None = None) -> None:
        QuadrantsSyntaxError.__init__(self, message, loc)


class QuadrantsArgumentValueError(QuadrantsRuntimeTypeError, ValueError):
    """An argument of the right kind but the wrong element type or dimension count: Quadrants raises ValueError
    ('Invalid value for argument ...'); it is also a QuadrantsRuntimeTypeError, like the other bad arguments."""


def binding_message(error: TypeError) -> str:
    """Quadrants' words for what `inspect.Signature.bind` (or our kernel binding) reports."""
    import re

    text = str(error)
    for pattern, words in ((r"missing a required argument: '(\w+)'", "Missing argument '{}'"),
                           (r"got an unexpected keyword argument '(\w+)'", "Unexpected argument '{}'"),
                           (r"multiple values for argument '(\w+)'", "Multiple values for argument '{}'"),
                           (r"too many positional arguments", "Too many arguments")):  # fmt: skip
        m = re.search(pattern, text)
        if m is not None:
            return words.format(*m.groups())
    return text


class QuadrantsAssertionError(QuadrantsRuntimeError, AssertionError):
    """A check inside a running kernel failed (debug mode)."""

    def __init__(self, message: str = "", loc: SourceLoc | None = None) -> None:
        self.message = message
        self.loc = loc
        super().__init__(f"{message}\n{loc.render()}" if loc is not None else message)


class QuadrantsCacheWriteError(QuadrantsRuntimeError):
    """`offline_cache_fallback=False`: the cache folder refused to store a compiled kernel (read-only, a file in
    the way, a full disk); the message names the folder and the cause."""


class QuadrantsNegativeExponentError(QuadrantsTypeError, QuadrantsRuntimeError):
    """An integer power with a negative compile-time exponent: a compile error that is also a
    QuadrantsRuntimeError, as the error Quadrants raises for it while compiling."""


class QuadrantsIndexError(QuadrantsAssertionError, IndexError):
    """An out-of-bounds ndarray access caught by the bounds checks of `debug=True`."""
