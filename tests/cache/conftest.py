"""Cross-process cache tests: each test writes a small project and runs it in fresh Python processes."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest


@dataclass
class Run:
    out: dict[str, Any]
    stderr: str
    stdout: str


class Project:
    def __init__(self, root: Path, cache: Path) -> None:
        self.root = root
        self.cache = cache

    def write(self, name: str, text: str) -> Path:
        path = self.root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
        return path

    def run(self, *args: str, script: str = "app.py", env: dict[str, str] | None = None, check: bool = True,
            cwd: Path | None = None) -> Run:  # fmt: skip
        """Run `script` (with `args`) in a fresh process; its last JSON line of output is `Run.out`."""
        full_env = {**os.environ, "QD_CACHE_DIR": str(self.cache), "QD_LOG_LEVEL": "warn", **(env or {})}
        full_env.pop("PYTHONDONTWRITEBYTECODE", None)
        proc = subprocess.run([sys.executable, script, *args], cwd=cwd or self.root, env=full_env,
                              capture_output=True, text=True, timeout=300)  # fmt: skip
        if check and proc.returncode != 0:
            raise AssertionError(f"{script} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
        lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
        return Run(json.loads(lines[-1]) if lines else {}, proc.stderr, proc.stdout)


@pytest.fixture
def project(tmp_path: Path) -> Project:
    (tmp_path / "proj").mkdir()
    return Project(tmp_path / "proj", tmp_path / "cache")


# The observations of every kernel called, printed as JSON by the child programs.
REPORT = '''
import json as _json

def report(**values):
    out = dict(values)
    for name, k in list(globals().items()):
        prim = getattr(k, "_primal", None)
        if prim is not None and getattr(prim, "src_ll_cache_observations", None) is not None:
            o = prim.src_ll_cache_observations
            out[name] = [o.cache_key_generated, o.cache_validated, o.cache_loaded, o.cache_stored]
    print(_json.dumps(out))
'''

STORED = [True, False, False, True]
LOADED = [True, True, True, False]


def make_read_only(path: Path) -> list[str] | None:
    """Make a folder tree refuse writes, also for root (immutable attribute). Returns the undo command, or None
    when this machine cannot (the test then skips)."""
    if os.geteuid() == 0:
        if shutil.which("chattr") is None:
            return None
        if subprocess.run(["chattr", "-R", "+i", str(path)], capture_output=True).returncode != 0:
            return None
        undo = ["chattr", "-R", "-i", str(path)]
    else:
        subprocess.run(["chmod", "-R", "a-w", str(path)], check=True)
        undo = ["chmod", "-R", "u+w", str(path)]
    try:
        (path / "probe").write_text("x")
    except OSError:
        return undo
    subprocess.run(undo)
    return None



def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait(proc: subprocess.Popen[bytes], ready: Any, seconds: float = 30.0) -> bool:
    import time

    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            ready()
            return True
        except Exception:
            time.sleep(0.05)
    return False


class RedisServer:
    """A real redis-server on 127.0.0.1 for the remote cache tests, with its data in a temp folder."""

    name = "redis"

    def __init__(self, folder: Path) -> None:
        import redis

        self.proc: subprocess.Popen[bytes] | None = None
        for _ in range(5):  # a free port may be taken between the probe and the server's bind: try another
            self.port = _free_port()
            self.proc = subprocess.Popen(
                ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                 "--dir", str(folder), "--protected-mode", "no"],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            )  # fmt: skip
            self.client = redis.Redis(port=self.port, socket_timeout=5)
            if _wait(self.proc, self.client.ping, 10):
                return
            self.stop()
        raise RuntimeError("redis-server did not start")

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    @property
    def env(self) -> dict[str, str]:
        return {"QD_REMOTE_CACHE": self.url}

    def names(self) -> list[str]:
        return sorted(k.decode() for k in self.client.keys("qd:*"))

    def kind(self, name: str) -> str:
        return name.split(":")[2]

    def get(self, name: str) -> bytes:
        return bytes(self.client.get(name))

    def set(self, name: str, value: bytes) -> None:
        self.client.set(name, value)

    def clear(self) -> None:
        self.client.flushall()

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


class S3Server(RedisServer):
    """A local S3-compatible server (moto's server mode) on 127.0.0.1, with one bucket."""

    name = "s3"
    BUCKET = "qd-fleet"

    def __init__(self, folder: Path) -> None:
        import boto3

        self.proc = None
        for _ in range(5):
            self.port = _free_port()
            self.proc = subprocess.Popen([sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(self.port)],
                                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=folder)  # fmt: skip
            self.client = boto3.session.Session(**self.credentials()).client("s3", endpoint_url=self.endpoint)
            if _wait(self.proc, lambda: self.client.create_bucket(Bucket=self.BUCKET)):
                return
            self.stop()
        raise RuntimeError("moto's S3 server did not start")

    @staticmethod
    def credentials() -> dict[str, str]:
        return {"aws_access_key_id": "testing", "aws_secret_access_key": "testing", "region_name": "us-east-1"}

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def url(self) -> str:
        return f"s3://{self.BUCKET}/team-a"

    @property
    def env(self) -> dict[str, str]:
        return {"QD_REMOTE_CACHE": self.url, "AWS_ENDPOINT_URL": self.endpoint, "AWS_ACCESS_KEY_ID": "testing",
                "AWS_SECRET_ACCESS_KEY": "testing", "AWS_DEFAULT_REGION": "us-east-1"}  # fmt: skip

    def names(self) -> list[str]:
        listed = self.client.list_objects_v2(Bucket=self.BUCKET).get("Contents", [])
        return sorted(o["Key"] for o in listed)

    def kind(self, name: str) -> str:
        return name.split("/")[-2]

    def get(self, name: str) -> bytes:
        return self.client.get_object(Bucket=self.BUCKET, Key=name)["Body"].read()

    def set(self, name: str, value: bytes) -> None:
        self.client.put_object(Bucket=self.BUCKET, Key=name, Body=value)

    def clear(self) -> None:
        for name in self.names():
            self.client.delete_object(Bucket=self.BUCKET, Key=name)


@pytest.fixture(params=["redis", "s3"])
def remote_server(request: pytest.FixtureRequest, tmp_path: Path):
    """A real remote store started for the test and stopped after it: redis-server (the Debian package) or
    moto's S3 server (a PyPI package). Skips where it is missing; `make venv` and .ci/run install both."""
    if request.param == "redis":
        if shutil.which("redis-server") is None:
            pytest.skip("redis-server is not installed (apt-get install redis-server)")
        pytest.importorskip("redis")
    else:
        pytest.importorskip("boto3")
        pytest.importorskip("moto.server")
    folder = tmp_path / "remote-server"
    folder.mkdir()
    server = RedisServer(folder) if request.param == "redis" else S3Server(folder)
    try:
        yield server
    finally:
        server.stop()
