"""`qd.experimental`: names that were experimental in Quadrants and are now elsewhere, kept with a warning."""

from __future__ import annotations

import warnings
from typing import Any

from quadrants.lang.compat import real_func as _real_func


def real_func(fn: Any) -> Any:
    """`@qd.experimental.real_func`: `@qd.real_func`, with Quadrants' DeprecationWarning."""
    warnings.warn("qd.experimental.real_func is deprecated because it is no longer experimental. Use qd.real_func "
                  "instead.", DeprecationWarning, stacklevel=2)  # fmt: skip
    return _real_func(fn)


__all__ = ["real_func"]
