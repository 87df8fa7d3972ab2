"""Genesis on the CUDA backend emulated on the CPU: `gs.init(backend=gs.gpu)` on a machine without a GPU.

Importing this module calls `gs.init` once, as genesis_cpu.py does for the CPU, after emulated_gpu.install()
(torch on the CPU, quadrants' CUDA backend on its emulator). It is the first module of qd-cuda.toml, so that
`qd precompile` imports Genesis' kernel modules under the static configuration a GPU process has.
"""

import emulated_gpu
import genesis as gs

emulated_gpu.install()
if not gs._initialized:
    gs.init(backend=gs.gpu, logging_level="warning", seed=0)
