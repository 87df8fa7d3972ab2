"""SciPy, imported on first use with an error that names the extra to install (qd.linalg's one dependency)."""

from __future__ import annotations

from typing import Any


def sparse() -> Any:
    """`scipy.sparse`."""
    try:
        import scipy.sparse
    except ImportError:
        raise ImportError(
            "qd.linalg's sparse matrices need SciPy: pip install 'quadrants-fastcache[linalg]' (or scipy)"
        ) from None
    return scipy.sparse


def sparse_linalg() -> Any:
    """`scipy.sparse.linalg`."""
    sparse()
    import scipy.sparse.linalg

    return scipy.sparse.linalg
