"""Build an example's Dockerfile for real and check its runtime stage starts without compiling.

    python3 tools/docker_check.py examples/cloth [--runs 3] [--keep] [--json report.json]

What `make docker-check` runs, on a machine without a Docker daemon or a reachable container registry (CI's, this
project's build machines): root, Debian's and PyPI's package indexes reachable.

1. Tools: buildah (builds), podman (imports the base), mmdebstrap (makes it), installed with apt where missing.
2. Base: every `FROM` that is not a stage of the same file is made locally, once, and kept: for
   `python:3.X-slim`, a Debian with that Python (`mmdebstrap`, ~25 s) imported under the name the build looks up
   (`docker.io/library/python:3.X-slim`), so the build runs with `--pull=never`. The image carries a label with
   the recipe; a changed recipe makes it again.
3. Build: `buildah bud --isolation chroot` of EXAMPLE/Dockerfile from the repository root (its context), once for
   the last stage and once for each named stage before it (the layer cache makes those free), so each stage's
   size can be printed. The host's CA bundle is mounted, with an /etc/pip.conf naming it, for networks that
   reach PyPI through a TLS proxy (harmless elsewhere; the build stage keeps the empty mount point, the runtime
   stage copies nothing from /etc). A Dockerfile that names `/wheels` (the Genesis one: `pip install
   /wheels/torch-*cpu*.whl` when there is one, PyTorch's CPU index otherwise) gets the host's wheel folder,
   `TORCH_WHEELS` (default /opt/wheels), mounted there read-only when it exists: PyPI's own torch wheel pulls
   GBs of CUDA libraries, and PyTorch's index may not be reachable from the builder.
4. Run: the runtime image as a working container (`buildah from`), its command run as the image's user
   (`buildah run --isolation chroot --user USER`, podman cannot start containers here) with `--json` appended.
   The command must print, as its last line, a JSON object with `compiles`, `fastcache_hits`,
   `llvmlite_imported` and `ready_ms`; optionally `offline_hits` (kernels served by the offline cache, counted
   with the fastcache hits) and `compiler_loaded` (below); keys ending in `_ms` are timings, every other key is
   the program's output.
   Checked: the image's cache (its `QD_CACHE_DIR`) is not writable by that user and no file in it changes;
   every warm run compiles nothing, imports no llvmlite, writes nothing to stderr and hits as many kernels as a
   cold run (the same image, the same user, an empty cache in /tmp, the CPU target of the Dockerfile's
   `qd precompile --target`) compiles. "Imports no llvmlite" cannot hold for a program whose own dependencies
   import it (Genesis imports numba, which imports llvmlite): such a program reports `compiler_loaded`, the
   compiler modules *quadrants* loaded (`quadrants.codegen*`: every path of quadrants to llvmlite, compiling or
   linking in-process with ORC, goes through them), and that is judged instead: it must be empty (or false).
   Without the key, `llvmlite_imported` must be false, as for the cloth. The output of a warm run equals
   the cold run's exactly, both on one thread (`QD_CPU_MAX_NUM_THREADS=1`: with more, parallel float sums such
   as the cloth's energies add in a varying order and differ in the last digits from run to run).
5. Clean up: the working container, the built images and their dangling layers go; the base stays (`--keep`
   keeps the built images too).

Exit status 0 when every check passed, 1 when one failed (each failure printed), 2 when the build or a tool failed.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TOOLS = {"buildah": "buildah", "podman": "podman", "mmdebstrap": "mmdebstrap"}  # command -> Debian package
# The cache statistics a run reports (not its output); offline_hits and compiler_loaded are optional.
STATS_KEYS = ("compiles", "fastcache_hits", "offline_hits", "llvmlite_imported", "compiler_loaded")
WHEELS_MOUNT = "/wheels"  # where a Dockerfile that names it finds the host's TORCH_WHEELS folder
CA_DIR = Path("/etc/ssl/certs")
DEBIAN_MIRROR = "http://deb.debian.org"
# Debian releases by the Python version they ship: a `python:3.X-slim` base is made from the one with 3.X.
DEBIAN_PYTHON = {"3.11": "bookworm", "3.13": "trixie"}
BASE_LABEL = "io.quadrants.docker-check.recipe"


class CheckError(RuntimeError):
    """A tool or the build failed: nothing to check."""


@dataclass
class Stage:
    """One `FROM image [AS name]` of a Dockerfile."""

    image: str
    name: str | None


@dataclass
class Report:
    """What a check measured and what failed."""

    example: str
    base_images: list[str] = field(default_factory=list)
    tools_seconds: float = 0.0
    base_seconds: float = 0.0
    build_seconds: float = 0.0
    sizes_mb: dict[str, float] = field(default_factory=dict)
    user: str = ""
    cache_dir: str = ""
    cold: dict = field(default_factory=dict)
    warm: list[dict] = field(default_factory=list)
    warm_one_thread: dict = field(default_factory=dict)
    ready_ms: float = 0.0
    run_wall_ms: float = 0.0
    gpu_cache: dict[str, dict] = field(default_factory=dict)  # a GPU image: `qd precompile --check` per target
    failures: list[str] = field(default_factory=list)


# --- the Dockerfile ---------------------------------------------------------------------------------------------


def dockerfile_stages(text: str) -> list[Stage]:
    """The stages of a Dockerfile, in order (line continuations and comments as Docker reads them)."""
    stages = []
    for line in text.replace("\\\n", " ").splitlines():
        words = line.split()
        if len(words) >= 2 and words[0].upper() == "FROM":
            args = [w for w in words[1:] if not w.startswith("--")]  # --platform=...
            name = args[2] if len(args) >= 3 and args[1].upper() == "AS" else None
            stages.append(Stage(args[0], name))
    return stages


def qualified_image(ref: str) -> str:
    """The fully qualified name a builder looks up for a short image reference, as Docker resolves it:
    `python:3.11-slim` -> `docker.io/library/python:3.11-slim`."""
    name, tag = ref, "latest"
    last = ref.rsplit("/", 1)[-1]
    if "@" in last:
        name, tag = ref, ""
    elif ":" in last:
        name, _, tag = ref.rpartition(":")
    first = name.split("/", 1)[0]
    if "/" not in name or not ("." in first or ":" in first or first == "localhost"):
        name = ("docker.io/library/" if "/" not in name else "docker.io/") + name
    return f"{name}:{tag}" if tag else name


def external_bases(stages: list[Stage]) -> list[str]:
    """The images the stages start from that are not earlier stages of the same file, fully qualified."""
    names = {s.name for s in stages if s.name}
    seen: list[str] = []
    for s in stages:
        if s.image not in names and s.image != "scratch" and qualified_image(s.image) not in seen:
            seen.append(qualified_image(s.image))
    return seen


def base_recipe(image: str) -> list[str]:
    """The mmdebstrap command line (without the output) that stands in for a base image the build cannot pull."""
    m = re.fullmatch(r"docker\.io/library/python:(3\.\d+)-slim(?:-(\w+))?", image)
    if not m or (m.group(2) and m.group(2) != DEBIAN_PYTHON.get(m.group(1))) or m.group(1) not in DEBIAN_PYTHON:
        raise CheckError(f"no local recipe for the base image {image}: only python:3.X-slim with X in "
                         f"{sorted(DEBIAN_PYTHON)} (Debian's own Python) can be made here")  # fmt: skip
    suite = DEBIAN_PYTHON[m.group(1)]
    mirrors = [f"deb {DEBIAN_MIRROR}/debian {suite} main", f"deb {DEBIAN_MIRROR}/debian {suite}-updates main",
               f"deb {DEBIAN_MIRROR}/debian-security {suite}-security main"]  # fmt: skip
    return ["mmdebstrap", "--variant=apt", "--include=python3,python3-venv,python-is-python3,ca-certificates",
            suite, "OUTPUT", *mirrors]  # fmt: skip


def recipe_digest(image: str) -> str:
    return hashlib.sha256(json.dumps(base_recipe(image)).encode()).hexdigest()[:16]


# --- running the tools ------------------------------------------------------------------------------------------


def sh(argv: list[str], *, check: bool = True, capture: bool = True, timeout: float = 3600,
       env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:  # fmt: skip
    """Run a command; a failure with check=True raises CheckError carrying its output's tail."""
    proc = subprocess.run(argv, capture_output=capture, text=True, timeout=timeout, env=env)
    if check and proc.returncode != 0:
        tail = ((proc.stdout or "") + (proc.stderr or ""))[-3000:]
        raise CheckError(f"{shlex.join(argv)} exited {proc.returncode}\n{tail}")
    return proc


def say(msg: str) -> None:
    print(f"docker-check: {msg}", flush=True)


def ensure_tools() -> None:
    """Install buildah, podman and mmdebstrap with apt where a command is missing."""
    missing = [pkg for cmd, pkg in TOOLS.items() if shutil.which(cmd) is None]
    if not missing:
        return
    sudo = [] if os.geteuid() == 0 else ["sudo"]
    say(f"installing {' '.join(missing)}")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    install = [*sudo, "apt-get", "install", "-y", "-q", "--no-install-recommends", *missing]
    if sh(install, check=False, env=env).returncode != 0:
        sh([*sudo, "apt-get", "update", "-q"], env=env)
        sh(install, env=env)


def image_exists(name: str) -> bool:
    return sh(["buildah", "inspect", "--type", "image", name], check=False).returncode == 0


def image_label(name: str, label: str) -> str | None:
    proc = sh(["buildah", "inspect", "--type", "image", name], check=False)
    if proc.returncode != 0:
        return None
    labels = json.loads(proc.stdout).get("OCIv1", {}).get("config", {}).get("Labels") or {}
    return labels.get(label)


def ensure_base(image: str) -> bool:
    """Make the base image locally unless it is there with the same recipe; True when it was made now."""
    digest = recipe_digest(image)
    if image_label(image, BASE_LABEL) == digest:
        return False
    if image_exists(image):
        say(f"{image} is there but not from this recipe: made again")
    with tempfile.TemporaryDirectory(prefix="qd-docker-base-") as tmp:
        tar = str(Path(tmp) / "base.tar")
        argv = [tar if a == "OUTPUT" else a for a in base_recipe(image)]
        say(f"making {image}: {shlex.join(argv[:5])} ...")
        sh(argv)
        path = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
        sh(["podman", "import", "--change", f"ENV PATH={path}", "--change", "ENV LANG=C.UTF-8",
            "--change", f"LABEL {BASE_LABEL}={digest}", "--change", 'CMD ["python3"]', tar, image])  # fmt: skip
    return True


def pip_cert_mounts(tmp: Path) -> list[str]:
    """Mounts that make pip in the build trust the host's CA bundle, when it has one under /etc/ssl/certs: the
    folder, and a pip.conf naming the bundle (`--env PIP_CERT=...` would stay in the images' config)."""
    cert = os.environ.get("PIP_CERT") or str(CA_DIR / "ca-certificates.crt")
    if not CA_DIR.is_dir() or not Path(cert).is_file() or not Path(cert).resolve().is_relative_to(CA_DIR.resolve()):
        return []
    conf = tmp / "pip.conf"
    conf.write_text(f"[global]\ncert = {cert}\n")
    return ["-v", f"{CA_DIR}:{CA_DIR}:ro", "-v", f"{conf}:/etc/pip.conf:ro"]


def wheel_mounts(dockerfile_text: str) -> list[str]:
    """The host's wheel folder (`TORCH_WHEELS`, default /opt/wheels) mounted read-only at /wheels, when the
    Dockerfile names /wheels and the folder exists (the Dockerfile falls back to an index without it)."""
    wheels = Path(os.environ.get("TORCH_WHEELS") or "/opt/wheels")
    if not re.search(rf"(?<![\w/.-]){WHEELS_MOUNT}(?![\w.-])", dockerfile_text) or not wheels.is_dir():
        return []
    return ["-v", f"{wheels.resolve()}:{WHEELS_MOUNT}:ro"]


def precompile_target(dockerfile_text: str) -> str | None:
    """The CPU target the Dockerfile's `qd precompile` compiles for (`--target NAME`), if it names one."""
    m = re.search(r"qd precompile\b[^\n]*--target[= ](\S+)", dockerfile_text)
    return m.group(1) if m else None


def cuda_targets(dockerfile_text: str) -> list[str]:
    """The GPU architectures a GPU image bakes: every `cuda:sm_XX` its Dockerfile names (its CUDA_TARGETS)."""
    return sorted(set(re.findall(r"\bcuda:sm_\d+[a-z]?\b", dockerfile_text)), key=lambda t: int(re.sub(r"\D", "", t)))


def precompile_manifest(dockerfile_text: str) -> str:
    """The manifest the Dockerfile's `qd precompile -m FILE` compiles (qd.toml where it names none)."""
    m = re.search(r"qd precompile\b[^\n]*?(?:-m|--manifest)[= ](\S+)", dockerfile_text)
    return m.group(1) if m else "qd.toml"


def build(dockerfile: Path, tag: str, stages: list[Stage], build_args: list[str]) -> dict[str, str]:
    """Build every named stage and the last one; {stage: image name}."""
    tmp = Path(tempfile.mkdtemp(prefix="qd-docker-build-"))
    common = ["buildah", "bud", "--isolation", "chroot", "--pull=never", "--layers", "--force-rm",
              *pip_cert_mounts(tmp), *wheel_mounts(dockerfile.read_text()),
              *(a for kv in build_args for a in ("--build-arg", kv)), "-f", str(dockerfile)]  # fmt: skip
    images: dict[str, str] = {}
    last = stages[-1].name or "final"
    images[last] = f"{tag}:{last}"
    say(f"building {dockerfile.relative_to(ROOT)} -> {images[last]}")
    try:
        proc = sh([*common, "-t", images[last], str(ROOT)], check=False, capture=False)
        if proc.returncode != 0:
            raise CheckError(f"the build of {dockerfile} failed (exit {proc.returncode}; its output is above)")
        for s in stages[:-1]:
            if s.name:
                images[s.name] = f"{tag}:{s.name}"
                sh([*common, "--target", s.name, "-t", images[s.name], str(ROOT)])
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return images


def image_size_mb(name: str) -> float:
    proc = sh(["podman", "image", "inspect", "--format", "{{.Size}}", name])
    return int(proc.stdout.strip()) / 1e6


def image_config(name: str) -> dict:
    return json.loads(sh(["buildah", "inspect", "--type", "image", name]).stdout)["OCIv1"]["config"]


# --- the runtime checks -----------------------------------------------------------------------------------------


WRITE_PROBE = """
import os, sys
d = sys.argv[1]
try:
    open(os.path.join(d, ".docker-check-probe"), "w").close()
except OSError as e:
    print("read-only:", type(e).__name__)
else:
    print("WRITABLE")
"""


def run_in(ctr: str, user: str, argv: list[str], env: dict[str, str] | None = None) -> tuple[int, str, str, float]:
    """Run a command in the working container as `user`; (status, stdout, stderr, wall ms)."""
    envs = [a for k, v in (env or {}).items() for a in ("--env", f"{k}={v}")]
    t0 = time.perf_counter()
    proc = sh(["buildah", "run", "--isolation", "chroot", "--user", user, *envs, ctr, "--", *argv], check=False,
              timeout=900)  # fmt: skip
    return proc.returncode, proc.stdout, proc.stderr, (time.perf_counter() - t0) * 1e3


def snapshot(folder: Path) -> dict[str, tuple[int, int, int]]:
    """Every file under folder: (size, mtime_ns, mode), to tell that nothing was written."""
    out = {}
    for p in sorted(folder.rglob("*")):
        st = p.lstat()
        out[str(p.relative_to(folder))] = (st.st_size, st.st_mtime_ns, st.st_mode)
    return out


def last_json(stdout: str) -> dict:
    lines = stdout.strip().splitlines()
    if not lines:
        raise ValueError("no output")
    value = json.loads(lines[-1])
    if not isinstance(value, dict):
        raise ValueError("the last line is not a JSON object")
    return value


def program_output(result: dict) -> dict:
    """The keys of a run's JSON that are its output: not timings (`*_ms`), not the cache statistics."""
    return {k: v for k, v in result.items() if k not in STATS_KEYS and not k.endswith("_ms")}


def cache_hits(result: dict) -> int | None:
    """The kernels a run served from the cache: its fastcache hits plus its offline-cache hits, if it reports them."""
    hits = result.get("fastcache_hits")
    if not isinstance(hits, int) or isinstance(hits, bool):
        return None
    offline = result.get("offline_hits", 0)
    return hits + offline if isinstance(offline, int) and not isinstance(offline, bool) else None


def judge(cold: dict, warm_one_thread: dict, warm: list[dict]) -> list[str]:
    """The failures of the warm runs against the cold run of the same program: every warm run compiles nothing,
    hits every kernel the cold run compiled and loads no compiler (imports no llvmlite, or, where the run
    reports `compiler_loaded`, loads no compiler module of quadrants); the one-thread runs' outputs are equal."""
    failures = []
    if cold.get("compiles", 0) <= 0:
        failures.append(f"the cold run compiled nothing ({cold.get('compiles')}): it did not start from empty")
    for what, w in [
        *((f"warm run {i}", w) for i, w in enumerate(warm, 1)),
        ("the one-thread warm run", warm_one_thread),
    ]:
        if w.get("compiles") != 0:
            failures.append(f"{what}: {w.get('compiles')} compiles (want 0)")
        if cache_hits(w) != cold.get("compiles"):
            failures.append(f"{what}: {cache_hits(w)} cache hits, the cold run compiled "
                            f"{cold.get('compiles')} kernels (want every kernel to hit)")  # fmt: skip
        if "compiler_loaded" in w:
            if w["compiler_loaded"] not in ([], False):
                failures.append(f"{what}: quadrants loaded its compiler ({w['compiler_loaded']})")
        elif w.get("llvmlite_imported") is not False:
            failures.append(f"{what}: llvmlite imported ({w.get('llvmlite_imported')})")
    if program_output(warm_one_thread) != program_output(cold):
        failures.append(f"output {program_output(warm_one_thread)} != the cold run's {program_output(cold)}")
    return failures


def runtime_user_and_cache(config: dict, report: Report) -> bool:
    """The runtime image's user and QD_CACHE_DIR into the report; False (a failure noted) where it sets no cache."""
    report.user = config.get("User") or "root"
    env = dict(e.split("=", 1) for e in config.get("Env") or [])
    report.cache_dir = env.get("QD_CACHE_DIR", "")
    if not report.cache_dir:
        report.failures.append("the runtime image sets no QD_CACHE_DIR")
        return False
    if report.user in ("root", "0", ""):
        report.failures.append("the runtime image runs as root: its cache would be writable")
    return True


def check_baked_cache(ctr: str, report: Report) -> tuple[Path, dict]:
    """The image's cache holds entries and its user cannot write there; (the cache folder, a snapshot of it)."""
    rootfs = Path(sh(["buildah", "mount", ctr]).stdout.strip())
    cache = rootfs / report.cache_dir.lstrip("/")
    if not cache.is_dir() or not any(cache.rglob("*.qd*")):
        report.failures.append(f"{report.cache_dir} in the image holds no cache entries")
    before = snapshot(cache) if cache.is_dir() else {}
    rc, out, err, _ = run_in(ctr, report.user, ["python", "-c", WRITE_PROBE, report.cache_dir])
    if rc != 0 or "read-only" not in out:
        report.failures.append(f"{report.cache_dir} is writable by user {report.user}: {out.strip()} {err.strip()}")
    return cache, before


def judge_gpu_check(target: str, rc: int, got: dict) -> list[str]:
    """The failure of one `qd precompile --check --json --target T` report: every signature of the manifest (at
    least one) cached, none missing or failed, exit 0."""
    ok = rc == 0 and not got.get("missing") and not got.get("failed") and got.get("signatures")
    if ok and got.get("cached") == got.get("signatures"):
        return []
    return [f"{target}: {got.get('cached')} of {got.get('signatures')} signatures cached (missing "
            f"{got.get('missing')}, failed {got.get('failed')}, exit {rc})"]  # fmt: skip


def check_gpu_cache(image: str, targets: list[str], manifest: str, report: Report) -> None:
    """A GPU image (its command needs a GPU, which this machine has not): as the runtime user, on the read-only
    baked cache, `qd precompile -m MANIFEST --check --target T` for every architecture T it bakes must find every
    signature of the manifest cached, and change nothing."""
    if not runtime_user_and_cache(image_config(image), report):
        return
    ctr = sh(["buildah", "from", "--pull=never", image]).stdout.strip()
    try:
        cache, before = check_baked_cache(ctr, report)
        for target in targets:
            rc, out, err, wall = run_in(ctr, report.user, ["qd", "precompile", "-m", manifest, "--check", "--json",
                                                           "--target", target])  # fmt: skip
            try:
                got = json.loads(out)
            except ValueError:
                report.failures.append(f"qd precompile --check --target {target} exited {rc}: {err.strip()[-2000:]}")
                continue
            report.gpu_cache[target] = {k: got.get(k) for k in ("signatures", "cached", "missing", "failed")}
            report.gpu_cache[target]["wall_ms"] = wall
            report.failures += judge_gpu_check(target, rc, got)
        if snapshot(cache) != before:
            report.failures.append(f"the checks changed files in {report.cache_dir}")
    finally:
        sh(["buildah", "umount", ctr], check=False)
        sh(["buildah", "rm", ctr], check=False)


def check_runtime(image: str, runs: int, target: str | None, report: Report) -> None:
    """Run the runtime image's command as its user: warm runs on the baked cache, then a cold run (compiling for
    `target`, the CPU the cache was precompiled for, so that both run the same code)."""
    config = image_config(image)
    cmd = [*(config.get("Entrypoint") or []), *(config.get("Cmd") or []), "--json"]
    if not runtime_user_and_cache(config, report):
        return
    ctr = sh(["buildah", "from", "--pull=never", image]).stdout.strip()
    try:
        cache, before = check_baked_cache(ctr, report)
        for i in range(runs):
            rc, out, err, wall = run_in(ctr, report.user, cmd)
            if rc != 0:
                report.failures.append(f"warm run {i + 1} exited {rc}: {err.strip()[-2000:]}")
                return
            if err.strip():
                report.failures.append(f"warm run {i + 1} wrote to stderr: {err.strip()[-2000:]}")
            result = last_json(out)
            result["wall_ms"] = wall
            report.warm.append(result)
        # The output compared: one thread, warm and cold (parallel float reductions add in a varying order).
        one = {"QD_CPU_MAX_NUM_THREADS": "1"}
        rc, out, err, _ = run_in(ctr, report.user, cmd, one)
        if rc != 0:
            report.failures.append(f"the one-thread warm run exited {rc}: {err.strip()[-2000:]}")
            return
        report.warm_one_thread = last_json(out)
        cold_env = {**one, "QD_CACHE_DIR": "/tmp/qd-cold-cache", **({"QD_CPU_TARGET": target} if target else {})}
        if snapshot(cache) != before:
            report.failures.append(f"the runs changed files in {report.cache_dir}")
        rc, out, err, _ = run_in(ctr, report.user, cmd, cold_env)
        if rc != 0:
            report.failures.append(f"the cold run exited {rc}: {err.strip()[-2000:]}")
            return
        report.cold = last_json(out)
        report.failures += judge(report.cold, report.warm_one_thread, report.warm)
        report.ready_ms = statistics.median(w["ready_ms"] for w in report.warm)
        report.run_wall_ms = statistics.median(w["wall_ms"] for w in report.warm)
    finally:
        sh(["buildah", "umount", ctr], check=False)
        sh(["buildah", "rm", ctr], check=False)


# --- the whole check --------------------------------------------------------------------------------------------


def docker_check(example: Path, tag: str, runs: int, keep: bool, build_args: list[str] | None = None) -> Report:
    """`example`: a folder (its Dockerfile) or a Dockerfile. A Dockerfile that names `cuda:sm_XX` architectures
    builds a GPU image: its cache is checked for every one of them (check_gpu_cache), its command not run."""
    dockerfile = example if example.is_file() else example / "Dockerfile"
    text = dockerfile.read_text()
    stages = dockerfile_stages(text)
    if not stages:
        raise CheckError(f"{dockerfile} has no FROM")
    report = Report(str(dockerfile.relative_to(ROOT)))
    t0 = time.perf_counter()
    ensure_tools()
    report.tools_seconds = time.perf_counter() - t0
    t0 = time.perf_counter()
    report.base_images = external_bases(stages)
    for base in report.base_images:
        ensure_base(base)
    report.base_seconds = time.perf_counter() - t0
    t0 = time.perf_counter()
    images: dict[str, str] = {}
    try:
        images = build(dockerfile, tag, stages, build_args or [])
        report.build_seconds = time.perf_counter() - t0
        report.sizes_mb = {stage: image_size_mb(name) for stage, name in images.items()}
        final = images[stages[-1].name or "final"]
        if cuda_targets(text):
            check_gpu_cache(final, cuda_targets(text), precompile_manifest(text), report)
        else:
            check_runtime(final, runs, precompile_target(text), report)
    finally:
        if not keep:
            for name in images.values():
                sh(["buildah", "rmi", name], check=False)
            sh(["buildah", "rmi", "--prune"], check=False)  # the build's dangling layers; tagged images stay
    return report


def summary(report: Report) -> str:
    lines = [f"docker-check {report.example}:"]
    lines.append(f"  tools {report.tools_seconds:.0f} s, base {', '.join(report.base_images)} "
                 f"{report.base_seconds:.0f} s, build {report.build_seconds:.0f} s")  # fmt: skip
    for stage, mb in report.sizes_mb.items():
        lines.append(f"  image size, stage {stage}: {mb:.0f} MB")
    if report.warm:
        w = report.warm[0]
        offline = f" + {w['offline_hits']} offline-cache" if "offline_hits" in w else ""
        compiler = (f"quadrants' compiler modules loaded: {w['compiler_loaded'] or 'none'}, " if "compiler_loaded" in w
                    else "")  # fmt: skip
        lines.append(f"  runtime as user {report.user}, {report.cache_dir} read-only: {w['compiles']} compiles, "
                     f"{w['fastcache_hits']} fastcache{offline} hits (cold run: {report.cold.get('compiles')} "
                     f"compiles), {compiler}llvmlite imported: {w['llvmlite_imported']}")  # fmt: skip
        lines.append(f"  start-up: ready in {report.ready_ms:.0f} ms (median of {len(report.warm)} runs; "
                     f"first {w['ready_ms']:.0f} ms), the container command {report.run_wall_ms:.0f} ms")  # fmt: skip
        same = program_output(report.warm_one_thread) == program_output(report.cold)
        lines.append(f"  output (one thread) equals the cold run's: {same} {program_output(report.cold)}")
    for target, got in report.gpu_cache.items():
        lines.append(f"  {target}: {got['cached']} of {got['signatures']} signatures cached, as user {report.user} "
                     f"on the read-only {report.cache_dir} (`qd precompile --check`, {got['wall_ms']:.0f} ms)")  # fmt: skip
    if report.gpu_cache:
        lines.append("  the image's command needs a GPU: not run here")
    lines += [f"  FAILED: {f}" for f in report.failures] or ["  all checks passed"]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("example", type=Path, help="the example folder (its Dockerfile) or a Dockerfile, built from the "
                    "repository root")  # fmt: skip
    ap.add_argument("--build-arg", action="append", default=[], metavar="NAME=VALUE", help="passed to the build")
    ap.add_argument("--tag", help="the built images' name (default qd-check/EXAMPLE)")
    ap.add_argument("--runs", type=int, default=3, help="warm runs of the runtime image (default 3)")
    ap.add_argument("--keep", action="store_true", help="keep the built images (the base is always kept)")
    ap.add_argument("--json", type=Path, help="write the report here as JSON")
    args = ap.parse_args(argv)
    example = args.example.resolve()
    name = example.parent.name + example.suffix.replace(".", "-") if example.is_file() else example.name
    tag = args.tag or f"localhost/qd-check/{name}"
    try:
        report = docker_check(example, tag, max(1, args.runs), args.keep, args.build_arg)
    except CheckError as e:
        print(f"docker-check: {e}", file=sys.stderr)
        return 2
    print(summary(report))
    if args.json:
        args.json.write_text(json.dumps(report.__dict__, indent=1) + "\n")
    return 1 if report.failures else 0


if __name__ == "__main__":
    sys.exit(main())
