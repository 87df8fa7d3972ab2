"""Genesis scenes, headless on the CPU, for comparing this package with real Quadrants: prints one JSON line.

    python scenes.py SCENE [--steps N] [--envs B]      SCENE: box, bodies, franka

- box: a plane and a 0.2 m box dropped from 1 m.
- bodies: a plane, two boxes and two spheres dropped from different heights (they fall, bounce, rest).
- franka: the Franka Panda MJCF from Genesis' assets under a joint-position (PD) controller towards a target
  pose, then a second one (as Genesis' examples/rigid/control_franka.py does).

The JSON holds each entity's base position and quaternion (and the Franka's joint positions), the seconds from
`import genesis` to the scene built and to the first step done, and steps per second of the rest.
"""

import argparse
import json
import time

t0 = time.perf_counter()
import genesis as gs  # noqa: E402
import numpy as np  # noqa: E402


def build_box(scene):
    scene.add_entity(gs.morphs.Plane())
    return {"box": scene.add_entity(gs.morphs.Box(pos=(0.0, 0.0, 1.0), size=(0.2, 0.2, 0.2)))}


def build_bodies(scene):
    scene.add_entity(gs.morphs.Plane())
    return {
        "box1": scene.add_entity(gs.morphs.Box(pos=(0.0, 0.0, 0.6), size=(0.2, 0.2, 0.2), euler=(0, 0, 30))),
        "box2": scene.add_entity(gs.morphs.Box(pos=(0.6, 0.1, 1.0), size=(0.1, 0.3, 0.2), euler=(20, 10, 0))),
        "ball1": scene.add_entity(gs.morphs.Sphere(pos=(-0.5, 0.2, 0.8), radius=0.1)),
        "ball2": scene.add_entity(gs.morphs.Sphere(pos=(0.02, 0.03, 1.5), radius=0.08)),
    }


FRANKA_JOINTS = ("joint1", "joint2", "joint3", "joint4", "joint5", "joint6", "joint7", "finger_joint1",
                 "finger_joint2")  # fmt: skip


def build_franka(scene):
    scene.add_entity(gs.morphs.Plane())
    return {"franka": scene.add_entity(gs.morphs.MJCF(file="xml/franka_emika_panda/panda.xml"))}


def control_franka(franka, step):
    dofs = [franka.get_joint(name).dofs_idx_local[0] for name in FRANKA_JOINTS]
    if step == 0:
        franka.set_dofs_kp(np.array([4500, 4500, 3500, 3500, 2000, 2000, 2000, 100, 100]), dofs)
        franka.set_dofs_kv(np.array([450, 450, 350, 350, 200, 200, 200, 10, 10]), dofs)
        franka.set_dofs_force_range(np.array([-87, -87, -87, -87, -12, -12, -12, -100, -100]),
                                    np.array([87, 87, 87, 87, 12, 12, 12, 100, 100]), dofs)  # fmt: skip
        franka.control_dofs_position(np.array([1, 1, 0, 0, 0, 0, 0, 0.04, 0.04]), dofs)
    elif step == 100:
        franka.control_dofs_position(np.array([-1, 0.8, 1, -2, 1, 0.5, -0.5, 0.04, 0.04]), dofs)


SCENES = {"box": (build_box, None, 0.01), "bodies": (build_bodies, None, 0.01),
          "franka": (build_franka, control_franka, 0.01)}  # fmt: skip


BACKENDS = ("cpu", "gpu", "gpu-emulated")


def _quadrants_seconds():
    """Seconds spent inside quadrants so far (this package only): importing its own modules (not numpy, which
    Genesis imports too), qd.init, and the kernels' first calls up to their runs (specializing, cache lookups,
    loading; compiling where something compiles)."""
    import quadrants as qd

    if not hasattr(qd, "stats"):
        return None
    st = qd.stats()["stage_seconds"]
    return round(st.get("import", 0) + st.get("init", 0) + st.get("prepare", 0), 3)


def run_scene(name: str, steps: int, envs: int = 0, backend: str = "cpu"):
    """Build the scene `name` (`envs` batched environments) and step it `steps` times: its entities, the
    perf_counter times when it was built, when the first step was done and at the end, and the seconds inside
    quadrants up to the first step. `backend`: one of BACKENDS: "cpu", "gpu" (gs.gpu: an NVIDIA GPU) or
    "gpu-emulated" (gs.gpu on the emulated CUDA backend)."""
    build, control, dt = SCENES[name]
    if backend == "gpu-emulated":
        import genesis_emulated_gpu  # noqa: F401  (gs.init(backend=gs.gpu) on the CUDA emulator)
    elif backend == "gpu":
        import genesis_gpu  # noqa: F401  (gs.init(backend=gs.gpu): an NVIDIA GPU)
    else:
        import genesis_cpu  # noqa: F401  (gs.init, as the manifest's first module does it)

    scene = gs.Scene(sim_options=gs.options.SimOptions(dt=dt), show_viewer=False)
    entities = build(scene)
    scene.build(n_envs=envs)
    t_built = time.perf_counter()
    t_first, first = t_built, None
    for i in range(steps):
        if control is not None:
            control(*entities.values(), i)
        scene.step()
        if i == 0:
            t_first = time.perf_counter()
            first = _quadrants_seconds()
    return entities, t_built, t_first, time.perf_counter(), first


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("scene", choices=sorted(SCENES))
    ap.add_argument("--steps", type=int, default=100)
    ap.add_argument("--envs", type=int, default=0, help="build B parallel environments (batched state)")
    ap.add_argument("--summary", action="store_true", help="a readable summary after the JSON line")
    ap.add_argument("--backend", choices=BACKENDS, default="cpu",
                    help="gpu: gs.gpu on an NVIDIA GPU; gpu-emulated: gs.gpu, Genesis' CUDA code paths on quadrants' "
                         "CUDA emulator")  # fmt: skip
    args = ap.parse_args()
    entities, t_built, t_first, t_end, first = run_scene(args.scene, args.steps, args.envs, args.backend)
    out = {name: {"pos": e.get_pos().tolist(), "quat": e.get_quat().tolist()} for name, e in entities.items()}
    if args.scene == "franka":
        out["franka"]["qpos"] = entities["franka"].get_qpos().tolist()
    out["times"] = {"import_to_build_s": round(t_built - t0, 3), "import_to_first_step_s": round(t_first - t0, 3),
                    "steps_per_s": round((args.steps - 1) / (t_end - t_first), 1) if args.steps > 1 else None}
    import quadrants as qd

    if hasattr(qd, "stats"):  # this package: what the start cost inside quadrants
        import sys

        st = qd.stats()
        out["quadrants"] = {"compiles": st.get("compiles"), "cache": st.get("cache"),
                            "ptx_checked": st.get("ptx_checked"),  # QD_PTX_CHECK: also assembled by ptxas
                            "stage_seconds": {k: round(v, 3) for k, v in st.get("stage_seconds", {}).items()},
                            # llvmlite is in every Genesis process (Genesis imports numba, which imports it);
                            # quadrants' own compiler modules are loaded only where something compiled
                            "codegen_loaded": sorted(m for m in sys.modules if m.startswith("quadrants.codegen")),
                            "llvmlite_imported": "llvmlite" in sys.modules,
                            "seconds_to_first_step": first}  # fmt: skip
    print(json.dumps(out))
    if args.summary:
        t, q = out["times"], out.get("quadrants")
        print(f"{args.scene}: import genesis -> first step {t['import_to_first_step_s']:.2f} s, "
              f"{t['steps_per_s']} steps/s after it", end="")  # fmt: skip
        if q is not None:
            c = q["cache"]
            print(f"; quadrants: {q['seconds_to_first_step']:.3f} s to the first step, {q['compiles']} compiles, "
                  f"{c['fastcache_hits']} fastcache hits, {c['offline_hits']} offline-cache hits, compiler modules "
                  f"loaded: {', '.join(q['codegen_loaded']) or 'none'}", end="")  # fmt: skip
        print()


if __name__ == "__main__":
    main()
