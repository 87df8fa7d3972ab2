"""`assert` in kernels, as Quadrants has it: a check of debug mode whose message may carry the failing thread's
run-time values (`%` formatting, f-strings, `str.format`); without debug mode only the condition's side effects
remain, a compile-time false condition included. Also across processes: a kernel loaded from the offline cache
reports the same message."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import quadrants as qd
from tests.conftest import qd_init


def test_percent_formatting_reports_each_threads_values() -> None:
    qd_init(debug=True, log_level="warn")
    x = qd.field(qd.i32, 16)
    x[10] = 42

    @qd.kernel
    def check():
        for i in x:
            assert x[i] == 0, "x[%d] expect=%d got=%-4d|" % (i, 0, x[i])  # noqa: UP031

    with pytest.raises(qd.QuadrantsAssertionError, match=r"x\[10\] expect=0 got=42  \|"):
        check()
    x[10] = 0
    check()  # passes now: the same compiled kernel


def test_floats_ints_and_conversions_as_python_formats_them() -> None:
    qd_init(debug=True, log_level="warn")

    @qd.kernel
    def check(y: qd.f32, n: qd.i64, u: qd.u32):
        assert y < 0, "y=%.3f trunc=%d n=%+05d" % (y, y, n)  # noqa: UP031

    @qd.kernel
    def fstring(y: qd.f64, n: qd.i32):
        assert y < 0, f"y={y:.2e} n={n:x} {{braces}}"

    @qd.kernel
    def fmt(y: qd.f32, n: qd.i32):
        assert n < 0, "n={} twice={:04d} y={:g}".format(n, n * 2, y)  # noqa: UP032

    with pytest.raises(qd.QuadrantsAssertionError, match=r"y=2\.750 trunc=2 n=-0007"):
        check(2.75, -7, 3)
    with pytest.raises(qd.QuadrantsAssertionError, match=r"y=1\.25e\+03 n=ff \{braces\}"):
        fstring(1250.0, 255)
    with pytest.raises(qd.QuadrantsAssertionError, match=r"n=6 twice=0012 y=0\.5"):
        fmt(0.5, 6)


def test_more_values_than_a_record_holds_fall_back_to_the_source_text() -> None:
    qd_init(debug=True, log_level="warn")

    @qd.kernel
    def check(a: qd.i32, b: qd.i32, c: qd.i32, d: qd.i32):
        assert a < 0, "%d %d %d %d" % (a, b, c, d)  # noqa: UP031

    with pytest.raises(qd.QuadrantsAssertionError, match=r"%d %d %d %d"):
        check(1, 2, 3, 4)


def test_compile_time_false_asserts_fail_at_run_time_in_debug_mode_and_vanish_otherwise() -> None:
    qd_init(debug=True, log_level="warn")

    @qd.kernel
    def always():
        assert 0

    with pytest.raises(AssertionError):
        always()
    qd_init(debug=False, log_level="warn")
    a = qd.field(qd.i32, ())

    @qd.func
    def touch() -> bool:
        a[None] = 5
        return False

    @qd.kernel
    def ignored():
        assert touch()
        assert False, "never checked"

    ignored()
    assert a[None] == 5  # the condition still ran


APP = """
import json, quadrants as qd
qd.init(arch=qd.cpu, debug=True, log_level="warn")
x = qd.field(qd.f32, 8)
x[3] = 1.5

@qd.kernel
def check():
    for i in x:
        assert x[i] == 0, "x[%d] = %.2f" % (i, x[i])

try:
    check()
    msg = None
except qd.QuadrantsAssertionError as e:
    msg = str(e)
print(json.dumps({"msg": msg, "stats": qd.stats()}))
"""


@pytest.mark.slow
def test_a_message_kernel_loaded_from_the_offline_cache_reports_the_same_values(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text(textwrap.dedent(APP))
    env = {k: v for k, v in os.environ.items() if not k.startswith("QD_")}
    env["QD_CACHE_DIR"] = str(tmp_path / "cache")
    runs = []
    for _ in range(2):
        proc = subprocess.run([sys.executable, "app.py"], cwd=tmp_path, env=env, capture_output=True, text=True,
                              timeout=300)  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        runs.append(json.loads(proc.stdout.strip().splitlines()[-1]))
    assert runs[0]["stats"]["compiles"] >= 1 and runs[1]["stats"]["compiles"] == 0
    for r in runs:
        assert "x[3] = 1.50" in r["msg"]
