"""One GitHub Actions job run on this machine, step by step as the workflow file has them: enough of a runner for
the example workflows (examples/*/ci/*.yml), so a test exercises their real steps, not copies of them.

A job's steps, in order:
- `actions/checkout`: the given folders of a source tree (the repository, or a changed copy of a part of it)
  copied into a fresh workspace;
- `actions/setup-python`: nothing (the steps run the test's interpreter: `python` and `qd` on PATH are it);
- `run: pip install ...`: skipped, for the same reason (the package under test is installed);
- `actions/cache`: restore from a `CacheStore` (a folder standing for GitHub's cache service) as the action
  does: the entry of the exact key, else the newest whose key starts with one of `restore-keys` in order; after
  the last step, the job saves `path` under the key unless the key was hit exactly;
- `run:` steps: `bash --noprofile --norc -eo pipefail` in `working-directory`, with the workflow's, the job's
  and the step's `env`.
`${{ }}` expressions: `runner.os` and `hashFiles(...)`; any other raises, as does a `uses:` this runner does not
know, so a workflow that grows one fails its test until the runner learns it.
"""

from __future__ import annotations

import glob
import hashlib
import os
import re
import shutil
import stat
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[2]
EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")


@dataclass
class StepResult:
    name: str
    stdout: str = ""
    stderr: str = ""
    cache_hit: str | None = None  # actions/cache: "true", "false" (a restore-keys hit) or None (a miss)


@dataclass
class CacheStore:
    """Saved cache entries: one folder per key, restored newest first among prefix matches."""

    root: Path
    saved: list[str] = field(default_factory=list)  # keys, oldest first

    def restore(self, key: str, restore_keys: list[str], dest: Path) -> tuple[str | None, bool]:
        """Copy the matching entry to dest; (the key restored or None, whether it was the exact key)."""
        found = key if key in self.saved else None
        if found is None:
            for prefix in restore_keys:
                matches = [k for k in self.saved if k.startswith(prefix)]
                if matches:
                    found = matches[-1]
                    break
        if found is not None:
            if dest.exists():
                shutil.rmtree(dest)
            shutil.copytree(self.root / self._folder(found), dest, symlinks=True)
        return found, found == key

    def save(self, key: str, src: Path) -> None:
        if key in self.saved or not src.exists():
            return  # entries are immutable, as GitHub's
        shutil.copytree(src, self.root / self._folder(key), symlinks=True)
        self.saved.append(key)

    @staticmethod
    def _folder(key: str) -> str:
        return hashlib.sha256(key.encode()).hexdigest()[:16]


def hash_files(workspace: Path, patterns: list[str]) -> str:
    """hashFiles(...): one digest over the files the glob patterns match under the workspace, in sorted order."""
    files: set[str] = set()
    for pattern in patterns:
        files.update(p for p in glob.glob(str(workspace / pattern), recursive=True) if os.path.isfile(p))
    digest = hashlib.sha256()
    for f in sorted(files):
        digest.update(hashlib.sha256(Path(f).read_bytes()).digest())
    return digest.hexdigest() if files else ""


def evaluate(text: str, workspace: Path) -> str:
    """Substitute the `${{ }}` expressions this runner knows."""

    def one(m: re.Match[str]) -> str:
        expr = m.group(1)
        if expr == "runner.os":
            return "Linux"
        call = re.fullmatch(r"hashFiles\((.*)\)", expr)
        if call:
            return hash_files(workspace, re.findall(r"'([^']*)'", call.group(1)))
        raise NotImplementedError(f"expression not known to this runner: {expr}")

    return EXPRESSION.sub(one, text)


def _shims(folder: Path) -> None:
    """`python` and `qd` on PATH: the interpreter running the tests (its quadrants is the one under test)."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, argv in [("python", [sys.executable]), ("qd", [sys.executable, "-m", "quadrants_cli.main"])]:
        shim = folder / name
        shim.write_text("#!/bin/sh\nexec " + " ".join(f"'{a}'" for a in argv) + ' "$@"\n')
        shim.chmod(shim.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)


def run_job(
    workflow: Path, job: str, workspace: Path, store: CacheStore, checkout: tuple[Path, list[str]]
) -> list[StepResult]:
    """Run `job` of `workflow` in a fresh `workspace`, checking out `checkout` (a source tree, and the folders of
    it the job needs); returns each step's result. A failing step raises AssertionError."""
    doc: dict[str, Any] = yaml.safe_load(workflow.read_text())
    spec = doc["jobs"][job]
    bin_dir = workspace.parent / (workspace.name + "-bin")
    _shims(bin_dir)
    base_env = {k: v for k, v in os.environ.items() if not k.startswith(("QD_", "GITHUB_", "PYTHONDONTWRITEBYTECODE"))}
    base_env.update(PATH=f"{bin_dir}{os.pathsep}{base_env.get('PATH', '')}", CI="true", GITHUB_ACTIONS="true",
                    GITHUB_WORKSPACE=str(workspace), XDG_CACHE_HOME=str(workspace.parent / "xdg-cache"))  # fmt: skip
    for scope in (doc.get("env") or {}, spec.get("env") or {}):
        base_env.update({k: evaluate(str(v), workspace) for k, v in scope.items()})
    results: list[StepResult] = []
    to_save: list[tuple[str, Path]] = []
    for i, step in enumerate(spec["steps"]):
        name = step.get("name") or step.get("uses") or step.get("run", "").splitlines()[0]
        result = StepResult(name)
        uses = step.get("uses", "")
        action = uses.split("@")[0]
        if action == "actions/checkout":
            src, folders = checkout
            for folder in folders:
                shutil.copytree(
                    src / folder, workspace / folder, ignore=shutil.ignore_patterns(".qd-cache", "__pycache__")
                )
        elif action == "actions/setup-python":
            pass
        elif action == "actions/cache":
            w = step["with"]
            key = evaluate(w["key"], workspace)
            restore_keys = [evaluate(k, workspace) for k in str(w.get("restore-keys", "")).splitlines() if k.strip()]
            path = workspace / w["path"]
            found, exact = store.restore(key, restore_keys, path)
            result.cache_hit = None if found is None else str(exact).lower()
            if not exact:
                to_save.append((key, path))
        elif uses:
            raise NotImplementedError(f"step {i}: action not known to this runner: {uses}")
        elif step["run"].startswith("pip install"):
            pass
        else:
            env = {**base_env, **{k: evaluate(str(v), workspace) for k, v in (step.get("env") or {}).items()}}
            cwd = workspace / step.get("working-directory", ".")
            script = evaluate(step["run"], workspace)
            proc = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script], cwd=cwd,
                                  env=env, capture_output=True, text=True, timeout=600)  # fmt: skip
            result.stdout, result.stderr = proc.stdout, proc.stderr
            if proc.returncode != 0:
                raise AssertionError(f"step {name!r} exited {proc.returncode}\n{proc.stdout}\n{proc.stderr}")
        results.append(result)
    for key, path in to_save:  # the cache action's post step, after every step passed
        store.save(key, path)
    return results
