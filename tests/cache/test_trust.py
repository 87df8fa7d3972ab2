"""A cache holds native code: entries that someone else could have written are never used (one warning, a
recompile), the fallback folder in the shared temp directory cannot be planted, new files honour the umask."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from quadrants.aot.inventory import open_store, verify
from quadrants.cache import trust
from quadrants.cache.keys import FORMAT
from quadrants.cache.store import decode, encode
from tests.cache.conftest import LOADED, STORED, Project, make_read_only
from tests.cache.test_robustness import all_kernels, assert_correct, entries
from tests.cache.test_robustness import warm as warm  # noqa: F401 - the fixture

pytestmark = pytest.mark.slow  # every test runs its program in fresh processes

ROOT = os.geteuid() == 0
NOBODY = 65534


def _foreign(path: Path) -> str:
    """Make `path` look written by someone else: owned by another user as root, else writable by everyone.
    Returns the words the warning uses."""
    if ROOT:
        os.chown(path, NOBODY, NOBODY)
        return f"owned by uid {NOBODY}"
    path.chmod(0o666)
    return "writable by everyone"


def _states(run) -> dict[str, list[bool]]:
    return {k: run.out[k] for k in ("k_add", "k_sq", "k_scale")}


def test_a_planted_entry_is_never_loaded(warm: Project) -> None:
    fast = {decode(p.read_bytes(), "fast", p.stem)[1]["kernel"]: p for p in entries(warm.cache, "fast")}
    _, sq_meta = decode(fast["k_sq"].read_bytes(), "fast", fast["k_sq"].stem)
    victim = fast["k_add"]  # k_add's key now says: run k_sq's code (a valid entry: trailer and CRC recomputed)
    victim.write_bytes(encode("fast", victim.stem, b"", sq_meta))
    words = _foreign(victim)
    run = warm.run()
    assert_correct(run)  # k_add's own code ran
    assert run.out["k_add"] == STORED and run.out["k_sq"] == LOADED
    assert run.stderr.count("ignoring the cache entry") == 1 and words in run.stderr


@pytest.mark.parametrize("kind", ["artifact", "bundle", "runtime", "fast"])
def test_entries_someone_else_could_write_are_ignored(warm: Project, kind: str) -> None:
    if kind == "artifact":
        for p in entries(warm.cache, "bundle"):  # else the kernels come from the bundle, no artifact is read
            p.unlink()
    for p in entries(warm.cache, kind):
        words = _foreign(p)
    run = warm.run()
    assert_correct(run)
    assert "ignoring the cache entry" in run.stderr and words in run.stderr and "Traceback" not in run.stderr
    if kind == "fast":
        assert _states(run) == all_kernels(STORED)
    again = warm.run()  # the recompiled entries replaced the foreign ones
    assert_correct(again)
    assert _states(again) == all_kernels(LOADED) and again.stderr == ""


def test_a_folder_anyone_can_write_is_not_trusted(warm: Project) -> None:
    folder = warm.cache / f"v{FORMAT}" / "fast"
    folder.chmod(0o777)  # no sticky bit: anyone could have replaced an entry
    run = warm.run()
    assert_correct(run)
    assert _states(run) == all_kernels(STORED) and "writable by everyone" in run.stderr
    folder.chmod(0o777 | stat.S_ISVTX)  # sticky (like /tmp): others cannot replace this user's entries
    trusted = warm.run()
    assert _states(trusted) == all_kernels(LOADED)


def test_verify_reports_untrusted_entries(warm: Project) -> None:
    victim = entries(warm.cache, "artifact")[0]
    words = _foreign(victim)
    trust.forget()
    found = verify(open_store(str(warm.cache)))
    checked, damaged = found.checked, found.damaged
    assert checked == len(entries(warm.cache)) and [d.path for d in damaged] == [str(victim)]
    assert damaged[0].problem.startswith("untrusted") and words in damaged[0].problem


def test_verify_does_not_open_fifos_or_follow_symlinks(warm: Project, tmp_path: Path) -> None:
    folder = warm.cache / f"v{FORMAT}" / "artifact" / "ff"
    folder.mkdir(parents=True, exist_ok=True)
    os.mkfifo(folder / ("f" * 64 + ".qd"))
    outside = tmp_path / "outside.qd"
    outside.write_bytes(b"x" * 100)
    (folder / ("e" * 64 + ".qd")).symlink_to(outside)
    trust.forget()
    found = verify(open_store(str(warm.cache)))
    checked, damaged = found.checked, found.damaged  # returns: the FIFO was not opened
    problems = sorted(d.problem for d in damaged)
    assert problems == ["not a regular file (a symlink, FIFO or device)"] * 2


@pytest.mark.parametrize("planted", ["symlink", "foreign folder"])
def test_the_fallback_folder_cannot_be_planted(warm: Project, tmp_path: Path, planted: str) -> None:
    if planted == "foreign folder" and not ROOT:
        pytest.skip("planting a folder owned by another user needs root")
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    top = tmp / f"quadrants-cache-{os.getuid()}"
    target = tmp_path / "attacker"
    target.mkdir(mode=0o777)
    if planted == "symlink":
        top.symlink_to(target)
    else:
        top.mkdir(mode=0o700)
        os.chown(top, NOBODY, NOBODY)
    undo = make_read_only(warm.cache)
    if undo is None:
        pytest.skip("cannot make a read-only folder on this machine")
    try:
        run = warm.run("5", env={"TMPDIR": str(tmp)})  # a kernel the read-only cache lacks
    finally:
        import subprocess

        subprocess.run(undo)
    assert_correct(run, 5)
    assert "not using the fallback cache folder" in run.stderr and "Traceback" not in run.stderr
    assert not list(target.rglob("*")) and (not top.is_dir() or top.is_symlink() or not list(top.rglob("*.qd")))


@pytest.mark.parametrize("mask", [0o022, 0o027, 0o077, 0o002])
def test_new_files_honour_the_umask(project: Project, mask: int) -> None:
    project.write("app.py", "import quadrants as qd\nqd.init(arch=qd.cpu)\n"
                  "@qd.kernel(fastcache=True)\ndef one() -> qd.i32:\n    return 1\nprint(one())\n")  # fmt: skip
    project.write("wrap.py", f"import os, runpy\nos.umask({mask:#o})\nrunpy.run_path('app.py', run_name='__main__')\n")
    run = project.run(script="wrap.py")
    files = entries(project.cache)
    assert run.stdout.strip() == "1" and files
    assert {stat.S_IMODE(p.stat().st_mode) for p in files} == {0o666 & ~mask}
    again = project.run(script="wrap.py")  # and such a cache is trusted by its owner (a private group)
    assert "ignoring" not in again.stderr
