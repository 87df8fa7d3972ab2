"""The PTX ISA the CUDA backend emits for each GPU architecture (a module of its own: the cache keys read it
without importing llvmlite).

PTX 8.0 (CUDA 12.0 drivers and newer load it; ptxas of CUDA 12 and 13 accept it) for every architecture that
it knows; the newer architectures need the ISA that introduced them (LLVM's NVPTX backend refuses to emit an
older one, and aborts the process doing so, so `ptx_isa` is asked first and an architecture it does not know
past the table is refused with a Python error). A GPU of such an architecture has a driver that loads it.
"""

from __future__ import annotations

import re

PTX_ISA = 80  # the default, and every architecture below the first in NEWER_ISA
NEWER_ISA = {100: 86, 101: 86, 120: 87, 103: 88, 121: 88}  # sm -> the first PTX ISA (x10) that has it
KNOWN_UP_TO = 121  # the newest architecture this table was written for


def sm_number(arch: str) -> int:
    """`sm_80` / `80` / `8.0` -> 80 (ValueError otherwise)."""
    m = re.fullmatch(r"(?:sm_|compute_)?(\d)\.?(\d+)[af]?", arch.strip())
    if m is None:
        raise ValueError(f"{arch!r} is not a GPU architecture (expected sm_80, sm_90, sm_120, ...)")
    return int(m.group(1) + m.group(2))


def ptx_isa(arch: str) -> int:
    """The PTX ISA (x10: 80 is PTX 8.0) emitted for `arch`; ValueError for an architecture past the table."""
    sm = sm_number(arch)
    if sm > KNOWN_UP_TO and sm not in NEWER_ISA:
        raise ValueError(f"sm_{sm} is newer than the GPU architectures this version knows the PTX ISA of "
                         f"(up to sm_{KNOWN_UP_TO}): compile for sm_{KNOWN_UP_TO} or older, whose PTX a newer GPU "
                         "loads")  # fmt: skip
    return max(PTX_ISA, NEWER_ISA.get(sm, PTX_ISA))
