"""Typed IR: node classes (`nodes`), the builder, the printer and the verifier."""

from quadrants.ir.nodes import *  # noqa: F401,F403
from quadrants.ir.printer import format_kernel  # noqa: F401
from quadrants.ir.verifier import IRVerifyError, verify  # noqa: F401
