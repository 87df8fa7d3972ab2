"""`qd record`: run a program, merge what it called into the manifest, then precompile from it."""

from __future__ import annotations

import json
import sys

from quadrants.aot import manifest
from tests.cli.test_precompile import SIGNATURES, Proj, check_results
from tests.cli.test_precompile import proj as proj  # noqa: F401 - the fixture


def test_record_round_trip(proj: Proj) -> None:  # noqa: F811
    (proj.root / "qd.toml").write_text('# my manifest: keep this comment\ncache_dir = "build/cache"\nmodules = []\n')
    cmd = proj.qd("record", "-o", "qd.toml", "--", sys.executable, "main.py", env={"QD_CACHE_DIR": str(proj.root / "c0")})
    assert cmd.returncode == 0, cmd.stderr
    text = (proj.root / "qd.toml").read_text()
    assert "# my manifest: keep this comment" in text
    m = manifest.load(str(proj.root / "qd.toml"))
    assert m.modules == ["app.kernels"]
    names = {k.name: k for k in m.kernels}
    # dataclass and data_oriented arguments cannot be written down: skipped, with the factory to add
    assert set(names) == {"app.kernels:saxpy", "app.kernels:apply", "app.kernels:spin", "app.kernels:plain"}
    assert "app.kernels:fill" in cmd.stdout and "factory" in cmd.stdout
    assert "app.kernels:Counter.advance" in cmd.stdout
    apply_sigs = [{k: v.raw for k, v in s.params.items()} for s in names["app.kernels:apply"].signatures]
    assert apply_sigs == [{"x": "ndarray[f32, 1]", "n": 2, "mode": "ADD"}, {"x": "numpy[f64, 1]", "n": 3, "mode": "MUL"}]
    assert names["app.kernels:saxpy"].signatures == []  # every parameter fixed by its annotation

    again = proj.qd("record", "-o", "qd.toml", "--", sys.executable, "main.py", env={"QD_CACHE_DIR": str(proj.root / "c0")})
    assert again.returncode == 0 and "0 kernel(s) and 0 signature(s) added" in again.stdout
    assert (proj.root / "qd.toml").read_text() == text  # nothing new: unchanged

    # the factories by hand, then everything precompiles and the program starts without compiling
    with open(proj.root / "qd.toml", "a") as f:
        f.write('\n[[kernel]]\nname = "app.kernels:fill"\nfactory = "app.factories:fill_args"\n'
                '\n[[kernel]]\nname = "app.kernels:Counter.advance"\n'
                'signatures = [{ self = { factory = "app.factories:counter" } }]\n')  # fmt: skip
    rc, report = proj.precompile()
    assert rc == 0 and report["signatures"] == SIGNATURES and report["failed"] == 0, report
    out = proj.main()
    check_results(out)
    assert out["stats"]["compiles"] == 0


def test_record_into_pyproject_and_a_failing_program(proj: Proj) -> None:  # noqa: F811
    (proj.root / "qd.toml").unlink()
    (proj.root / "pyproject.toml").write_text('[project]\nname = "demo"\nversion = "0"\n')
    (proj.root / "fails.py").write_text(
        "import numpy as np\nimport quadrants as qd\nfrom app import kernels as k\nqd.init(arch=qd.cpu)\n"
        "k.apply(np.zeros(2, np.float32), 4, k.Mode.ADD)\nraise SystemExit(3)\n"
    )
    cmd = proj.qd("record", "-o", "pyproject.toml", "--", sys.executable, "fails.py", env={"QD_CACHE_DIR": str(proj.root / "c")})
    assert cmd.returncode == 3 and "exited with status 3" in cmd.stdout
    m = manifest.load(str(proj.root / "pyproject.toml"))
    (k,) = m.kernels
    assert k.name == "app.kernels:apply" and {n: v.raw for n, v in k.signatures[0].params.items()} == {
        "x": "numpy[f32, 1]", "n": 4, "mode": "ADD"
    }
    assert json.loads(json.dumps(m.modules)) == ["app.kernels"]
