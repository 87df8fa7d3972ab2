"""Example arguments for the manifest (qd.toml): what `qd precompile` calls the kernels with.

The grid size is compiled into the kernels (`Params.n`), so these build the 64x64 cloth `run.py` simulates.
"""

from __future__ import annotations

N = 64


def cloth():
    from cloth.model import Cloth

    return Cloth(N)


def params():
    return cloth().params
