"""What the README promises, checked against the code where a claim names the API."""

from __future__ import annotations

import re
from pathlib import Path

import quadrants as qd

README = Path(__file__).parents[1] / "README.md"


def _sentence_after(marker: str) -> str:
    text = " ".join(README.read_text().split())
    start = text.index(marker)
    return text[start : text.index(". ", start)]


def test_what_the_readme_calls_not_yet_supported_does_not_exist() -> None:
    """`Not yet: ...` names no `qd.X` that this package has (a working API listed there misleads users)."""
    named = re.findall(r"`qd\.(\w+)", _sentence_after("Not yet:"))
    assert [n for n in named if hasattr(qd, n)] == []


def test_needs_grad_is_described_as_it_behaves() -> None:
    """needs_grad=True allocates a zeroed `.grad` companion (the README must not say that it raises)."""
    qd.init(arch=qd.cpu, offline_cache=False, log_level="error")
    f = qd.field(qd.f32, (4,), needs_grad=True)
    assert f.grad.to_numpy().tolist() == [0.0] * 4
    text = " ".join(README.read_text().split())
    assert "`needs_grad=True` raises" not in text and "`needs_grad=True` allocates" in text
