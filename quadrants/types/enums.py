"""Quadrants' autodiff enums (`quadrants.types.enums`): the mode a kernel object compiles in, and the kinds of
gradient companion a field can have. Plain Python enums: nothing in the compiler reads them (the kernel's
`mode` string does), they exist so that programs written for Quadrants can name them."""

from __future__ import annotations

import enum


class AutodiffMode(enum.Enum):
    NONE = 0
    VALIDATION = 1
    FORWARD = 2
    REVERSE = 3


class SNodeGradType(enum.Enum):
    PRIMAL = 0
    ADJOINT = 1
    DUAL = 2
    ADJOINT_CHECKBIT = 3
