"""A plane and a box falling onto it, stepped headless on the CPU; prints the box's position.

    python falling_box.py [steps]

Runs unmodified Genesis on whichever `quadrants` is installed (this package, or real Quadrants 0.5.2), so the
two can be compared; the last line is JSON: the box's position, and the seconds from `import genesis` to the
first step done.
"""

import json
import sys
import time

t0 = time.perf_counter()
import genesis as gs  # noqa: E402

steps = int(sys.argv[1]) if len(sys.argv) > 1 else 100
gs.init(backend=gs.cpu, logging_level="warning")
scene = gs.Scene(show_viewer=False)
scene.add_entity(gs.morphs.Plane())
box = scene.add_entity(gs.morphs.Box(pos=(0.0, 0.0, 1.0), size=(0.2, 0.2, 0.2)))
scene.build()
t_built = time.perf_counter()
scene.step()
t_first = time.perf_counter()
for _ in range(steps - 1):
    scene.step()
t_end = time.perf_counter()
pos = box.get_pos().tolist()
print(json.dumps({"pos": pos, "quat": box.get_quat().tolist(), "import_to_build_s": round(t_built - t0, 3),
                  "import_to_first_step_s": round(t_first - t0, 3),
                  "steps_per_s": round((steps - 1) / (t_end - t_first), 1) if steps > 1 else None}))
