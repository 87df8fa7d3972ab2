"""User-facing objects: `qd.init`, `@qd.kernel`, ndarrays. Built on the driver and the runtime."""

from quadrants.lang import (
    _template_mapper,  # noqa: F401  - `qd.lang._template_mapper`, as in Quadrants
    util,  # noqa: F401  - `qd.lang.util` without importing it, as in Quadrants
)


def __getattr__(name: str) -> object:
    """`qd.lang.ops`, imported on first use (the kernel language needs no module of its own for it)."""
    if name == "ops":
        import importlib

        return importlib.import_module("quadrants.lang.ops")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
