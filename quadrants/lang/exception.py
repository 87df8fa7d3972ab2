"""`quadrants.lang.exception`: where Quadrants defines its exception classes, which programs import from there
(`except qd.lang.exception.QuadrantsCompilationError`). The classes themselves live in `quadrants.errors`."""

from quadrants.errors import (  # noqa: F401
    QuadrantsAssertionError,
    QuadrantsCompilationError,
    QuadrantsIndexError,
    QuadrantsNameError,
    QuadrantsRuntimeError,
    QuadrantsRuntimeTypeError,
    QuadrantsSyntaxError,
    QuadrantsTypeError,
)

__all__ = [
    "QuadrantsAssertionError",
    "QuadrantsCompilationError",
    "QuadrantsIndexError",
    "QuadrantsNameError",
    "QuadrantsRuntimeError",
    "QuadrantsRuntimeTypeError",
    "QuadrantsSyntaxError",
    "QuadrantsTypeError",
]
