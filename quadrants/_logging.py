"""Logging with stable tags: every message is `[Quadrants] [LEVEL] [tag] text` on stderr.

Tags (`frontend`, `fastcache`, `purity`, `cache`, `runtime`, `init`) are part of the interface: tests and
users grep for them. The level comes from `qd.init(log_level=...)` / `QD_LOG_LEVEL`.

Quadrants' surface of this module is kept: the level names `DEBUG`, `TRACE`, `INFO`, `WARN`, `ERROR`,
`CRITICAL` (strings), `_get_logging(level)` (a `(msg, *args, **kwargs)` function that logs `msg.format(...)`),
and redirection: a program may assign its own function to `qd._logging.warn` (Genesis sends Quadrants'
messages to its logger that way, and restores them with `_get_logging`). The module's class turns such an
assignment into a redirect, so the functions this package calls keep their signature (`tag=`) and forward
the tagged message to the program's function.
"""

from __future__ import annotations

import logging
import sys
import types
from collections.abc import Callable
from typing import Any

_TRACE_NO = 5
logging.addLevelName(_TRACE_NO, "TRACE")
LEVELS = {
    "trace": _TRACE_NO,
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "warn": logging.WARNING,
    "error": logging.ERROR,
    "critical": logging.CRITICAL,
}
_SHORT = {_TRACE_NO: "T", logging.DEBUG: "D", logging.INFO: "I", logging.WARNING: "W", logging.ERROR: "E",
          logging.CRITICAL: "C"}  # fmt: skip

logger = logging.getLogger("quadrants")


class _Formatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        tag = getattr(record, "tag", "")
        tag_s = f" [{tag}]" if tag else ""
        return f"[Quadrants] [{_SHORT.get(record.levelno, '?')}]{tag_s} {record.getMessage()}"


class _StderrHandler(logging.StreamHandler):  # type: ignore[type-arg]
    """Writes to the *current* sys.stderr, so pytest's capsys/capfd see the messages."""

    def emit(self, record: logging.LogRecord) -> None:
        self.stream = sys.stderr
        super().emit(record)


_handler = _StderrHandler()
_handler.setFormatter(_Formatter())
logger.addHandler(_handler)
logger.propagate = False
logger.setLevel(logging.INFO)


def set_level(name: str) -> None:
    logger.setLevel(LEVELS[name])


# Quadrants' level names (strings, as qd.init(log_level=...) takes them)
DEBUG, TRACE, INFO, WARN, ERROR, CRITICAL = "debug", "trace", "info", "warn", "error", "critical"
supported_log_levels = [DEBUG, TRACE, INFO, WARN, ERROR, CRITICAL]

# level name -> the program's function that replaced ours (see _RedirectingModule)
_redirects: dict[str, Callable[..., Any]] = {}


def _emit(level: str, msg: str, tag: str) -> None:
    target = _redirects.get(level)
    if target is not None:
        target(f"[{tag}] {msg}" if tag else msg)
    else:
        logger.log(LEVELS[level], msg, extra={"tag": tag})


def trace(msg: str, tag: str = "") -> None:
    _emit(TRACE, msg, tag)


def debug(msg: str, tag: str = "") -> None:
    _emit(DEBUG, msg, tag)


def info(msg: str, tag: str = "") -> None:
    _emit(INFO, msg, tag)


def warn(msg: str, tag: str = "") -> None:
    _emit(WARN, msg, tag)


def error(msg: str, tag: str = "") -> None:
    _emit(ERROR, msg, tag)


def critical(msg: str, tag: str = "") -> None:
    _emit(CRITICAL, msg, tag)


_OWN = {TRACE: trace, DEBUG: debug, INFO: info, WARN: warn, ERROR: error, CRITICAL: critical}


def _get_logging(name: str) -> Callable[..., None]:
    """Quadrants' logger function for a level: `f(msg, *args, **kwargs)` logs `msg.format(*args, **kwargs)`.
    Assigning it back to `qd._logging.<level>` ends a redirect."""

    def log(msg: str, *args: Any, **kwargs: Any) -> None:
        if logger.isEnabledFor(LEVELS[name]):
            _emit(name, msg.format(*args, **kwargs) if args or kwargs else msg, "")

    log._qd_level = name  # type: ignore[attr-defined]
    return log


def set_logging_level(level: str) -> None:
    set_level(level)


def is_logging_effective(level: str) -> bool:
    return logger.isEnabledFor(LEVELS[level])


class _RedirectingModule(types.ModuleType):
    """`qd._logging.warn = f` redirects this package's warnings to `f` (our `warn` stays, so internal calls
    keep `tag=`); assigning one of `_get_logging`'s functions, or ours, ends the redirect."""

    def __setattr__(self, name: str, value: Any) -> None:
        if name in _OWN and callable(value):
            if value is _OWN[name] or getattr(value, "_qd_level", None) is not None:
                _redirects.pop(name, None)
            else:
                _redirects[name] = value
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _RedirectingModule
