"""The fast paths of a kernel's recent specializations: launches that skip the general path.

A kernel's general path (lang/kernel.py `Kernel._call`) specializes its arguments, finds the launcher and runs
it; then it installs that specialization's fast path here (runtime/launch.py builds it: a generated function
that checks the arguments' guards and launches, or returns MISS). The next call tries `latest` first, then the
others, most recent first: a kernel called with alternating arguments (Genesis' `kernel_step_2(..., is_backward)`)
launches each specialization directly. At most `KEPT` are kept.

A specialization whose guards hold, by identity, an object that cannot be weakly referenced (a list member of
a data_oriented object, new with every object) is never kept beside the latest: keeping 8 would keep 8 such
objects alive (Quadrants' test_memory::test_oop_memory_leak).

`SharedCode`, beside them, is the general path's second index of launchers: by the compiled-in values their code
read, so that a specialization differing only in values no code read finds compiled code (driver/build.py
`guards_read` says which guards a kernel's code depends on).
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Any

from quadrants.lang.args import Specialization
from quadrants.runtime.launch import MISS
from quadrants.runtime.leaves import Guard, GuardKind

KEPT = 8  # specializations per kernel launched without the general path (the most recent ones)

FastPath = Callable[..., Any]


class FastPaths:
    """`latest` (read on every launch) with its specialization `key` and launcher `entry`; `others`, most
    recent first, as (fast path, key, entry)."""

    __slots__ = ("latest", "key", "entry", "keep", "others")

    def __init__(self) -> None:
        self.clear()

    def clear(self) -> None:
        self.latest: FastPath | None = None
        self.key: Any = None
        self.entry: Any = None
        self.keep = False  # whether `latest` may join `others` when another specialization replaces it
        self.others: list[tuple[FastPath, Any, Any]] = []

    def __bool__(self) -> bool:
        return self.latest is not None or bool(self.others)

    def install(self, fast: FastPath | None, key: Any, entry: Any, guards: list[Guard]) -> None:
        """Make `fast` (None: the specialization has none) the latest, for specialization `key` launched by
        `entry` and checking `guards`; the one it replaces joins the others where it may."""
        others = [o for o in self.others if o[1] != key]
        if self.latest is not None and self.key != key and self.keep:
            others.insert(0, (self.latest, self.key, self.entry))
        self.others = others[: KEPT - 1]
        self.latest, self.key, self.entry, self.keep = fast, key, entry, keepable(guards)

    def launch_other(self, args: tuple[Any, ...]) -> tuple[Any, Any, Any]:
        """Launch through the first of the others the arguments match, which becomes the latest: its result,
        key and entry; (MISS, None, None) when none matches."""
        for k, (fast, key, entry) in enumerate(self.others):
            try:
                r = fast(*args)
            except (TypeError, AttributeError):  # another arity or shape of arguments
                continue
            if r is not MISS:
                if self.latest is not None and self.keep:
                    self.others[k] = (self.latest, self.key, self.entry)
                else:
                    del self.others[k]
                self.latest, self.key, self.entry, self.keep = fast, key, entry, True  # kept: keepable
                return r, key, entry
        return MISS, None, None


class SharedCode:
    """Launchers by the compiled-in values their code read: a specialization that differs from a compiled one
    only in values the code never read (a data_oriented object's `self.t`, baked but read by other kernels)
    runs that code, without compiling. A launcher whose ABI names the guards it depends on (driver/build.py
    `guards_read`) is found by the specialization's shape and those guards' values."""

    __slots__ = ("_by_values", "_picks")

    def __init__(self) -> None:
        self._by_values: dict[Any, Any] = {}
        self._picks: dict[Any, list[tuple[int, ...]]] = {}  # shape -> the guard selections compiled for it

    def clear(self) -> None:
        self._by_values.clear()
        self._picks.clear()

    def add(self, spec: Specialization, entry: Any) -> None:
        picks = getattr(getattr(entry, "abi", None), "guards", None)
        if picks is None:
            return
        shape = _shape(spec)
        self._by_values[_on(shape, spec, picks)] = entry
        known = self._picks.setdefault(shape, [])
        if picks not in known:
            known.append(picks)

    def find(self, spec: Specialization) -> Any:
        if not self._picks:
            return None
        shape = _shape(spec)
        for picks in self._picks.get(shape, ()):
            entry = self._by_values.get(_on(shape, spec, picks))
            if entry is not None:
                return entry
        return None


def _shape(spec: Specialization) -> tuple[Any, ...]:
    """The specialization but for its compiled-in values: its leaves, and which guards it has where."""
    return (tuple(spec.leaf_keys), tuple(k[:2] for k in spec.guard_keys))


def _on(shape: tuple[Any, ...], spec: Specialization, picks: tuple[int, ...]) -> tuple[Any, ...]:
    return (shape, picks, tuple(spec.guard_keys[k][2] for k in picks))


def keepable(guards: list[Guard]) -> bool:
    """Whether a fast path checking `guards` may be kept beside the latest one (the module's docstring)."""
    for g in guards:
        if g.kind is GuardKind.IDENTITY:
            try:
                weakref.ref(g.value)
            except TypeError:
                return False
    return True
