"""Genesis' `gs.gpu` on quadrants' CUDA emulator, for a machine without a GPU: `install()` before `gs.init`.

Genesis asks torch for a CUDA device before it picks the CUDA backend; here torch's device is the CPU (Genesis'
own `GS_TORCH_FORCE_CPU_DEVICE` mode, which it otherwise enters only after finding a GPU), and quadrants runs the
CUDA backend's code on the CPU emulator (QD_CUDA_EMULATE=1): the tiled solver kernels, `qd.simt` shared memory
and barriers, `qd.graph_do_while`, all as Genesis runs them on a GPU.
"""

import os

import genesis as gs

_get_device = gs.get_device


def _emulated_gpu(backend, device_idx=None):
    if backend in (gs.gpu, gs.cuda):
        device, _name, total_mem, _ = _get_device(gs.cpu)
        return device, "CUDA emulated on the CPU", total_mem, gs.cuda
    return _get_device(backend, device_idx)


def install() -> None:
    """Make the next `gs.init(backend=gs.gpu)` take the CUDA backend on the emulator (idempotent)."""
    os.environ.setdefault("QD_CUDA_EMULATE", "1")
    gs.get_device = _emulated_gpu
