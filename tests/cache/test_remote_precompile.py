"""`qd precompile --shard K/N` with a remote cache: N jobs compile disjoint parts and push them, one run without
--shard pulls everything and links the bundle without compiling, and a fresh runner then starts from it."""

from __future__ import annotations

import pytest

from quadrants.aot.precompile import parse_shard, shard_of

KERNELS = "import quadrants as qd\n" + "".join(f'''
@qd.kernel(fastcache=True)
def k{i}(x: qd.types.NDArray[qd.f32, 1]):
    for j in range(x.shape[0]):
        x[j] = x[j] * {i + 2}.0 + 1.0
''' for i in range(8))

MANIFEST = 'modules = ["kernels"]\n' + "".join(f'[[kernel]]\nname = "kernels:k{i}"\n' for i in range(8))

PRECOMPILE = """
import json, sys
from quadrants.aot.opened import open_project
from quadrants.aot.precompile import parse_shard, precompile
if __name__ == "__main__":  # the workers are spawned: they import this file again
    shard = parse_shard(sys.argv[1]) if sys.argv[1] != "all" else None
    report = precompile(open_project(None, cache_dir=sys.argv[2]), jobs=2, shard=shard)
    print(json.dumps(report.to_json()))
"""

RUN = """
import json, sys
import quadrants as qd
qd.init(arch=qd.cpu)
import kernels
a = qd.ndarray(qd.f32, (2,))
out = []
for i in range(8):
    a.fill(1.0)
    getattr(kernels, f"k{i}")(a)
    out.append(a.to_numpy().tolist()[0])
print(json.dumps({"out": out, "compiles": qd.stats()["compiles"], "cache": qd.stats()["cache"]}))
"""


def test_shards_partition_the_signatures() -> None:
    names = [(f"m:k{i}", j, t) for i in range(40) for j in range(3) for t in ("host", "x86-64-v3")]
    shards = [shard_of(k, j, t, 4) for k, j, t in names]
    assert set(shards) == {1, 2, 3, 4} and shards == [shard_of(k, j, t, 4) for k, j, t in names]  # stable
    assert all(shard_of(k, j, t, 1) == 1 for k, j, t in names)
    assert parse_shard("2/4") == (2, 4)
    for bad in ("0/4", "5/4", "4", "a/b", "-1/2"):
        with pytest.raises(ValueError):
            parse_shard(bad)


@pytest.mark.slow
def test_sharded_precompile_through_the_remote(project, remote_server, tmp_path) -> None:
    project.write("kernels.py", KERNELS)
    project.write("qd.toml", MANIFEST)
    project.write("precompile.py", PRECOMPILE)
    project.write("run.py", RUN)
    env = remote_server.env
    compiled: list[str] = []
    for k in (1, 2, 3):  # three CI jobs, each with its own (empty) cache folder
        cache = str(tmp_path / f"job{k}")
        r = project.run(f"{k}/3", cache, script="precompile.py", env={**env, "QD_CACHE_DIR": cache}).out
        assert r["exit_code"] == 0 and r["shard"] == f"{k}/3" and r["bundles"] == {}, (r["errors"], [i["detail"] for i in r["items"]])
        assert r["signatures"] + r["other_shards"] == 8 and r["compiled"] == r["signatures"]
        assert r["pushed"] >= 2 * r["compiled"]  # each kernel's artifact and fast entry
        compiled += [i["kernel"] for i in r["items"]]
    assert sorted(compiled) == sorted(f"kernels:k{i}" for i in range(8))  # each in exactly one shard
    gather = str(tmp_path / "gather")
    r = project.run("all", gather, script="precompile.py", env={**env, "QD_CACHE_DIR": gather}).out
    assert r["exit_code"] == 0 and r["compiled"] == 0 and r["pulled"] == 8 and r["cached"] == 8
    assert "host" in r["bundles"] and r["pushed"] >= 9  # the bundle and the fast entries pointing at it
    fresh = str(tmp_path / "runner")
    run = project.run(script="run.py", env={**env, "QD_CACHE_DIR": fresh}).out
    assert run["out"] == [i + 3.0 for i in range(8)] and run["compiles"] == 0
    assert run["cache"]["remote_hits"] == 3  # a fast entry with the runtime library, then the bundle: all 8 kernels
