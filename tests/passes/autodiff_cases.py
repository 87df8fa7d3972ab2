"""Random small differentiable kernels, written as module files, and their gradients.

Used by tests/passes/test_autodiff_property.py in this process (gradients against central differences in
float64) and, run as a script, by the same test under another Python with real Quadrants 1.3.3 (the reference
for the derivative table): `python autodiff_cases.py OUTDIR SEED...` prints one JSON line of
{seed: {"grad": [...], "fd": [...]}}. Only public API that both implementations share is used.

A case is a kernel over a float64 field `x` of N_INPUTS elements: a top-level loop whose body computes locals
`t0, t1, ...` from random expressions of `x[...]` and earlier locals (every unary and binary operator of the
derivative table, kept inside their domains), sometimes inside a runtime `if`, and adds the last local to
`loss[None]`.
"""

from __future__ import annotations

import importlib.util
import json
import random
import sys
from pathlib import Path
from typing import Any

N_INPUTS = 3

UNARY = [
    "qd.sin({a})", "qd.cos({a})", "qd.tan(0.5 * qd.tanh({a}))", "qd.tanh({a})", "qd.asin(0.9 * qd.tanh({a}))",
    "qd.acos(0.9 * qd.tanh({a}))", "qd.exp(qd.tanh({a}))", "qd.log({a} * {a} + 0.5)",
    "qd.sqrt({a} * {a} + 0.25)", "qd.rsqrt({a} * {a} + 0.25)", "qd.abs({a})", "-({a})", "qd.floor({a}) + {a}",
]  # fmt: skip
BINARY = [
    "({a} + {b})", "({a} - {b})", "({a} * {b})", "({a} / ({b} * {b} + 0.5))", "qd.atan2({a}, {b})",
    "qd.pow({a} * {a} + 0.5, qd.tanh({b}))", "({a} ** 2)", "qd.min({a}, {b})", "qd.max({a}, {b})",
    "qd.select({a} > {b}, {a}, 2.0 * {b})",
]  # fmt: skip


def _expr(rng: random.Random, names: list[str], depth: int) -> str:
    if depth == 0 or rng.random() < 0.25:
        return rng.choice(names)
    if rng.random() < 0.5:
        return rng.choice(UNARY).format(a=_expr(rng, names, depth - 1))
    return rng.choice(BINARY).format(a=_expr(rng, names, depth - 1), b=_expr(rng, names, depth - 1))


def case_source(seed: int) -> str:
    rng = random.Random(seed)
    names = [f"x[{j}]" for j in range(N_INPUTS)]
    body: list[str] = []
    for k in range(rng.randint(1, 3)):
        t = f"t{k}"
        body.append(f"{t} = {_expr(rng, names, 2)}")
        if rng.random() < 0.4:
            body.append(f"if {_expr(rng, names, 1)} > {rng.uniform(-0.5, 0.5):.3f}:")
            body.append(f"    {t} = {_expr(rng, names + [t], 2)}")
            body.append("else:")
            body.append(f"    {t} = {_expr(rng, names + [t], 1)}")
        names.append(t)
    body.append(f"loss[None] += {names[-1]} * (1.0 + 0.5 * i)")
    lines = "\n".join("        " + ln for ln in body)
    return f'''import quadrants as qd

x = qd.field(qd.f64, shape={N_INPUTS}, needs_grad=True)
loss = qd.field(qd.f64, shape=(), needs_grad=True)


@qd.kernel
def k():
    for i in range(2):
{lines}
'''


def inputs(seed: int) -> list[float]:
    rng = random.Random(1000 + seed)
    return [rng.uniform(-1.5, 1.5) for _ in range(N_INPUTS)]


def load(path: Path) -> Any:
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def evaluate(module: Any, xs: list[float], h: float = 1e-6) -> dict[str, list[float]]:
    """The kernel's gradient by `k.grad()`, and by central differences of step `h` and `h / 2` (where the two
    disagree the function is not smooth there: the caller skips that component)."""
    import numpy as np

    def loss_at(values: list[float]) -> float:
        module.x.from_numpy(np.array(values))
        module.loss[None] = 0.0
        module.k()
        return float(module.loss[None])

    loss_at(xs)
    module.x.grad.fill(0.0)
    module.loss.grad[None] = 1.0
    module.k.grad()
    grad = [float(g) for g in module.x.grad.to_numpy()]
    fd, fd2 = [], []
    for j in range(len(xs)):
        for step, out in ((h, fd), (h / 2, fd2)):
            up, down = list(xs), list(xs)
            up[j] += step
            down[j] -= step
            out.append((loss_at(up) - loss_at(down)) / (2 * step))
    return {"grad": grad, "fd": fd, "fd2": fd2}


def main(argv: list[str]) -> None:
    import quadrants as qd

    qd.init(arch=qd.cpu)
    out_dir = Path(argv[0])
    results = {}
    for seed in map(int, argv[1:]):
        path = out_dir / f"adcase_{seed}.py"
        path.write_text(case_source(seed))
        results[seed] = evaluate(load(path), inputs(seed))
    print(json.dumps(results))


if __name__ == "__main__":
    main(sys.argv[1:])
