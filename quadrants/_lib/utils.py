"""`qd._lib.utils`: `import_qd_python_core()`, Quadrants' handle on its native core, for the few questions
programs ask it (the package version, the per-user data folder)."""

from __future__ import annotations

import os
import types


def _version() -> tuple[int, int, int]:
    from quadrants._version import __version__

    parts = [int(p) for p in __version__.split(".")[:3] if p.isdigit()]
    return (parts + [0, 0, 0])[0], (parts + [0, 0, 0])[1], (parts + [0, 0, 0])[2]


def _process_env(name: str) -> str:
    """A variable of the process environment as native code sees it (C `getenv`: also what `os.putenv` set)."""
    import ctypes

    getenv = ctypes.CDLL(None).getenv
    getenv.restype = ctypes.c_char_p
    value = getenv(name.encode())
    return value.decode() if value else os.environ.get(name, "")


def get_repo_dir() -> str:
    """Quadrants' per-user data folder: `$XDG_CACHE_HOME/quadrants/`, else `~/.cache/quadrants/`."""
    base = _process_env("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "quadrants") + os.sep


def import_qd_python_core() -> types.SimpleNamespace:
    major, minor, patch = _version()
    return types.SimpleNamespace(get_version_major=lambda: major, get_version_minor=lambda: minor,
                                 get_version_patch=lambda: patch, get_repo_dir=get_repo_dir)  # fmt: skip
