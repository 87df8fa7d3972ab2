"""Compound compile-time values of the frontend: a fixed-length vector of scalar values.

A `Vector` never reaches the IR as such: it is a Python list of IR scalars (or Python numbers) that the
visitor expands element by element, so vectors live in registers and cost nothing at run time.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(eq=False)
class Vector:
    elements: list[Any]

    def __len__(self) -> int:
        return len(self.elements)

    def unpack_values(self) -> list[Any]:
        return list(self.elements)

    def __repr__(self) -> str:
        return f"Vector({self.elements!r})"
