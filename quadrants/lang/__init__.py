"""User-facing objects: `qd.init`, `@qd.kernel`, ndarrays. Built on the driver and the runtime."""

from quadrants.lang import (
    _template_mapper,  # noqa: F401  - `qd.lang._template_mapper`, as in Quadrants
    util,  # noqa: F401  - `qd.lang.util` without importing it, as in Quadrants
)


def __getattr__(name: str) -> object:
    """`qd.lang.ops`, `qd.lang.kernel_impl` and `qd.lang.mesh`, imported on first use (Quadrants' module paths;
    the kernel language needs none of them)."""
    if name in ("ops", "kernel_impl", "mesh"):
        import importlib

        return importlib.import_module(f"quadrants.lang.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
