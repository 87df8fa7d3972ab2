"""`@qd.data_oriented`: classes whose kernels and funcs read members as `self.x`.

Marks the class; the kernel-call path flattens an instance's members (lang/args.py): ndarray members become
runtime arguments, fields and primitive members are compiled in (primitives by value, so changing one
recompiles) - unless `template_primitives=False`, where primitives are runtime scalar arguments instead.
"""

from __future__ import annotations

from typing import Any


def data_oriented(cls: Any = None, *, template_primitives: bool = True) -> Any:
    def mark(c: Any) -> Any:
        c._qd_data_oriented = True
        c._qd_template_primitives = template_primitives
        return c

    return mark(cls) if cls is not None else mark


def is_data_oriented(obj: Any) -> bool:
    return bool(getattr(type(obj), "_qd_data_oriented", False))
