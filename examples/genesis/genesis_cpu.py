"""Genesis on the CPU, initialized as the scenes run it: importing this module calls `gs.init` once.

It is the manifest's first module (qd.toml), so `qd precompile` imports Genesis' kernel modules (which refuse to
import before `gs.init`) under the same `qd.init` options as the scenes, and the fastcache keys it fills are the
ones a scene looks up.
"""

import genesis as gs

if not gs._initialized:
    gs.init(backend=gs.cpu, logging_level="warning", seed=0)
