"""`qd.interop`: sharing a device queue with another framework, as Quadrants' module of that name.

Quadrants' one entry, `get_mps_command_queue()`, hands PyTorch's Metal (MPS) command queue to `qd.init(arch=
qd.metal, ...)`. This package has no Metal backend, so there is never a queue to share: it returns 0, which is what
Quadrants returns wherever it cannot extract one (any platform but macOS, torch without MPS)."""


def get_mps_command_queue() -> int:
    """PyTorch MPS's `MTLCommandQueue*` as an integer: always 0 here (no Metal backend)."""
    return 0
