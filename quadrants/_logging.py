"""Logging with stable tags: every message is `[Quadrants] [LEVEL] [tag] text` on stderr.

Tags (`frontend`, `fastcache`, `purity`, `cache`, `runtime`, `init`) are part of the interface: tests and
users grep for them. The level comes from `qd.init(log_level=...)` / `QD_LOG_LEVEL`.
"""

from __future__ import annotations

import logging
import sys

TRACE = 5
logging.addLevelName(TRACE, "TRACE")
LEVELS = {
    "trace": TRACE,
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "warn": logging.WARNING,
    "error": logging.ERROR,
    "critical": logging.CRITICAL,
}
_SHORT = {TRACE: "T", logging.DEBUG: "D", logging.INFO: "I", logging.WARNING: "W", logging.ERROR: "E",
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


def debug(msg: str, tag: str = "") -> None:
    logger.debug(msg, extra={"tag": tag})


def info(msg: str, tag: str = "") -> None:
    logger.info(msg, extra={"tag": tag})


def warn(msg: str, tag: str = "") -> None:
    logger.warning(msg, extra={"tag": tag})


def error(msg: str, tag: str = "") -> None:
    logger.error(msg, extra={"tag": tag})
