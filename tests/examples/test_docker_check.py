"""tools/docker_check.py's reading of a Dockerfile and its verdict on the runs (`make docker-check` itself builds
an image: it runs outside the test suite, as root with buildah)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("docker_check", ROOT / "tools" / "docker_check.py")
assert _spec and _spec.loader
dc = importlib.util.module_from_spec(_spec)
sys.modules["docker_check"] = dc
_spec.loader.exec_module(dc)


@pytest.mark.parametrize(
    "ref, qualified",
    [
        ("python:3.11-slim", "docker.io/library/python:3.11-slim"),
        ("ubuntu", "docker.io/library/ubuntu:latest"),
        ("nvidia/cuda:12.4.1-base-ubuntu22.04", "docker.io/nvidia/cuda:12.4.1-base-ubuntu22.04"),
        ("ghcr.io/owner/img:1", "ghcr.io/owner/img:1"),
        ("localhost:5000/img", "localhost:5000/img:latest"),
        ("localhost/img:2", "localhost/img:2"),
    ],
)
def test_short_names_resolve_as_docker_resolves_them(ref: str, qualified: str) -> None:
    assert dc.qualified_image(ref) == qualified


def test_the_cloth_dockerfile() -> None:
    text = (ROOT / "examples" / "cloth" / "Dockerfile").read_text()
    stages = dc.dockerfile_stages(text)
    assert [(s.image, s.name) for s in stages] == [("python:3.11-slim", "build"), ("python:3.11-slim", "runtime")]
    assert dc.external_bases(stages) == ["docker.io/library/python:3.11-slim"]
    assert dc.precompile_target(text) == "x86-64-v3"
    assert dc.base_recipe("docker.io/library/python:3.11-slim")[:5] == [
        "mmdebstrap", "--variant=apt", "--include=python3,python3-venv,python-is-python3,ca-certificates",
        "bookworm", "OUTPUT"]  # fmt: skip


def test_stages_built_on_stages_need_no_base() -> None:
    stages = dc.dockerfile_stages("FROM --platform=linux/amd64 python:3.11-slim AS a\nFROM a AS b\nFROM scratch\n")
    assert [(s.image, s.name) for s in stages] == [("python:3.11-slim", "a"), ("a", "b"), ("scratch", None)]
    assert dc.external_bases(stages) == ["docker.io/library/python:3.11-slim"]


def test_no_recipe_for_other_bases() -> None:
    with pytest.raises(dc.CheckError, match="no local recipe"):
        dc.base_recipe("docker.io/library/python:3.12-slim")
    with pytest.raises(dc.CheckError, match="no local recipe"):
        dc.base_recipe("docker.io/nvidia/cuda:12.4.1-base-ubuntu22.04")


def _run(compiles: int, hits: int, llvmlite: bool = False, kinetic: float = 0.5) -> dict:
    return {"compiles": compiles, "fastcache_hits": hits, "llvmlite_imported": llvmlite, "ready_ms": 100.0,
            "first_frame_ms": 5.0, "kinetic": kinetic, "n": 64}  # fmt: skip


def test_the_verdict() -> None:
    cold = _run(19, 0)
    assert dc.program_output(cold) == {"kinetic": 0.5, "n": 64}
    assert dc.judge(cold, _run(0, 19), [_run(0, 19), _run(0, 19, kinetic=0.25)]) == []  # threads: not compared
    failures = dc.judge(cold, _run(0, 19, kinetic=0.25), [_run(1, 18), _run(0, 19, llvmlite=True)])
    assert failures == [
        "warm run 1: 1 compiles (want 0)",
        "warm run 1: 18 cache hits, the cold run compiled 19 kernels (want every kernel to hit)",
        "warm run 2: llvmlite imported (True)",
        "output {'kinetic': 0.25, 'n': 64} != the cold run's {'kinetic': 0.5, 'n': 64}",
    ]
    assert dc.judge(_run(0, 19), _run(0, 19), [])[0].startswith("the cold run compiled nothing")


def test_the_genesis_dockerfile() -> None:
    text = (ROOT / "examples" / "genesis" / "Dockerfile").read_text()
    stages = dc.dockerfile_stages(text)
    assert [(s.image, s.name) for s in stages] == [("python:3.11-slim", "build"), ("python:3.11-slim", "runtime")]
    assert dc.precompile_target(text) == "x86-64-v3"
    assert "/wheels/torch-*cpu*.whl" in text  # the CPU torch wheel docker_check mounts, when the host has one


def test_the_wheel_folder_is_mounted_only_where_the_dockerfile_reads_it(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("TORCH_WHEELS", str(tmp_path))
    reads = 'RUN set -- /wheels/torch-*cpu*.whl; pip install "$1"\n'
    assert dc.wheel_mounts(reads) == ["-v", f"{tmp_path.resolve()}:/wheels:ro"]
    assert dc.wheel_mounts("RUN pip install --find-links /wheels torch\n") == ["-v", f"{tmp_path.resolve()}:/wheels:ro"]
    for other in ["RUN pip install torch\n", "RUN ls /opt/wheels\n", "COPY /wheels.txt /x\n", "RUN ls /wheelsx\n"]:
        assert dc.wheel_mounts(other) == [], other
    monkeypatch.setenv("TORCH_WHEELS", str(tmp_path / "missing"))
    assert dc.wheel_mounts(reads) == []  # no folder: the Dockerfile falls back to an index
    assert dc.wheel_mounts((ROOT / "examples" / "cloth" / "Dockerfile").read_text()) == []


def _genesis_run(compiles: int, hits: int, offline: int, loaded: list[str], qpos: float = 0.5) -> dict:
    return {"compiles": compiles, "fastcache_hits": hits, "offline_hits": offline, "llvmlite_imported": True,
            "compiler_loaded": loaded, "ready_ms": 7000.0, "franka_qpos": [qpos]}  # fmt: skip


def test_a_program_that_imports_llvmlite_itself_is_judged_by_the_compiler_quadrants_loaded() -> None:
    cold = _genesis_run(32, 0, 0, ["quadrants.codegen", "quadrants.codegen.cpu"])
    assert dc.program_output(cold) == {"franka_qpos": [0.5]}  # the statistics are not output
    warm = _genesis_run(0, 30, 2, [])
    assert dc.judge(cold, warm, [warm, warm]) == []  # llvmlite imported (numba), no compiler module of quadrants
    assert dc.judge(cold, warm, [_genesis_run(0, 30, 2, ["quadrants.codegen"]), _genesis_run(0, 30, 0, [])]) == [
        "warm run 1: quadrants loaded its compiler (['quadrants.codegen'])",
        "warm run 2: 30 cache hits, the cold run compiled 32 kernels (want every kernel to hit)",
    ]
    assert dc.judge(cold, {**warm, "compiler_loaded": True}, [])[0].startswith("the one-thread warm run: quadrants")


def test_without_compiler_loaded_llvmlite_stays_judged() -> None:
    """The cloth reports no `compiler_loaded`: an imported llvmlite fails it, whatever else it reports."""
    cold = _run(19, 0)
    warm = {**_run(0, 19), "llvmlite_imported": True}
    assert dc.judge(cold, _run(0, 19), [warm]) == ["warm run 1: llvmlite imported (True)"]
    assert dc.judge(cold, _run(0, 19), [{**_run(0, 19), "offline_hits": 0}]) == []
    assert dc.cache_hits({"fastcache_hits": 3, "offline_hits": 2}) == 5
    assert dc.cache_hits({"fastcache_hits": True}) is None and dc.cache_hits({}) is None


def test_the_genesis_gpu_dockerfile() -> None:
    """Dockerfile.cuda is a GPU image: docker_check checks its cache for every architecture it bakes (its command
    needs a GPU), with the manifest its build precompiled; the CPU Dockerfiles name none and run their command."""
    text = (ROOT / "examples" / "genesis" / "Dockerfile.cuda").read_text()
    assert [(s.image, s.name) for s in dc.dockerfile_stages(text)] == [("python:3.11-slim", "build"),
                                                                       ("python:3.11-slim", "runtime")]  # fmt: skip
    assert dc.cuda_targets(text) == ["cuda:sm_80", "cuda:sm_90", "cuda:sm_120"]
    assert dc.precompile_manifest(text) == "qd-cuda.toml"
    assert (ROOT / "examples" / "genesis" / "qd-cuda.toml").is_file()
    for cpu in ("cloth", "genesis"):
        cpu_text = (ROOT / "examples" / cpu / "Dockerfile").read_text()
        assert dc.cuda_targets(cpu_text) == []
        assert dc.precompile_manifest(cpu_text) == "qd.toml"
    assert dc.cuda_targets("RUN qd precompile --target cuda:sm_90a --target=cuda:sm_100\n") == ["cuda:sm_90a",
                                                                                                "cuda:sm_100"]  # fmt: skip


def test_the_verdict_on_a_gpu_images_cache() -> None:
    full = {"signatures": 126, "cached": 126, "missing": 0, "failed": 0}
    assert dc.judge_gpu_check("cuda:sm_90", 0, full) == []
    assert dc.judge_gpu_check("cuda:sm_90", 1, {**full, "cached": 120, "missing": 6}) == [
        "cuda:sm_90: 120 of 126 signatures cached (missing 6, failed 0, exit 1)"]
    assert dc.judge_gpu_check("cuda:sm_80", 0, {**full, "signatures": 0, "cached": 0}) != []  # an empty manifest
    assert dc.judge_gpu_check("cuda:sm_80", 2, full) != []
