"""User-facing objects: `qd.init`, `@qd.kernel`, ndarrays. Built on the driver and the runtime."""

from quadrants.lang import (
    _template_mapper,  # noqa: F401  - `qd.lang._template_mapper`, as in Quadrants
    util,  # noqa: F401  - `qd.lang.util` without importing it, as in Quadrants
)
