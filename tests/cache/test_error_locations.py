"""Runtime errors of kernels loaded from a cache name the file and line where the code is now: lines inserted
above a kernel, the same kernel in another file, a comment added inside a kernel body (an offline hit)."""

from __future__ import annotations

import pytest

from tests.cache.conftest import LOADED, REPORT, Project

PROGRAM = (
    """
import sys
import numpy as np
import quadrants as qd
qd.init(arch=qd.cpu, debug=True)
"""
    + REPORT
    + """
{ABOVE}
@qd.func
def pick(a, i):
    return a[i]

@qd.kernel(fastcache={FAST})
def get(a: qd.types.NDArray[qd.f32, 1], i: qd.i32, via_func: qd.i32) -> qd.f32:
    {INSIDE}
    r = 0.0
    if via_func:
        r = pick(a, i)
    else:
        r = a[i]
    return r

try:
    get(np.zeros(4, np.float32), 9, int(sys.argv[1]))
except qd.QuadrantsIndexError as e:
    loc = e.loc
    report(file=loc.filename, line=loc.lineno, text=loc.line_text.strip(),
           offline_hits=qd.stats()["cache"].get("offline_hits", 0))
"""
)


def _write(project: Project, name: str, above: int = 0, inside: str = "", fast: bool = True) -> list[str]:
    text = PROGRAM.replace("{ABOVE}", "\n" * above).replace("{INSIDE}", inside or "pass")
    text = text.replace("{FAST}", str(fast))
    project.write(name, text)
    return (project.root / name).read_text().splitlines()


def _expect(lines: list[str], needle: str) -> int:
    return next(k for k, ln in enumerate(lines, 1) if ln.strip() == needle)


@pytest.mark.slow
@pytest.mark.parametrize("via_func", ["0", "1"])
def test_a_fastcache_hit_reports_where_the_kernel_is_now(project: Project, via_func: str) -> None:
    needle = "return a[i]" if via_func == "1" else "r = a[i]"
    lines = _write(project, "app.py")
    first = project.run(via_func).out
    assert first["line"] == _expect(lines, needle) and first["file"].endswith("app.py")
    lines = _write(project, "app.py", above=7)  # lines inserted above: still a hit (no line numbers in keys)
    moved = project.run(via_func, env={"QD_LOG_LEVEL": "debug"})
    assert moved.out["get"] == LOADED
    assert moved.out["line"] == _expect(lines, needle) and moved.out["text"] == needle
    # the same script moved to another folder (the same module, `app`): a hit, reporting the new place
    other = _write(project, "moved/app.py", above=3)
    elsewhere = project.run(via_func, script="moved/app.py").out
    assert elsewhere["get"] == LOADED
    assert elsewhere["file"].endswith("moved/app.py") and elsewhere["line"] == _expect(other, needle)


@pytest.mark.slow
def test_an_offline_hit_reports_where_the_kernel_is_now(project: Project) -> None:
    lines = _write(project, "app.py", fast=False)
    assert project.run("0").out["line"] == _expect(lines, "r = a[i]")
    lines = _write(project, "app.py", fast=False, inside="# a comment: the same IR, other line numbers\n    pass")
    again = project.run("0").out
    assert again["offline_hits"] >= 1 and again["line"] == _expect(lines, "r = a[i]")


OVERFLOW_PROGRAM = (
    """
import io, contextlib
import quadrants as qd
qd.init(arch=qd.cpu, debug=True)
"""
    + REPORT
    + """
{ABOVE}
@qd.kernel(fastcache=True)
def add(x: qd.i32, y: qd.i32) -> qd.i32:
    return x + y

buf = io.StringIO()
with contextlib.redirect_stdout(buf):
    r = add(2**31 - 1, 1)
report(result=r, printed=buf.getvalue())
"""
)


@pytest.mark.slow
def test_an_overflow_warning_from_a_fastcache_hit_names_the_line_where_it_is_now(project: Project) -> None:
    """The warning is printed by the launcher from the check site, not baked into the code: a cached kernel
    moved down the file reports its new line."""
    project.write("app.py", OVERFLOW_PROGRAM.replace("{ABOVE}", ""))
    first = project.run().out
    lines = (project.root / "app.py").read_text().splitlines()
    assert first["result"] == -(2**31) and f"line {_expect(lines, 'return x + y')}," in first["printed"]
    project.write("app.py", OVERFLOW_PROGRAM.replace("{ABOVE}", "\n" * 5))
    moved = project.run().out
    lines = (project.root / "app.py").read_text().splitlines()
    assert moved["add"] == LOADED
    assert "Addition overflow detected" in moved["printed"] and "return x + y" in moved["printed"]
    assert f"line {_expect(lines, 'return x + y')}," in moved["printed"]
