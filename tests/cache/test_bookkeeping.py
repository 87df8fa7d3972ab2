"""Damaged bookkeeping files (usage.json, targets.json, stats.json) never stop a process: valid JSON of the wrong
shape or no JSON at all is a warning and a rebuild, bundles are still linked, and `qd cache verify` names it."""

from __future__ import annotations

from pathlib import Path

import pytest

from quadrants.aot.inventory import open_store, verify
from quadrants.cache.keys import FORMAT
from tests.cache.conftest import Project
from tests.cache.test_robustness import APP, assert_correct, entries
from tests.cache.test_robustness import warm as warm  # noqa: F401 - the fixture

pytestmark = pytest.mark.slow  # every test runs its program in fresh processes

BAD = {
    "usage.json": ['{"bytes": null}', '{"bytes": "12"}', "[1, 2]", "not json", '{"bytes": -5}'],
    "targets.json": ['{"cpu": 5}', '{"cpu": ["x86-64-v3", 7]}', '{"gpu": []}', "7"],
    "stats.json": ['{"fastcache_hits": "x"}', '{"processes": null}', "[]", "{"],
}
CASES = [(name, text) for name, texts in BAD.items() for text in texts]


def _file(project: Project, name: str) -> Path:
    return project.cache / f"v{FORMAT}" / name


@pytest.mark.parametrize(("name", "text"), CASES)
def test_a_compiling_process_survives_damaged_bookkeeping(warm: Project, name: str, text: str) -> None:
    _file(warm, name).write_text(text)
    damaged = verify(open_store(str(warm.cache))).damaged
    assert [d.key for d in damaged] == [name]
    run = warm.run("5")  # a new template value: compiles, writes an entry, records counters at exit
    assert_correct(run, 5)
    assert "Traceback" not in run.stderr and "damaged" in run.stderr
    again = warm.run("7")
    assert_correct(again, 7)
    if name != "targets.json":  # rewritten by the processes; targets.json only by qd precompile
        assert "damaged" not in again.stderr
        assert verify(open_store(str(warm.cache))).damaged == []


def test_damaged_stats_do_not_stop_the_session_bundle(project: Project) -> None:
    project.write("app.py", APP)
    stats = _file(project, "stats.json")
    stats.parent.mkdir(parents=True)
    stats.write_text('{"compiles": {"nested": 1}}')
    run = project.run()
    assert_correct(run)
    assert "Traceback" not in run.stderr and entries(project.cache, "bundle")


def test_verify_does_not_block_on_a_fifo_in_place_of_a_bookkeeping_file(warm: Project) -> None:
    import os

    ledger = _file(warm, "usage.json")
    ledger.unlink(missing_ok=True)
    os.mkfifo(ledger)
    damaged = verify(open_store(str(warm.cache))).damaged
    assert [(d.key, d.problem) for d in damaged] == [("usage.json", "not a regular file")]
