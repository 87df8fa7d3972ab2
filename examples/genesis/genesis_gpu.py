"""Genesis on an NVIDIA GPU, initialized as the scenes run it: importing this module calls
`gs.init(backend=gs.gpu)` once, with the options genesis_emulated_gpu.py gives it on the emulator (the
manifest qd-cuda.toml was recorded there, so its static configuration and keys are the ones this process looks up).
"""

import genesis as gs

if not gs._initialized:
    gs.init(backend=gs.gpu, logging_level="warning", seed=0)
