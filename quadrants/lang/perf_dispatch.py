"""`qd.perf_dispatch`: one entry point over several implementations of the same computation, which runs the
fastest for the arguments' "geometry", as measured at run time.

    @qd.perf_dispatch(get_geometry_hash=lambda a, n: (a.shape, n), warmup=1, active=1)
    def solve(a, n): ...                        # the prototype: its body never runs

    @solve.register(is_compatible=lambda a, n: n < 64)
    @qd.kernel
    def solve_small(a: qd.types.NDArray[qd.f32, 1], n: int): ...

Behaviour (Quadrants' own): an implementation's parameters must be the prototype's (a QuadrantsSyntaxError
otherwise). A call keeps the implementations whose `is_compatible(*args, **kwargs)` holds (none:
QuadrantsRuntimeError). With one, that one runs, and it is remembered for these very argument objects. With
several, each call runs the one tried least so far for this geometry: `warmup` untimed runs each, then `active`
timed runs each (between `qd.sync()`s), after which the one with the smallest mean time runs for that geometry
until `repeat_after_count` calls or `repeat_after_seconds` have passed, when measuring starts again.
QD_PERFDISPATCH_FORCE="dispatcher:impl,..." picks an implementation by name instead.
"""

from __future__ import annotations

import inspect
import time
from collections import defaultdict
from collections.abc import Callable
from typing import Any

from quadrants import _config, _logging
from quadrants.errors import QuadrantsRuntimeError, QuadrantsSyntaxError


class Implementation:
    """A registered implementation: calls through to what it wraps (a kernel or a Python function)."""

    def __init__(self, fn: Callable[..., Any], is_compatible: Callable[..., bool] | None) -> None:
        self.__wrapped__ = fn
        self.is_compatible = is_compatible
        self.name: str = getattr(getattr(fn, "fn", fn), "__name__", repr(fn))

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.__wrapped__(*args, **kwargs)

    def accepts(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
        return self.is_compatible is None or bool(self.is_compatible(*args, **kwargs))


class _Trials:
    """Measurements for one geometry: runs and timed seconds per implementation, and the winner once chosen."""

    def __init__(self) -> None:
        self.runs: dict[Implementation, int] = defaultdict(int)
        self.seconds: dict[Implementation, list[float]] = defaultdict(list)
        self.fastest: Implementation | None = None
        self.chosen_at = 0.0
        self.calls_since = 0


class PerfDispatcher:
    def __init__(self, prototype: Callable[..., Any], get_geometry_hash: Callable[..., Any], warmup: int,
                 active: int, repeat_after_count: int, repeat_after_seconds: float) -> None:  # fmt: skip
        self.name = prototype.__name__
        self._params = list(inspect.signature(prototype).parameters)
        self._geometry = get_geometry_hash
        self.warmup, self.active = warmup, active
        self.repeat_after_count, self.repeat_after_seconds = repeat_after_count, repeat_after_seconds
        self.implementations: list[Implementation] = []
        self._trials: dict[Any, _Trials] = {}
        self._forced: Implementation | None | bool = False  # False: not looked up yet
        self._last: tuple[tuple[Any, ...], dict[str, Any], Implementation] | None = None

    def register(self, implementation: Callable[..., Any] | None = None, *,
                 is_compatible: Callable[..., bool] | None = None) -> Any:  # fmt: skip
        """`@d.register` or `@d.register(is_compatible=...)` over a kernel or function with the prototype's
        parameters; returns the registered implementation (callable directly)."""

        def add(fn: Callable[..., Any]) -> Implementation:
            params = list(inspect.signature(getattr(fn, "fn", fn)).parameters)
            extra = [p for p in params if p not in self._params]
            if extra:
                raise QuadrantsSyntaxError(f"Signature parameter {extra[0]} of function not in perf_dispatch "
                                           "function prototype")  # fmt: skip
            if len(params) != len(self._params):
                raise QuadrantsSyntaxError(f"Number of function parameters {len(params)} doesn't match number of "
                                           f"parameters in perf_dispatch function prototype {len(self._params)}")
            impl = Implementation(fn, is_compatible)
            self.implementations.append(impl)
            _logging.debug(f"perf_dispatch '{self.name}': registered '{impl.name}'", tag="perf_dispatch")
            return impl

        return add(implementation) if implementation is not None else add

    def _forced_impl(self) -> Implementation | None:
        if self._forced is False:
            want = _config.perf_dispatch_forced().get(self.name)
            found = [i for i in self.implementations if i.name == want]
            if want is not None and not found:
                _logging.warn(f"QD_PERFDISPATCH_FORCE names '{want}' for '{self.name}', which has no such "
                              "implementation: timing them instead", tag="perf_dispatch")  # fmt: skip
            self._forced = found[0] if found else None
        return self._forced if isinstance(self._forced, Implementation) else None

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        forced = self._forced_impl()
        if forced is not None:
            return forced(*args, **kwargs)
        last = self._last
        if last is not None and _same(args, kwargs, last[0], last[1]):
            return last[2](*args, **kwargs)
        key = self._geometry(*args, **kwargs)
        trials = self._trials.setdefault(key, _Trials())
        if trials.fastest is not None and not self._expired(trials):
            return trials.fastest(*args, **kwargs)
        if trials.fastest is not None:  # measure again
            self._trials[key] = trials = _Trials()
        candidates = [i for i in self.implementations if i.accepts(args, kwargs)]
        if not candidates:
            raise QuadrantsRuntimeError("No suitable functions were found.")
        if len(candidates) == 1:
            trials.fastest, trials.chosen_at = candidates[0], time.time()
            self._last = (args, kwargs, candidates[0])
            return candidates[0](*args, **kwargs)
        return self._trial(trials, candidates, args, kwargs)

    def _expired(self, trials: _Trials) -> bool:
        trials.calls_since += 1
        if 0 < self.repeat_after_count <= trials.calls_since:
            return True
        return 0 < self.repeat_after_seconds <= time.time() - trials.chosen_at

    def _trial(self, trials: _Trials, candidates: list[Implementation], args: tuple[Any, ...],
               kwargs: dict[str, Any]) -> Any:  # fmt: skip
        impl = min(candidates, key=lambda i: trials.runs[i])  # the first of the least tried
        timed = trials.runs[impl] >= self.warmup
        trials.runs[impl] += 1
        if not timed:
            return impl(*args, **kwargs)
        from quadrants.lang.program import sync

        sync()
        start = time.perf_counter()
        out = impl(*args, **kwargs)
        sync()
        trials.seconds[impl].append(time.perf_counter() - start)
        if all(trials.runs[i] >= self.warmup + self.active for i in candidates):
            trials.fastest = min(candidates, key=lambda i: sum(trials.seconds[i]) / len(trials.seconds[i]))
            trials.chosen_at, trials.calls_since = time.time(), 0
            _logging.debug(f"perf_dispatch '{self.name}': chose '{trials.fastest.name}' out of "
                           f"{len(self.implementations)} registered functions.", tag="perf_dispatch")  # fmt: skip
        return out


def _same(args: tuple[Any, ...], kwargs: dict[str, Any], args0: tuple[Any, ...], kwargs0: dict[str, Any]) -> bool:
    return (len(args) == len(args0) and len(kwargs) == len(kwargs0) and all(a is b for a, b in zip(args, args0))
            and all(k in kwargs0 and v is kwargs0[k] for k, v in kwargs.items()))  # fmt: skip


def perf_dispatch(*, get_geometry_hash: Callable[..., Any], warmup: int = 3, active: int = 1,
                  repeat_after_count: int = 0, repeat_after_seconds: float = 1.0) -> Callable[..., PerfDispatcher]:  # fmt: skip
    """Decorator over the prototype function: see the module's docstring."""

    def wrap(prototype: Callable[..., Any]) -> PerfDispatcher:
        return PerfDispatcher(prototype, get_geometry_hash, warmup, active, repeat_after_count, repeat_after_seconds)

    return wrap
