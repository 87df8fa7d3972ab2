"""The remote cache on real stores (redis-server, moto's S3 server): processes with separate local caches share what
they compile. Each test runs against both."""

from __future__ import annotations

import socket
import threading
import time

import pytest

from quadrants.cache.remote import RemoteCache
from tests.cache.conftest import LOADED, REPORT, STORED

HEADER = "import numpy as np\nimport quadrants as qd\n" + REPORT

APP = HEADER + '''
import os, signal, sys
qd.init(arch=qd.cpu)

@qd.kernel(fastcache=True)
def scale(x: qd.types.NDArray[qd.f32, 1], s: qd.f32):
    for i in range(x.shape[0]):
        x[i] = x[i] * 2.0 + s

@qd.kernel(fastcache=True)
def total(x: qd.types.NDArray[qd.f32, 1]) -> qd.f32:
    t = 0.0
    for i in range(x.shape[0]):
        t += x[i]
    return t

a = qd.ndarray(qd.f32, (4,))
a.fill(1.0)
scale(a, 0.5)
if os.environ.get("KILL_REMOTE"):  # the remote dies between the two kernels
    import time
    os.kill(int(os.environ["KILL_REMOTE"]), signal.SIGKILL)
    time.sleep(0.3)
r = total(a)
report(x=a.to_numpy().tolist(), r=r, compiles=qd.stats()["compiles"], cache=qd.stats()["cache"],
       client=any(m in sys.modules for m in ("redis", "boto3", "botocore")), remote="quadrants.cache.remote" in sys.modules,
       llvmlite="llvmlite" in sys.modules)
'''
RIGHT = {"x": [2.5] * 4, "r": 10.0}


def _right(run) -> bool:
    return run.out["x"] == RIGHT["x"] and run.out["r"] == RIGHT["r"]


def _warnings(stderr: str) -> int:
    return stderr.count("is off for this process")


pytestmark = pytest.mark.slow  # every test runs its program in fresh processes


def test_a_fresh_process_hits_through_the_remote(project, remote_server, tmp_path) -> None:
    project.write("app.py", APP)
    env = remote_server.env
    first = project.run(env=env)
    assert first.out["compiles"] == 2 and first.out["scale"] == STORED and _right(first)
    kinds = sorted({remote_server.kind(n) for n in remote_server.names()})
    assert kinds == ["artifact", "bundle", "fast", "runtime"]
    fresh = {**env, "QD_CACHE_DIR": str(tmp_path / "other-cache")}
    second = project.run(env=fresh)  # an empty local cache: everything comes from the remote, nothing compiles
    assert second.out["compiles"] == 0 and not second.out["llvmlite"] and _right(second)
    assert second.out["scale"] == LOADED and second.out["total"] == LOADED
    c = second.out["cache"]
    assert c["remote_hits"] == 3 and c["remote_misses"] == 0 and c["remote_bytes_in"] > 0  # fast, bundle, runtime
    third = project.run(env=fresh)  # now a local hit: the remote is not even imported
    assert third.out["compiles"] == 0 and not third.out["client"] and not third.out["remote"] and _right(third)


def test_no_remote_imports_nothing(project) -> None:
    project.write("app.py", APP)
    run = project.run()
    assert run.out["compiles"] == 2 and not run.out["client"] and not run.out["remote"]


def test_read_only_remote_reads_but_never_writes(project, remote_server, tmp_path) -> None:
    project.write("app.py", APP)
    url = remote_server.url
    for i, env in enumerate(({"QD_REMOTE_CACHE": url + "?readonly=1"}, {"QD_REMOTE_CACHE_READONLY": "1"})):
        run = project.run(env={**remote_server.env, **env, "QD_CACHE_DIR": str(tmp_path / f"ro-{i}")})
        assert run.out["compiles"] == 2 and _right(run)
        assert remote_server.names() == []
    project.run(env=remote_server.env)  # a trusted job fills the remote
    reader = project.run(env={**remote_server.env, "QD_REMOTE_CACHE": url + "?readonly=1",
                              "QD_CACHE_DIR": str(tmp_path / "ro-fresh")})  # fmt: skip
    assert reader.out["compiles"] == 0 and reader.out["cache"]["remote_hits"] == 3 and _right(reader)


def test_the_remote_killed_mid_run(project, remote_server, tmp_path) -> None:
    project.write("app.py", APP)
    assert remote_server.proc is not None
    run = project.run(env={**remote_server.env, "KILL_REMOTE": str(remote_server.proc.pid)})
    assert _right(run) and run.out["compiles"] == 2
    assert _warnings(run.stderr) == 1 and run.out["cache"]["remote_errors"] == 1
    again = project.run(env=remote_server.env)  # the local cache still serves
    assert again.out["compiles"] == 0 and _right(again) and _warnings(again.stderr) == 0


def _at(scheme: str, port: int) -> dict[str, str]:
    if scheme == "redis":
        return {"QD_REMOTE_CACHE": f"redis://127.0.0.1:{port}/0"}
    return {"QD_REMOTE_CACHE": "s3://bucket/prefix", "AWS_ENDPOINT_URL": f"http://127.0.0.1:{port}",
            "AWS_ACCESS_KEY_ID": "x", "AWS_SECRET_ACCESS_KEY": "x", "AWS_DEFAULT_REGION": "us-east-1"}  # fmt: skip


@pytest.mark.parametrize("scheme", ["redis", "s3"])
def test_a_remote_that_is_down_or_silent_costs_one_short_wait(project, tmp_path, scheme) -> None:
    pytest.importorskip("redis" if scheme == "redis" else "boto3")
    project.write("app.py", APP)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        closed = s.getsockname()[1]  # nothing listens there once the socket closes
    run = project.run(env=_at(scheme, closed))
    assert _right(run) and run.out["compiles"] == 2 and _warnings(run.stderr) == 1
    silent = socket.socket()  # accepts connections and never answers
    silent.bind(("127.0.0.1", 0))
    silent.listen(8)
    held: list[socket.socket] = []
    accepting = threading.Thread(target=lambda: [held.append(silent.accept()[0]) for _ in range(4)], daemon=True)
    accepting.start()
    try:
        t0 = time.monotonic()
        run = project.run(env={**_at(scheme, silent.getsockname()[1]), "QD_REMOTE_CACHE_TIMEOUT": "0.3",
                               "QD_CACHE_DIR": str(tmp_path / "c2")})  # fmt: skip
        elapsed = time.monotonic() - t0
    finally:
        silent.close()
        for c in held:
            c.close()
    assert _right(run) and run.out["compiles"] == 2 and _warnings(run.stderr) == 1
    assert "timeout" in run.stderr.lower() and run.out["cache"]["remote_errors"] == 1
    assert elapsed < 30  # one 0.3 s wait, not one per lookup and push (the process itself takes seconds)


def test_a_corrupt_remote_entry_is_ignored_and_rebuilt(project, remote_server, tmp_path) -> None:
    project.write("app.py", APP)
    env = remote_server.env
    project.run(env=env)
    for name in remote_server.names():
        value = bytearray(remote_server.get(name))
        value[len(value) // 3] ^= 0xFF  # one flipped byte in every entry
        remote_server.set(name, bytes(value))
    run = project.run(env={**env, "QD_CACHE_DIR": str(tmp_path / "c2")})
    assert _right(run) and run.out["compiles"] == 2 and run.out["cache"]["remote_rejected"] >= 1
    assert "damaged remote cache entry" in run.stderr and _warnings(run.stderr) == 0
    healed = project.run(env={**env, "QD_CACHE_DIR": str(tmp_path / "c3")})  # the compile replaced the entries
    assert _right(healed) and healed.out["compiles"] == 0


def test_signed_entries(project, remote_server, tmp_path) -> None:
    project.write("app.py", APP)
    url = remote_server.env
    project.run(env={**url, "QD_REMOTE_CACHE_SECRET": "s3cret"})
    same = project.run(env={**url, "QD_REMOTE_CACHE_SECRET": "s3cret", "QD_CACHE_DIR": str(tmp_path / "a"),
                            "QD_REMOTE_CACHE_READONLY": "1"})  # fmt: skip
    assert same.out["compiles"] == 0 and _right(same)
    other = project.run(env={**url, "QD_REMOTE_CACHE_SECRET": "other", "QD_CACHE_DIR": str(tmp_path / "b"),
                             "QD_REMOTE_CACHE_READONLY": "1"})  # fmt: skip
    assert other.out["compiles"] == 2 and other.out["cache"]["remote_rejected"] >= 1 and _right(other)
    remote_server.clear()
    project.run(env={**url, "QD_CACHE_DIR": str(tmp_path / "unsigned-writer")})  # no secret: unsigned entries
    strict = project.run(env={**url, "QD_REMOTE_CACHE_SECRET": "s3cret", "QD_CACHE_DIR": str(tmp_path / "c"),
                              "QD_REMOTE_CACHE_READONLY": "1"})  # fmt: skip
    assert strict.out["compiles"] == 2 and strict.out["cache"]["remote_hits"] == 0 and _right(strict)


@pytest.mark.parametrize("secret", [None, b"k"])
def test_signatures_round_trip(secret) -> None:
    remote = RemoteCache("redis://:pw@h:1/0?readonly=1", False, 1.0, secret)
    assert remote.readonly and "pw" not in remote.shown and "readonly" not in remote.url
    data = b"entry bytes"
    signed = remote.sign("qd:k", data)
    assert remote.unsign("qd:k", signed) == data
    if secret is not None:
        assert remote.unsign("qd:other", signed) is None  # a signature is for its key
        assert remote.unsign("qd:k", data) is None  # unsigned
        assert remote.unsign("qd:k", signed[:3] + b"X" + signed[4:]) is None
    else:
        assert remote.unsign("qd:k", RemoteCache("redis://h", False, 1.0, b"k").sign("qd:k", data)) == data


EXPLAIN = """
import dataclasses, json, sys
from quadrants.aot.explain import explain_kernel
print(json.dumps({"explained": [dataclasses.asdict(r) for r in explain_kernel("app:total", None, None, None,
                                                                                sys.argv[1])]}))
"""


def test_stats_and_explain_see_the_remote(project, remote_server, tmp_path) -> None:
    from quadrants.aot.inventory import open_store, totals

    project.write("app.py", APP)
    project.write("explain.py", EXPLAIN)
    project.write("explained/app.py", APP.split("a = qd.ndarray")[0])  # the kernels, not the program
    env = remote_server.env
    project.run(env=env)
    fresh = str(tmp_path / "fresh")
    project.run(env={**env, "QD_CACHE_DIR": fresh})
    pushed = totals(open_store(str(project.cache)))["recorded"]
    assert pushed["remote_pushes"] >= 6 and pushed["remote_bytes_out"] > 0 and pushed["remote_misses"] >= 2
    pulled = totals(open_store(fresh))["recorded"]
    assert pulled["remote_hits"] == 3 and pulled["remote_bytes_in"] > 0 and "remote_pushes" not in pulled
    empty = str(tmp_path / "empty")

    def explain(env: dict[str, str]) -> dict:
        (r,) = project.run(empty, script="../explain.py", env=env, cwd=project.root / "explained").out["explained"]
        return r

    r = explain({**env, "QD_CACHE_DIR": empty})
    assert r["remote"] is True and not r["found"]  # explaining asks the remote whether it has it, pulls nothing
    assert not list((tmp_path / "empty").rglob("fast/*/*.qd"))
    remote_server.clear()
    assert explain({**env, "QD_CACHE_DIR": empty})["remote"] is False
    assert explain({"QD_CACHE_DIR": empty, "QD_REMOTE_CACHE": ""})["remote"] is None
