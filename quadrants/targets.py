"""Where compiled code runs: a `Target`, parsed once from the name a manifest, `--target` or a cache listing gives.

    host          this machine's CPU, with all its features (the default)
    x86-64-v3     a named CPU (an LLVM processor name): code for every machine that has at least its features
    cuda:sm_90    NVIDIA GPUs of that architecture, compiled without a GPU (`cuda:sm_80,sm_90` names several)

Code asks a Target what it is (`is_cuda`, `is_host`, `kind`, `cpu_name`) instead of testing the name's text. The
backends turn one into code: this module knows only names, so every room can use it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

KINDS = ("cpu", "cuda")  # a Target's kind; also the sections of a cache's targets.json
_CPU_NAME = re.compile(r"^(host|[a-z][a-z0-9_.+-]*)$")
_CUDA_ARCH = re.compile(r"^sm_\d{2,3}[a-z]?$")


class TargetError(ValueError):
    """A target name that is none of the forms above (the message says which were expected)."""


@dataclass(frozen=True)
class Target:
    kind: str  # "cpu" or "cuda"
    name: str  # "host", "x86-64-v3", ... for a CPU; "sm_90" for a GPU

    @classmethod
    def parse(cls, text: str) -> Target:
        """One target: `host`, a CPU name, or `cuda:sm_XX`."""
        found = parse_targets(text)
        if len(found) != 1:
            raise TargetError(f"target {text!r}: expected one GPU architecture, e.g. \"cuda:sm_80\"")
        return found[0]

    @property
    def is_cuda(self) -> bool:
        return self.kind == "cuda"

    @property
    def is_host(self) -> bool:
        """This machine's own CPU: the target of a plain run, which `targets.json` never needs to list."""
        return self.kind == "cpu" and self.name == "host"

    @property
    def cpu_name(self) -> str:
        """The CPU whose code a compile for this target makes: its own name, or `host` for a GPU target (its host
        side compiles, without a GPU, on the machine that builds it)."""
        return self.name if self.kind == "cpu" else "host"

    def __str__(self) -> str:
        return f"cuda:{self.name}" if self.is_cuda else self.name


HOST = Target("cpu", "host")


def parse_targets(text: str) -> list[Target]:
    """`text` as targets: one CPU target, or one `cuda:` target per architecture it lists (`cuda:sm_80,sm_90`)."""
    if text.startswith("cuda"):
        archs = [a.strip() for a in text.partition(":")[2].split(",")]
        if not text.startswith("cuda:") or not all(_CUDA_ARCH.match(a) for a in archs):
            raise TargetError(f'target {text!r}: expected "cuda:sm_80" or "cuda:sm_80,sm_90" (GPU architectures)')
        return [Target("cuda", a) for a in archs]
    if not _CPU_NAME.match(text):
        raise TargetError(f'target {text!r}: expected "host", a CPU name such as "x86-64-v3", or "cuda:sm_80,sm_90"')
    return [Target("cpu", text)]


def as_target(target: str | Target) -> Target:
    return target if isinstance(target, Target) else Target.parse(target)
