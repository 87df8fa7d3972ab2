"""`qd.volatile_load(x[i])`: a load of a field or ndarray element that LLVM keeps (`load volatile` in the IR
and in the generated LLVM), with Quadrants' errors for what is not global memory."""

from __future__ import annotations

import linecache
from pathlib import Path

import numpy as np
import pytest

import quadrants as qd
from tests.conftest import qd_init


def test_volatile_loads_read_the_elements_and_reach_llvm_as_volatile(tmp_path: Path) -> None:
    qd.init(arch=qd.cpu, dump="ir,opt", debug_dump_path=str(tmp_path))  # the CPU backend writes the dumps
    flags = qd.field(qd.i32, shape=4)
    pos = qd.Vector.field(3, qd.f32, shape=2)

    @qd.kernel
    def k(out: qd.types.ndarray(dtype=qd.f32, ndim=1)) -> None:
        for i in range(4):
            x = qd.volatile_load(flags[i])
            flags[i] = x + 1
        for j in range(2):
            p = qd.volatile_load(pos[j])
            out[j] = p[0] + p[1] + p[2]

    for i in range(4):
        flags[i] = 10 * i
    pos.from_numpy(np.arange(6, dtype=np.float32).reshape(2, 3))
    out = np.zeros(2, np.float32)
    k(out)
    assert [flags[i] for i in range(4)] == [1, 11, 21, 31]
    np.testing.assert_allclose(out, [3.0, 12.0])
    dumps = {p.name: p.read_text() for p in tmp_path.iterdir()}
    ir_text = "".join(v for name, v in dumps.items() if name.endswith(".qd.txt") and "(out:" in v)
    assert ir_text.count("global load volatile") == 4, ir_text  # one i32 element, then 3 components per vector
    opt = "".join(v for name, v in dumps.items() if name.endswith(".opt.ll"))
    assert opt.count("load volatile") >= 4, opt  # the optimized LLVM keeps every one


@pytest.mark.parametrize(
    ("body", "error", "words"),
    [
        ("y = qd.volatile_load(x + 1)", qd.QuadrantsSyntaxError, "lvalue"),
        ("y = qd.volatile_load(flags)", qd.QuadrantsSyntaxError, "Field directly"),
        ("v = qd.Vector([0, 0]); y = qd.volatile_load(v)", qd.QuadrantsTypeError, "local array"),
        ("y = qd.volatile_load(x)", qd.QuadrantsTypeError, "local array"),
    ],
)
def test_what_is_not_global_memory_is_refused(body: str, error: type, words: str) -> None:
    qd_init()
    flags = qd.field(qd.i32, shape=4)
    ns = {"qd": qd, "flags": flags}
    src, path = f"@qd.kernel\ndef k():\n    x = 1\n    {body}\n", f"<volatile-{abs(hash(body))}>"
    linecache.cache[path] = (len(src), None, src.splitlines(True), path)  # the kernel's source, for the compiler
    exec(compile(src, path, "exec"), ns)
    with pytest.raises(error, match=words):
        ns["k"]()
