"""Genesis' non-rigid solvers, one small headless scene each, for comparing this package with real Quadrants.

    python solvers.py SCENE [--steps N]          prints one JSON line: a state summary of each entity
    python solvers.py --list                     the scene names
    python solvers.py SCENE --perturb EPS        the same, every body placed EPS metres off on each axis

Each scene is a few hundred particles / elements, a few steps, on the CPU backend
(32-bit, but 64 for the SAP coupler, which refuses 32). The summary of
a particle or FEM entity is the mean, minimum and maximum of its positions per axis (and the mean speed); of a
rigid body, its position and quaternion; of the SF grid, the sum and maximum of the smoke density. Summaries are
what `tests/examples/test_genesis_solvers.py` compares with real Quadrants 0.5.2's (`solvers_ref.json`, written
by `--record examples/genesis/solvers_ref.json` on a venv with real Quadrants). `--record` with `--perturb`
stores the run under the scene's "perturbed" runs instead: how far 0.5.2 moves from its own summary when the
bodies start EPS off (a few float ulps) says how well-conditioned each number is (the contact speed of a body
coming to rest is not: a cube on the SAP coupler moved 1e-12 m ends step 10 with 3x the mean speed); the test
accepts a difference within twice that spread.
"""

import argparse
import json
import time
from pathlib import Path

t0 = time.perf_counter()
import genesis as gs  # noqa: E402
import numpy as np  # noqa: E402


def _scene(**options):
    return gs.Scene(show_viewer=False, **options)


def _mpm(material):
    def build():
        scene = _scene(sim_options=gs.options.SimOptions(dt=4e-3, substeps=10),
                       mpm_options=gs.options.MPMOptions(lower_bound=(-0.3, -0.3, -0.1), upper_bound=(0.3, 0.3, 0.5),
                                                         grid_density=32))  # fmt: skip
        scene.add_entity(gs.morphs.Plane())
        block = scene.add_entity(material=material(sampler="regular"),
                                 morph=gs.morphs.Box(pos=(0.0, 0.0, 0.09), size=(0.15, 0.15, 0.15)))  # fmt: skip
        return scene, {"block": block}

    return build


def _sph(pressure_solver):
    def build():
        scene = _scene(sim_options=gs.options.SimOptions(dt=4e-3, substeps=10),
                       sph_options=gs.options.SPHOptions(lower_bound=(-0.3, -0.3, 0.0), upper_bound=(0.3, 0.3, 0.6),
                                                         particle_size=0.03, pressure_solver=pressure_solver))  # fmt: skip
        scene.add_entity(gs.morphs.Plane())
        water = scene.add_entity(material=gs.materials.SPH.Liquid(sampler="regular"),
                                 morph=gs.morphs.Box(pos=(0.0, 0.0, 0.12), size=(0.2, 0.2, 0.2)))  # fmt: skip
        return scene, {"water": water}

    return build


def _pbd_options(**kw):
    return gs.options.PBDOptions(lower_bound=(-0.6, -0.6, 0.0), upper_bound=(0.6, 0.6, 1.0), **kw)


def build_pbd_cloth():
    scene = _scene(sim_options=gs.options.SimOptions(dt=4e-3, substeps=10), pbd_options=_pbd_options())
    scene.add_entity(gs.morphs.Plane())
    cloth = scene.add_entity(material=gs.materials.PBD.Cloth(),
                             morph=gs.morphs.Mesh(file="meshes/cloth.obj", scale=0.5, pos=(0.0, 0.0, 0.05)))  # fmt: skip
    return scene, {"cloth": cloth}


def build_pbd_elastic():
    scene = _scene(sim_options=gs.options.SimOptions(dt=4e-3, substeps=10), pbd_options=_pbd_options())
    scene.add_entity(gs.morphs.Plane())
    body = scene.add_entity(material=gs.materials.PBD.Elastic(),
                            morph=gs.morphs.Box(pos=(0.0, 0.0, 0.12), size=(0.2, 0.2, 0.2)))  # fmt: skip
    return scene, {"body": body}


def build_pbd_liquid():
    scene = _scene(sim_options=gs.options.SimOptions(dt=2e-3, substeps=2),
                   pbd_options=_pbd_options(particle_size=0.03, max_density_solver_iterations=5,
                                            max_viscosity_solver_iterations=1))  # fmt: skip
    scene.add_entity(gs.morphs.Plane())
    liquid = scene.add_entity(material=gs.materials.PBD.Liquid(sampler="regular", rho=1.0, density_relaxation=1.0,
                                                               viscosity_relaxation=0.0),
                              morph=gs.morphs.Box(pos=(0.0, 0.0, 0.12), size=(0.2, 0.2, 0.2)))  # fmt: skip
    return scene, {"liquid": liquid}


def build_pbd_particles():
    scene = _scene(sim_options=gs.options.SimOptions(dt=4e-3, substeps=4), pbd_options=_pbd_options(particle_size=0.03))
    scene.add_entity(gs.morphs.Plane())
    grains = scene.add_entity(material=gs.materials.PBD.Particle(sampler="regular"),
                              morph=gs.morphs.Box(pos=(0.0, 0.0, 0.12), size=(0.2, 0.2, 0.2)))  # fmt: skip
    return scene, {"grains": grains}


def _fem(implicit, sap=False):
    def build():
        options = {"fem_options": gs.options.FEMOptions(use_implicit_solver=implicit)}
        if sap:
            options["coupler_options"] = gs.options.SAPCouplerOptions()
        scene = _scene(sim_options=gs.options.SimOptions(dt=1 / 60 if implicit else 1e-3, substeps=2 if implicit else 5),
                       **options)  # fmt: skip
        if not sap:
            scene.add_entity(gs.morphs.Plane())
        model = "linear_corotated" if sap else "linear" if implicit else "stable_neohookean"
        cube = scene.add_entity(material=gs.materials.FEM.Elastic(E=1e5, nu=0.4, model=model),
                                morph=gs.morphs.Box(pos=(0.0, 0.0, 0.06), size=(0.1, 0.1, 0.1)))  # fmt: skip
        return scene, {"cube": cube}

    return build


def build_sf_smoke():
    import quadrants as qd

    @qd.data_oriented
    class Jet:
        def __init__(self, center, radius):
            self.center = qd.Vector(center)
            self.radius = radius

        @qd.func
        def get_factor(self, i: int, j: int, k: int, dx: float, t: float):
            ijk = qd.Vector([i, j, k], dt=gs.qd_float) * dx
            factor = 0.0
            if (ijk - self.center).norm(gs.EPS) < self.radius:
                factor = 1.0
            return factor

        @qd.func
        def get_tan_dir(self, t: float):
            return qd.Vector([0.0, 0.0, 1.0], dt=gs.qd_float)

    scene = _scene(sim_options=gs.options.SimOptions(dt=1e-2), sf_options=gs.options.SFOptions(res=16, solver_iters=20,
                                                                                                decay=0.025))  # fmt: skip
    scene.sim.solvers[-1].set_jets([Jet([0.5, 0.5, 0.3], 0.15)])
    return scene, {"smoke": "sf"}


def build_tool():
    scene = _scene(sim_options=gs.options.SimOptions(dt=4e-3, substeps=10),
                   mpm_options=gs.options.MPMOptions(lower_bound=(-0.3, -0.3, -0.1), upper_bound=(0.3, 0.3, 0.5),
                                                     grid_density=32))  # fmt: skip
    tool = scene.add_entity(material=gs.materials.Tool(friction=1.0),
                            morph=gs.morphs.Mesh(file="meshes/sphere.obj", scale=0.05, pos=(0.0, 0.0, 0.2),
                                                 euler=(0, 0, 0), convexify=False))  # fmt: skip
    block = scene.add_entity(material=gs.materials.MPM.Elastic(sampler="regular"), morph=gs.morphs.Box(pos=(0.0, 0.0, 0.09),
                                                                                      size=(0.15, 0.15, 0.15)))  # fmt: skip
    return scene, {"tool": tool, "block": block}


def build_diff_push():
    """Genesis' differentiable push (its tests/test_grad.py): a tool stirs an MPM block in 2 environments; the loss
    reads particle positions mid-way and the block's late; `scene.backward` runs through `loss.backward()` (the
    regular particle sampler: the default one needs vtk)."""
    scene = _scene(sim_options=gs.options.SimOptions(dt=2e-3, substeps=10, requires_grad=True),
                   mpm_options=gs.options.MPMOptions(lower_bound=(0.0, -1.0, 0.0), upper_bound=(1.0, 1.0, 0.55)))  # fmt: skip
    scene.add_entity(gs.morphs.URDF(file="urdf/plane/plane.urdf", fixed=True))
    stick = scene.add_entity(morph=gs.morphs.Mesh(file="meshes/stirrer.obj", scale=0.6, pos=(0.5, 0.5, 0.05),
                                                  euler=(90.0, 0.0, 0.0)), material=gs.materials.Tool(friction=8.0))  # fmt: skip
    block = scene.add_entity(morph=gs.morphs.Box(lower=(0.2, 0.1, 0.05), upper=(0.4, 0.3, 0.15)),
                             material=gs.materials.MPM.Elastic(rho=500, sampler="regular"))  # fmt: skip
    return scene, {"stick": stick, "block": block}


def run_diff_push(scene, entities, steps):
    """Forward `steps` steps from set tool and block states, then backward: the loss and every input's gradient."""
    import torch

    stick, block = entities["stick"], entities["block"]
    init_pos = gs.tensor([[0.3, 0.1, 0.28], [0.3, 0.1, 0.5]], requires_grad=True)
    stick.set_position(init_pos)
    pos_block = gs.tensor([0.3, 0.3, 0.1], requires_grad=True)
    block.set_position(pos_block)
    v_block = gs.tensor([0.0, -1.0, 0.0], requires_grad=True)
    block.set_velocity(v_block)
    goal = gs.tensor([0.5, 0.8, 0.05])
    loss, v_list = 0.0, []
    for i in range(steps):
        v_i = gs.tensor([[0.0, 1.0, 0.0], [0.0, 1.0, 0.0]], requires_grad=True)
        stick.set_velocity(vel=v_i)
        v_list.append(v_i)
        scene.step()
        if i == steps // 2:
            particles = scene.get_state().solvers_state[scene.solvers.index(scene.mpm_solver)]
            loss += torch.pow(particles.pos[particles.active == 1] - goal, 2).sum()
        if i == steps - 2:
            loss += torch.pow(block.get_state().pos - goal, 2).sum()
    loss.backward()
    grads = {f"v{i}": _array(v.grad).tolist() for i, v in enumerate(v_list)}
    return {"loss": float(loss), "grad": grads | {"stick_pos": _array(init_pos.grad).tolist(),
                                                  "block_pos": _array(pos_block.grad).tolist(),
                                                  "block_vel": _array(v_block.grad).tolist()}}  # fmt: skip


_COUPLED_BOX = {"pos": (0.0, 0.0, 0.27), "size": (0.08, 0.08, 0.08)}


def build_rigid_mpm():
    scene = _scene(sim_options=gs.options.SimOptions(dt=4e-3, substeps=10),
                   mpm_options=gs.options.MPMOptions(lower_bound=(-0.3, -0.3, -0.1), upper_bound=(0.3, 0.3, 0.6),
                                                     grid_density=32))  # fmt: skip
    scene.add_entity(gs.morphs.Plane())
    block = scene.add_entity(material=gs.materials.MPM.Elastic(sampler="regular"), morph=gs.morphs.Box(pos=(0.0, 0.0, 0.11),
                                                                                      size=(0.2, 0.2, 0.2)))  # fmt: skip
    box = scene.add_entity(material=gs.materials.Rigid(needs_coup=True), morph=gs.morphs.Box(**_COUPLED_BOX))
    return scene, {"block": block, "box": box}


def build_rigid_sph():
    scene = _scene(sim_options=gs.options.SimOptions(dt=4e-3, substeps=10),
                   sph_options=gs.options.SPHOptions(lower_bound=(-0.3, -0.3, 0.0), upper_bound=(0.3, 0.3, 0.6),
                                                     particle_size=0.03))  # fmt: skip
    scene.add_entity(gs.morphs.Plane())
    water = scene.add_entity(material=gs.materials.SPH.Liquid(sampler="regular"),
                             morph=gs.morphs.Box(pos=(0.0, 0.0, 0.12), size=(0.3, 0.3, 0.2)))  # fmt: skip
    box = scene.add_entity(material=gs.materials.Rigid(needs_coup=True, coup_friction=0.0),
                           morph=gs.morphs.Box(**_COUPLED_BOX))  # fmt: skip
    return scene, {"water": water, "box": box}


def build_rigid_pbd():
    scene = _scene(sim_options=gs.options.SimOptions(dt=4e-3, substeps=10), pbd_options=_pbd_options())
    scene.add_entity(gs.morphs.Plane())
    scene.add_entity(material=gs.materials.Rigid(needs_coup=True, coup_friction=0.2),
                     morph=gs.morphs.Box(pos=(0.0, 0.0, 0.05), size=(0.1, 0.1, 0.1), fixed=True))  # fmt: skip
    cloth = scene.add_entity(material=gs.materials.PBD.Cloth(),
                             morph=gs.morphs.Mesh(file="meshes/cloth.obj", scale=0.5, pos=(0.0, 0.0, 0.12)))  # fmt: skip
    return scene, {"cloth": cloth}


def build_rigid_fem():
    scene = _scene(sim_options=gs.options.SimOptions(dt=1e-3, substeps=5))
    scene.add_entity(gs.morphs.Plane())
    scene.add_entity(material=gs.materials.Rigid(needs_coup=True),
                     morph=gs.morphs.Box(pos=(0.0, 0.0, 0.05), size=(0.1, 0.1, 0.1), fixed=True))  # fmt: skip
    cube = scene.add_entity(material=gs.materials.FEM.Elastic(E=1e5, nu=0.4),
                            morph=gs.morphs.Box(pos=(0.0, 0.0, 0.15), size=(0.08, 0.08, 0.08)))  # fmt: skip
    return scene, {"cube": cube}


# name: (builder, steps by default)
SCENES = {
    "mpm_elastic": (_mpm(gs.materials.MPM.Elastic), 20),
    "mpm_liquid": (_mpm(gs.materials.MPM.Liquid), 20),
    "mpm_sand": (_mpm(gs.materials.MPM.Sand), 20),
    "mpm_snow": (_mpm(gs.materials.MPM.Snow), 20),
    "sph_wcsph": (_sph("WCSPH"), 20),
    "sph_dfsph": (_sph("DFSPH"), 20),
    "pbd_cloth": (build_pbd_cloth, 20),
    "pbd_elastic": (build_pbd_elastic, 20),
    "pbd_liquid": (build_pbd_liquid, 20),
    "pbd_particles": (build_pbd_particles, 20),
    "fem_explicit": (_fem(False), 20),
    "fem_implicit": (_fem(True), 10),
    "fem_sap": (_fem(True, sap=True), 10),
    "sf_smoke": (build_sf_smoke, 5),
    "tool": (build_tool, 20),
    "rigid_mpm": (build_rigid_mpm, 20),
    "rigid_sph": (build_rigid_sph, 20),
    "rigid_pbd": (build_rigid_pbd, 20),
    "rigid_fem": (build_rigid_fem, 20),
    "diff_push": (build_diff_push, 10),
}
# differentiable scenes: built with environments, run by their own function (forward, then backward)
DIFFERENTIABLE = {"diff_push": (2, run_diff_push)}


def _array(x):
    return np.asarray(x.detach().cpu().numpy() if hasattr(x, "detach") else x, dtype=np.float64)


def _points(pos):
    pos = _array(pos).reshape(-1, 3)
    finite = bool(np.isfinite(pos).all())
    return {"n": len(pos), "finite": finite, "mean": pos.mean(0).tolist(), "min": pos.min(0).tolist(),
            "max": pos.max(0).tolist()}  # fmt: skip


def summarize(scene, entities):
    out = {}
    for name, e in entities.items():
        if e == "sf":
            q = scene.sim.solvers[-1].grid.q.to_numpy().astype(np.float64)
            out[name] = {"q_sum": float(q.sum()), "q_max": float(q.max()), "finite": bool(np.isfinite(q).all())}
        elif isinstance(e, gs.engine.entities.RigidEntity):
            out[name] = {"pos": _array(e.get_pos()).tolist(), "quat": _array(e.get_quat()).tolist()}
        elif isinstance(e, gs.engine.entities.FEMEntity):
            state = e.get_state()
            speed = np.linalg.norm(_array(state.vel).reshape(-1, 3), axis=1).mean()
            out[name] = _points(state.pos) | {"speed": float(speed)}
        elif isinstance(e, gs.engine.entities.ToolEntity):
            state = e.get_state()
            out[name] = {"pos": _array(state.pos).reshape(-1).tolist(), "quat": _array(state.quat).reshape(-1).tolist()}
        else:
            vel = _array(e.get_particles_vel()).reshape(-1, 3)
            out[name] = _points(e.get_particles_pos()) | {"speed": float(np.linalg.norm(vel, axis=1).mean())}
    return out


def _perturb(eps):
    """Every morph but the ground plane placed `eps` metres off on each axis."""
    init = gs.options.morphs.Morph.__init__

    def shifted(self, /, **data):
        if "pos" in data and not isinstance(self, gs.morphs.Plane):
            data["pos"] = tuple(float(c) + eps for c in data["pos"])
        init(self, **data)

    gs.options.morphs.Morph.__init__ = shifted


def run(name, steps, perturb=0.0, backend="cpu"):
    """`backend`: "cpu", or "gpu-emulated" (gs.gpu: Genesis' CUDA code paths on quadrants' CUDA emulator)."""
    build, default_steps = SCENES[name]
    if perturb:
        _perturb(perturb)
    if backend == "gpu-emulated":
        import emulated_gpu

        emulated_gpu.install()
    # the SAP coupler refuses 32-bit precision; every other scene runs in Genesis' default (32)
    gs.init(backend=gs.gpu if backend == "gpu-emulated" else gs.cpu, logging_level="warning", seed=0,
            precision="64" if name == "fem_sap" else "32")  # fmt: skip
    scene, entities = build()
    n_envs, runner = DIFFERENTIABLE.get(name, (0, None))
    scene.build(n_envs=n_envs)
    t_built = time.perf_counter()
    steps = default_steps if steps is None else steps
    t_first = t_built  # after the first step (its kernels' compiles or cache loads): the steps/s clock starts
    if runner is not None:  # forward and backward: timed whole
        state = runner(scene, entities, steps)
        timed = steps
    else:
        for i in range(steps):
            scene.step()
            if i == 0:
                t_first = time.perf_counter()
        state = summarize(scene, entities)
        timed = steps - 1
    t_end = time.perf_counter()
    out = {"scene": name, "steps": steps, "state": state,
           "times": {"import_to_build_s": round(t_built - t0, 3), "first_step_s": round(t_first - t_built, 3),
                     "steps_per_s": round(timed / (t_end - t_first), 1) if timed > 0 else None}}  # fmt: skip
    import quadrants as qd

    if hasattr(qd, "stats"):
        out["compiles"] = qd.stats().get("compiles")
        out["ptx_checked"] = qd.stats().get("ptx_checked")  # with QD_PTX_CHECK: kernels also assembled by ptxas
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("scene", nargs="?", choices=sorted(SCENES))
    ap.add_argument("--steps", type=int, default=None)
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--perturb", type=float, default=0.0, help="start every body this many metres off on each axis")
    ap.add_argument("--record", type=Path, help="also store the summary as this scene's entry of a reference JSON "
                    "file (with --perturb: as one of the scene's perturbed runs)")  # fmt: skip
    ap.add_argument("--backend", choices=("cpu", "gpu-emulated"), default="cpu")
    args = ap.parse_args()
    if args.list or args.scene is None:
        print("\n".join(SCENES))
        return
    out = run(args.scene, args.steps, args.perturb, args.backend)
    print(json.dumps(out))
    if args.record is not None:
        ref = json.loads(args.record.read_text()) if args.record.exists() else {}
        if args.perturb:
            entry = ref[args.scene]
            assert entry["steps"] == out["steps"], "a perturbed run is recorded over as many steps as the reference"
            entry.setdefault("perturbed", []).append({"perturb": args.perturb, "state": out["state"]})
        else:
            ref[args.scene] = {"steps": out["steps"], "state": out["state"]}
        args.record.write_text(json.dumps(dict(sorted(ref.items())), indent=1) + "\n")


if __name__ == "__main__":
    main()
