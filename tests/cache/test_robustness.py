"""The cache under damage, in fresh processes: corrupt, truncated and misplaced entries, a read-only cache
directory, many processes compiling the same kernels at once, the size bound."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from quadrants.cache.store import KIND_CODES, CorruptEntry, decode
from tests.cache.conftest import LOADED, REPORT, STORED, Project, make_read_only

APP = "import sys\nimport numpy as np\nimport quadrants as qd\n" + REPORT + '''
qd.init(arch=qd.cpu)

@qd.func
def sq(v):
    return v * v

@qd.kernel(fastcache=True)
def k_add(x: qd.types.NDArray[qd.f32, 1], y: qd.types.NDArray[qd.f32, 1]):
    for i in range(x.shape[0]):
        y[i] = x[i] + 1.0

@qd.kernel(fastcache=True)
def k_sq(x: qd.types.NDArray[qd.f32, 1], y: qd.types.NDArray[qd.f32, 1]):
    for i in range(x.shape[0]):
        y[i] += sq(x[i])

@qd.kernel(fastcache=True)
def k_scale(x: qd.types.NDArray[qd.f32, 1], s: qd.template()) -> qd.f32:
    total = 0.0
    for i in range(x.shape[0]):
        total += x[i] * s
    return total

x = np.arange(8, dtype=np.float32)
y = np.zeros(8, dtype=np.float32)
k_add(x, y)
k_sq(x, y)
scale = int(sys.argv[1]) if len(sys.argv) > 1 else 3
total = k_scale(x, scale)
report(y=y.tolist(), total=float(total), stats=qd.stats())
'''

WANT_Y = [float(i + 1 + i * i) for i in range(8)]


def want_total(scale: int = 3) -> float:
    return float(sum(range(8)) * scale)


def entries(cache: Path, kind: str | None = None) -> list[Path]:
    return sorted(p for p in cache.rglob("*.qd") if kind is None or p.parent.parent.name == kind)


def check_all_entries_whole(cache: Path) -> None:
    for p in entries(cache):
        decode(p.read_bytes(), p.parent.parent.name, p.stem)  # raises CorruptEntry if damaged


def assert_correct(run, scale: int = 3) -> None:
    assert run.out["y"] == WANT_Y and run.out["total"] == want_total(scale)


def all_kernels(state: list[bool]) -> dict[str, list[bool]]:
    return {name: state for name in ("k_add", "k_sq", "k_scale")}


@pytest.fixture
def warm(project: Project) -> Project:
    project.write("app.py", APP)
    first = project.run()
    assert_correct(first)
    assert {k: first.out[k] for k in ("k_add", "k_sq", "k_scale")} == all_kernels(STORED)
    kinds = {p.parent.parent.name for p in entries(project.cache)}
    assert kinds == set(KIND_CODES), kinds  # artifacts, fastcache entries, the runtime and a session bundle
    return project


# ---- damaged entries --------------------------------------------------------------------------------------


def flip(p: Path) -> None:
    data = bytearray(p.read_bytes())
    data[len(data) // 3] ^= 0x5A
    p.write_bytes(bytes(data))


def truncate(p: Path) -> None:
    p.write_bytes(p.read_bytes()[: max(1, p.stat().st_size * 2 // 3)])


def garbage(p: Path) -> None:
    p.write_bytes(os.urandom(p.stat().st_size))


DAMAGE = {"flip": flip, "truncate": truncate, "garbage": garbage}


@pytest.mark.slow
@pytest.mark.parametrize("kind", sorted(KIND_CODES))
@pytest.mark.parametrize("how", sorted(DAMAGE))
def test_damaged_entries_warn_miss_and_are_rewritten(warm: Project, kind: str, how: str) -> None:
    damaged = entries(warm.cache, kind)
    assert damaged
    for p in damaged:
        DAMAGE[how](p)
    if kind == "artifact":
        for p in entries(warm.cache, "bundle"):
            p.unlink()  # otherwise the bundle serves the kernels and the artifacts are not read
    second = warm.run()
    assert_correct(second)
    assert "corrupt cache entry" in second.stderr
    assert "Traceback" not in second.stderr
    check_all_entries_whole(warm.cache)  # rewritten
    third = warm.run()
    assert_correct(third)
    assert third.stderr == ""
    assert {k: third.out[k] for k in ("k_add", "k_sq", "k_scale")} == all_kernels(LOADED)


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["artifact", "fast"])
def test_entries_renamed_to_other_keys_are_rejected(warm: Project, kind: str) -> None:
    for p in entries(warm.cache, "bundle"):
        p.unlink()  # so the artifacts are read
    files = entries(warm.cache, kind)
    assert len(files) >= 3
    contents = [p.read_bytes() for p in files]
    for p, data in zip(files, contents[1:] + contents[:1]):  # each file now holds its neighbour's entry
        p.write_bytes(data)
    second = warm.run()
    assert_correct(second)
    assert "another key" in second.stderr
    check_all_entries_whole(warm.cache)
    third = warm.run()
    assert_correct(third)
    assert third.stderr == ""


@pytest.mark.slow
def test_a_lost_bundle_is_relinked_from_the_artifacts(warm: Project) -> None:
    for p in entries(warm.cache, "bundle"):
        p.unlink()
    run = warm.run()
    assert_correct(run)
    assert {k: run.out[k] for k in ("k_add", "k_sq", "k_scale")} == all_kernels(LOADED)
    assert run.out["stats"]["compiles"] == 0
    assert entries(warm.cache, "bundle"), "no bundle made from the cached artifacts"


@pytest.mark.slow
def test_an_entry_from_another_format_version_is_ignored(warm: Project) -> None:
    newer = warm.cache / "v999"
    shutil.copytree(next(warm.cache.glob("v*")), newer)
    for p in entries(warm.cache):
        p.unlink()  # only the other version's entries are left (in their own folder)
    run = warm.run()
    assert_correct(run)
    assert run.out["k_add"] == STORED


# ---- a read-only cache directory ----------------------------------------------------------------------


@pytest.mark.slow
def test_a_read_only_cache_serves_hits_and_keeps_new_kernels_elsewhere(warm: Project, tmp_path: Path) -> None:
    undo = make_read_only(warm.cache)
    if undo is None:
        pytest.skip("cannot make a read-only folder on this machine")
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = {"TMPDIR": str(tmp)}
    try:
        hit = warm.run(env=env)
        assert_correct(hit)
        assert {k: hit.out[k] for k in ("k_add", "k_sq", "k_scale")} == all_kernels(LOADED)
        assert hit.stderr == ""

        new = warm.run("5", env=env)  # a new template value: a kernel the cache does not have
        assert_correct(new, 5)
        assert new.stderr.count("not writable") == 1 and "Traceback" not in new.stderr
        assert new.out["k_add"] == LOADED and new.out["k_scale"] == STORED
        assert list(tmp.rglob("*.qd")), "nothing kept in the fallback folder"

        again = warm.run("5", env=env)  # the next process finds it in the fallback folder
        assert_correct(again, 5)
        assert again.out["k_scale"] == LOADED and again.stderr == ""
    finally:
        subprocess.run(undo)


@pytest.mark.slow
def test_a_cache_directory_that_cannot_be_created(project: Project, tmp_path: Path) -> None:
    blocker = tmp_path / "blocker"
    blocker.write_text("a file, not a folder")
    project.write("app.py", APP)
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    run = project.run(env={"QD_CACHE_DIR": str(blocker / "cache"), "TMPDIR": str(tmp)})
    assert_correct(run)
    assert run.stderr.count("not writable") == 1


# ---- many processes at once --------------------------------------------------------------------------


@pytest.mark.slow
def test_eight_concurrent_cold_processes(project: Project) -> None:
    project.write("app.py", APP)
    env = {**os.environ, "QD_CACHE_DIR": str(project.cache), "QD_LOG_LEVEL": "warn"}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    procs = [
        subprocess.Popen([sys.executable, "app.py", str(3 + i % 2)], cwd=project.root, env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
        for i in range(8)
    ]
    import json

    for i, p in enumerate(procs):
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
        assert "corrupt" not in err and "Traceback" not in err, err
        result = json.loads([ln for ln in out.splitlines() if ln.startswith("{")][-1])
        assert result["y"] == WANT_Y and result["total"] == want_total(3 + i % 2)
    check_all_entries_whole(project.cache)
    assert not [p for p in project.cache.rglob(".tmp-*")], "temporary files left behind"
    for scale in (3, 4):
        after = project.run(str(scale))
        assert_correct(after, scale)
        assert {k: after.out[k] for k in ("k_add", "k_sq", "k_scale")} == all_kernels(LOADED)


# ---- the size bound ---------------------------------------------------------------------------------------


@pytest.mark.slow
def test_the_size_bound_holds_across_processes_and_evicted_kernels_recompile(project: Project) -> None:
    project.write("app.py", APP)
    bound = 60_000
    env = {"QD_OFFLINE_CACHE_MAX_SIZE_OF_FILES": str(bound)}
    for scale in range(3, 9):
        assert_correct(project.run(str(scale), env=env), scale)
    total = sum(p.stat().st_size for p in entries(project.cache))
    assert total <= bound, total
    again = project.run("3", env=env)
    assert_correct(again, 3)


def test_decode_rejects_what_check_all_entries_whole_should_catch(tmp_path: Path) -> None:
    """The helper above must be able to fail."""
    p = tmp_path / "artifact" / "aa" / ("aa" * 32 + ".qd")
    p.parent.mkdir(parents=True)
    p.write_bytes(b"junk" * 40)
    with pytest.raises(CorruptEntry):
        check_all_entries_whole(tmp_path)
