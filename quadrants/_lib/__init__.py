"""`qd._lib`: the names programs reach in Quadrants' native extension module (`qd._lib.core.Arch(...)`,
`qd._lib.utils.import_qd_python_core()`). There is no native core here: these are small Python stand-ins over
the package's own settings and types (`core.py`, `utils.py`)."""

from quadrants._lib import core, utils  # noqa: F401
