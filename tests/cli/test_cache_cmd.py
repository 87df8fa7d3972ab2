"""`qd cache ls | stats | verify | gc | clear | explain` on a precompiled project."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from quadrants.cache.keys import FORMAT
from quadrants.cache.store import decode
from tests.cli.test_precompile import SIGNATURES, Proj, check_results
from tests.cli.test_precompile import proj as proj  # noqa: F401 - the fixture

pytestmark = pytest.mark.slow  # every test runs `qd` in subprocesses


@pytest.fixture
def built(proj: Proj) -> Proj:  # noqa: F811
    rc, _ = proj.precompile()
    assert rc == 0
    return proj


def cache_json(p: Proj, *args: str) -> tuple[int, dict]:
    proc = p.qd("cache", *args, "--json")
    return proc.returncode, json.loads(proc.stdout) if proc.stdout.strip() else {}


def entries(p: Proj) -> list[Path]:
    return sorted((p.root / "build" / "cache").rglob("*.qd"))


def test_ls_lists_kernels_signatures_and_targets(built: Proj) -> None:
    rc, data = cache_json(built, "ls")
    assert rc == 0 and data["root"].endswith(f"build/cache/v{FORMAT}")
    kinds = [r["kind"] for r in data["entries"]]
    assert kinds.count("fastcache") == SIGNATURES - 1 and kinds.count("offline") == 1
    assert kinds.count("bundle") == 1 and kinds.count("runtime") == 1
    apply_rows = [r for r in data["entries"] if r["kernel"] == "app.kernels:apply"]
    assert sorted(r["signature"].split(";")[0] for r in apply_rows) == ["a.0=ndarray[f32, 1]", "a.0=ndarray[f64, 1]"]
    assert all(r["target"] == "host" and r["size"] > 0 and r["bundled"] for r in apply_rows)
    human = built.qd("cache", "ls")
    assert human.returncode == 0 and "app.kernels:Counter.advance" in human.stdout.replace("\n", "")


def test_stats_counts_entries_and_records_hits(built: Proj) -> None:
    rc, before = cache_json(built, "stats")
    assert rc == 0 and before["kinds"]["fastcache"]["entries"] == SIGNATURES - 1 and before["bytes"] > 0
    _, listed = cache_json(built, "ls")  # the same kinds, by the same names, as qd cache ls
    kinds = [r["kind"] for r in listed["entries"]]
    assert {k: v["entries"] for k, v in before["kinds"].items() if v["entries"]} == {k: kinds.count(k) for k in set(kinds)}
    check_results(built.main())
    _, after = cache_json(built, "stats")
    assert after["recorded"]["fastcache_hits"] >= SIGNATURES - 1 and after["recorded"]["processes"] >= 1
    assert after["recorded"]["compiles"] == 0


def test_verify_finds_damage_and_dangling_entries(built: Proj) -> None:
    rc, data = cache_json(built, "verify")
    assert rc == 0 and data["damaged"] == [] and data["checked"] == len(entries(built))
    referenced = {decode(p.read_bytes(), "fast", p.stem)[1]["artifact"] for p in entries(built)
                  if p.parent.parent.name == "fast"}  # fmt: skip
    victim = next(p for p in entries(built) if p.parent.parent.name == "artifact" and p.stem in referenced)
    raw = bytearray(victim.read_bytes())
    raw[100] ^= 0xFF
    victim.write_bytes(bytes(raw))
    rc, data = cache_json(built, "verify")
    assert rc == 1 and [d["path"] for d in data["damaged"]] == [str(victim)]
    assert "checksum" in data["damaged"][0]["problem"]
    human = built.qd("cache", "verify")
    assert human.returncode == 1 and "damaged" in human.stdout
    victim.unlink()
    for b in (built.root / "build" / "cache" / f"v{FORMAT}" / "bundle").rglob("*.qd"):
        b.unlink()
    rc, data = cache_json(built, "verify")
    assert rc == 0 and len(data["dangling"]) == 1


def _damage(path: Path, at: int) -> None:
    raw = bytearray(path.read_bytes())
    raw[at] ^= 0xFF
    path.write_bytes(bytes(raw))


def test_damaged_entries_are_named_repaired_and_rebuilt(built: Proj) -> None:
    """verify names the kernel and signature of a damaged entry (its code, or its fastcache entry); --repair
    deletes it; precompile rebuilds damaged entries instead of calling them already cached."""
    fast = {p: decode(p.read_bytes(), "fast", p.stem)[1] for p in entries(built) if p.parent.parent.name == "fast"}
    by_artifact = {m["artifact"]: m for m in fast.values()}
    code = next(p for p in entries(built) if p.parent.parent.name == "artifact" and p.stem in by_artifact)
    fast_victim, fast_meta = next((p, m) for p, m in fast.items() if m["artifact"] != code.stem)
    _damage(code, 100)  # in the shared object: the checksum fails, the metadata is still readable
    _damage(fast_victim, -60)  # in the trailer's key: the metadata is found through the trailer's sizes
    rc, data = cache_json(built, "verify")
    assert rc == 1
    named = {d["path"]: (d["kind"], d["kernel"], d["signature"]) for d in data["damaged"]}
    want = by_artifact[code.stem]
    assert named == {str(code): ("artifact", want["name"], want["parts"]["signature"]),
                     str(fast_victim): ("fast", fast_meta["name"], fast_meta["parts"]["signature"])}  # fmt: skip
    human = built.qd("cache", "verify")
    assert f"damaged artifact entry of {want['name']} (" in human.stdout.replace("\n", " ")

    rc, report = built.precompile()  # rebuilds both, and says so
    assert rc == 0 and report["rebuilt_damaged"] == 2 and report["cached"] == SIGNATURES - 2, report
    rc, data = cache_json(built, "verify")
    assert rc == 0 and data["damaged"] == [] and data["dangling"] == []
    assert built.main()["stats"]["compiles"] == 0

    _damage(code, 100)
    rc, data = cache_json(built, "verify", "--repair")
    assert rc == 0 and data["removed"] == [str(code)] and not code.exists()
    rc, data = cache_json(built, "verify")
    assert rc == 0 and data["damaged"] == []


def test_a_cache_dir_that_does_not_exist_is_a_usage_error(built: Proj) -> None:
    for sub in (("ls",), ("stats",), ("verify",), ("export", "-o", "x.tar")):
        proc = built.qd("cache", *sub, "--cache-dir", "no/such/folder")
        assert proc.returncode == 2 and "no/such/folder: no such folder" in proc.stderr, (sub, proc.stderr)
    rc, data = cache_json(built, "verify", "--cache-dir", "no/such/folder")
    assert rc == 2 and "no such folder" in data["error"]


def test_gc_keeps_the_cache_under_a_size_and_the_program_still_runs(built: Proj) -> None:
    total = sum(p.stat().st_size for p in entries(built))
    proc = built.qd("cache", "gc", "--max-size", str(total // 2))
    assert proc.returncode == 0 and "deleted" in proc.stdout
    assert sum(p.stat().st_size for p in entries(built)) <= total // 2
    check_results(built.main(env={"QD_CACHE_DIR": str(built.root / "build" / "cache")}))
    assert built.qd("cache", "gc", "--max-size", "lots").returncode == 2


def test_clear_deletes_everything(built: Proj) -> None:
    proc = built.qd("cache", "clear", "--yes")
    assert proc.returncode == 0 and entries(built) == []


def test_explain_shows_parts_and_what_differs(built: Proj) -> None:
    rc, hits = cache_json(built, "explain", "app.kernels:apply")
    assert rc == 0 and [h["found"] for h in hits] == [True, True]
    assert hits[0]["parts"]["config.cpu_target"] == "host" and "def apply" in hits[0]["parts"]["source"]

    src = built.root / "app" / "kernels.py"
    src.write_text(src.read_text().replace("x[i] *= n", "x[i] *= n * 1"))
    rc, misses = cache_json(built, "explain", "app.kernels:apply")
    assert rc == 1 and [m["found"] for m in misses] == [False, False]  # one source text: both signatures miss
    rc, one = cache_json(built, "explain", "app.kernels:apply", "--signature",
                         '{ x = "numpy[f64, 1]", n = 3, mode = "MUL" }')  # fmt: skip
    assert rc == 1 and one[0]["differences"][0][0] == "source"
    human = built.qd("cache", "explain", "app.kernels:apply", "--signature", '{ x = "numpy[f64, 1]", n = 3, mode = "MUL" }')
    assert "-            x[i] *= n" in human.stdout and "+            x[i] *= n * 1" in human.stdout

    rc, other = cache_json(built, "explain", "app.kernels:apply", "--signature",
                           '{ x = "ndarray[f32, 1]", n = 7, mode = "ADD" }')  # fmt: skip
    assert rc == 1 and [d[0] for d in other[0]["differences"]] == ["signature"] or "source" in [
        d[0] for d in other[0]["differences"]
    ]
    bad = built.qd("cache", "explain", "app.kernels:apply", "--signature", "{ x = ")
    assert bad.returncode == 2 and "--signature" in bad.stderr
    assert built.qd("cache", "explain", "app.kernels:nope").returncode == 2
