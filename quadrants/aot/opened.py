"""A project opened for one `qd` command: `open_project(manifest, target)` is how precompile, audit, explain and
the cache commands all start.

Consumes a manifest path (or none: found from the current folder upwards), a target and the command-line
overrides; produces an `OpenedProject`: the parsed manifest, the target, the cache root and the `QD_*`
environment the project's code runs under. Opening reads files only; `import_kernels` then imports the
project (inside `running(...)` when its code must see that environment). Nothing here prints.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from quadrants._config import cache_root, env_name, load_config, log_level_for_project
from quadrants.aot import manifest as manifest_mod
from quadrants.aot import project
from quadrants.aot.manifest import Manifest, ManifestError
from quadrants.targets import HOST, Target

NO_MANIFEST = "no manifest: write a qd.toml (or [tool.quadrants] in pyproject.toml), or pass -m"


@dataclass
class OpenedProject:
    manifest: Manifest | None  # None: none was given and none was found (fine for audit paths, explain, cache)
    target: str  # the target given, else the manifest's first, else "host"
    cache_dir: str  # the cache root: --cache-dir, else the manifest's cache_dir, else the configured one
    environment: dict[str, str]  # the QD_* variables the project's code runs under (see `running`)
    modules: list[Any] = field(default_factory=list)  # filled by import_kernels
    kernels: dict[str, project.Found] = field(default_factory=dict)  # module:qualname -> kernel

    def require_manifest(self) -> Manifest:
        """The manifest, or the ManifestError of a command that cannot work without one."""
        if self.manifest is None:
            raise ManifestError(NO_MANIFEST, ".")
        return self.manifest


def open_project(
    manifest: str | None,
    target: str | None = None,
    *,
    cache_dir: str | None = None,
    targets: list[str] | None = None,
) -> OpenedProject:
    """Read the manifest at `manifest` (else the one found from the current folder, else none) and apply the
    overrides: `cache_dir` replaces the manifest's cache folder, `targets` its targets (validated). Raises
    ManifestError for a malformed manifest or target."""
    path = manifest or manifest_mod.find()
    m = manifest_mod.load(path) if path else None
    if m is not None and cache_dir:
        m.cache_dir = os.path.abspath(cache_dir)
    if m is not None and targets:
        m.targets = manifest_mod.expand_targets(list(targets), lambda msg, i: ManifestError(msg, "--target"))
        m.targets_overridden = True
    target = target or (m.targets[0] if m else str(HOST))
    env = environment(m, target) if m else {}
    if cache_dir:
        env["QD_CACHE_DIR"] = os.path.abspath(cache_dir)
    if m is not None and m.cache_dir:
        root = os.path.join(m.root, m.cache_dir)
    else:
        root = os.path.abspath(cache_dir) if cache_dir else cache_root(load_config({})[0])
    return OpenedProject(m, target, root, env)


def environment(manifest: Manifest, target: str) -> dict[str, str]:
    """The QD_* variables the project runs under for `target`: the manifest's cache folder, qd.init options and
    target. Through the environment (not qd.init arguments) so a project that calls qd.init itself keeps its own
    explicit settings, exactly as it does when it runs."""
    cpu = Target.parse(target).cpu_name  # GPU targets compile without a GPU, from the CPU
    env = {env_name("offline_cache"): "1", env_name("offline_cache_fallback"): "0", env_name("cpu_target"): cpu,
           env_name("log_level"): log_level_for_project()}  # fmt: skip
    if manifest.cache_dir:
        env["QD_CACHE_DIR"] = os.path.join(manifest.root, manifest.cache_dir)
    if manifest.remote_cache and not load_config({})[0].remote_cache:  # QD_REMOTE_CACHE (a password) wins
        env[env_name("remote_cache")] = manifest.remote_cache
    for k, v in manifest.init.items():
        env[env_name(k)] = ("1" if v else "0") if isinstance(v, bool) else str(v)
    env["QD_SET_BY_QD"] = ",".join(sorted(env))  # not the user's: qd.init arguments override them silently
    return env


@contextlib.contextmanager
def running(env: dict[str, str]) -> Iterator[None]:
    """`env` applied to os.environ while the block runs (the project's imports and qd.init see it)."""
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def import_kernels(opened: OpenedProject) -> dict[str, project.Found]:
    """Import the manifest's modules (python_path first on sys.path; none without a manifest) and find their
    kernels. Raises ManifestError or project.ProjectError."""
    opened.modules = project.import_modules(opened.manifest) if opened.manifest is not None else []
    opened.kernels = project.discover(opened.modules)
    if opened.manifest is not None:
        project.add_differentiated(opened.kernels, opened.manifest.kernel_names)
    return opened.kernels


def current_folder_on_path() -> None:
    """Module names given on the command line are found from the current folder too, as `python -m` would (the
    installed `qd` script does not put it on sys.path)."""
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
