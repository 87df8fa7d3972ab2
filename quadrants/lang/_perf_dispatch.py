"""`qd.perf_dispatch`: one entry point over several implementations of the same computation, which runs the
fastest for the arguments' "geometry", as measured at run time.

    @qd.perf_dispatch(get_geometry_hash=lambda a, n: hash((a.shape, n)), first_warmup=1, warmup=0, active=1)
    def solve(a, n): ...                        # the prototype: its body never runs

    @solve.register(is_compatible=lambda a, n: n < 64)
    @qd.kernel
    def solve_small(a: qd.types.NDArray[qd.f32, 1], n: int): ...

Behaviour (Quadrants 1.3.3's, which programs tune against):
- An implementation's parameters must be the prototype's, by name and number (a QuadrantsSyntaxError with error
  code PERFDISPATCH_ANNOTATION_SEQUENCE_MISMATCH); `@qd.kernel` over `@d.register` is refused
  (KERNEL_ANNOTATION_ORDER): register the kernel, not the other way round.
- A call keeps the implementations whose `is_compatible(*args, **kwargs)` holds (none: QuadrantsRuntimeError).
  With one, that one runs, and it is remembered for these very argument objects.
- With several, each call runs the one tried least so far for this geometry: untimed warm-up runs each
  (`first_warmup` in a geometry's first measuring round, `warmup` in later rounds), then `active` timed runs each
  (between `qd.sync()`s); when every compatible implementation has had its runs, the one with the smallest mean
  time runs for that geometry.
- Measuring starts again after `repeat_after_count` further calls or `repeat_after_seconds` seconds, whichever
  comes first (a value <= 0 turns that trigger off); with neither given, every DEFAULT_REPEAT_AFTER_COUNT calls.
- QD_PERFDISPATCH_FORCE="dispatcher:impl,..." (read at import) picks implementations by name instead; a name that
  matches none falls back to measuring, with a warning.
The per-geometry state keeps the attribute names Quadrants' own tests inspect.
"""

from __future__ import annotations

import inspect
import time
from collections import defaultdict
from collections.abc import Callable
from typing import Any

from quadrants import _config, _logging
from quadrants.errors import QuadrantsRuntimeError, QuadrantsSyntaxError

NUM_FIRST_WARMUP: int = 1
NUM_WARMUP: int = 0
NUM_ACTIVE: int = 1
DEFAULT_REPEAT_AFTER_COUNT: int = 300  # when neither repeat trigger is given


def _parse_force_map(raw: str | None) -> dict[str, str]:
    """QD_PERFDISPATCH_FORCE's value, "disp1:impl1,disp2:impl2", as {dispatcher: implementation}; empty pairs are
    skipped, a pair without a colon is a ValueError."""
    forced: dict[str, str] = {}
    for pair in (raw or "").split(","):
        pair = pair.strip()
        if not pair:
            continue
        if ":" not in pair:
            raise ValueError(f"Malformed QD_PERFDISPATCH_FORCE entry '{pair}'. Expected format: 'dispatcher:impl'.")
        name, impl = pair.split(":", 1)
        forced[name.strip()] = impl.strip()
    return forced


_FORCE_MAP: dict[str, str] = _parse_force_map(_config.perf_dispatch_force())
_ANY_FORCE_ACTIVE: bool = bool(_FORCE_MAP)


def _code(message: str, code: str) -> str:
    return f"{message} (error code: {code})."


class DispatchImpl:
    """A registered implementation: calls through to what it wraps (a kernel or a Python function)."""

    def __init__(self, fn: Callable[..., Any], is_compatible: Callable[..., bool] | None) -> None:
        self.__wrapped__ = fn
        self.is_compatible = is_compatible
        self.name: str = getattr(getattr(fn, "fn", fn), "__name__", repr(fn))

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.__wrapped__(*args, **kwargs)

    def accepts(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
        return self.is_compatible is None or bool(self.is_compatible(*args, **kwargs))


def refuse_registered(fn: object) -> None:
    """`@qd.kernel` over `@d.register`: the order that cannot work (the kernel would wrap the dispatcher's entry)."""
    if isinstance(fn, DispatchImpl):
        raise QuadrantsSyntaxError(_code("@qd.kernel must be applied first, below @<dispatcher>.register",
                                         "KERNEL_ANNOTATION_ORDER"))  # fmt: skip


class PerformanceDispatcher:
    def __init__(self, prototype: Callable[..., Any], get_geometry_hash: Callable[..., Any], first_warmup: int,
                 warmup: int, active: int, repeat_after_count: int | None,
                 repeat_after_seconds: float | None) -> None:  # fmt: skip
        self.name = prototype.__name__
        self._params = list(inspect.signature(prototype).parameters)
        self._get_geometry_hash = get_geometry_hash
        self.num_first_warmup, self.num_warmup, self.num_active = first_warmup, warmup, active
        if repeat_after_count is None and repeat_after_seconds is None:
            repeat_after_count = DEFAULT_REPEAT_AFTER_COUNT
        self.repeat_after_count, self.repeat_after_seconds = repeat_after_count, repeat_after_seconds
        self._dispatch_impls: list[DispatchImpl] = []
        # per geometry: runs and timed seconds of each implementation, the winner, calls and time since it won
        self._trial_count_by_dispatch_impl_by_geometry_hash: dict[Any, dict[DispatchImpl, int]] = defaultdict(
            lambda: defaultdict(int))  # fmt: skip
        self._times_by_dispatch_impl_by_geometry_hash: dict[Any, dict[DispatchImpl, list[float]]] = defaultdict(
            lambda: defaultdict(list))  # fmt: skip
        self._fastest_dispatch_impl_by_geometry_hash: dict[Any, DispatchImpl] = {}
        self._calls_since_last_update_by_geometry_hash: dict[Any, int] = defaultdict(int)
        self._last_check_time_by_geometry_hash: dict[Any, float] = defaultdict(float)
        self._first_eval_completed: set[Any] = set()
        self._forced: DispatchImpl | None | bool = False  # False: not looked up yet
        self._last: tuple[tuple[Any, ...], dict[str, Any], DispatchImpl] | None = None

    @property
    def implementations(self) -> list[DispatchImpl]:
        return list(self._dispatch_impls)

    def register(self, implementation: Callable[..., Any] | None = None, *,
                 is_compatible: Callable[..., bool] | None = None) -> Any:  # fmt: skip
        """`@d.register` or `@d.register(is_compatible=...)` over a kernel or function with the prototype's
        parameters; returns the registered implementation (callable directly)."""

        def add(fn: Callable[..., Any]) -> DispatchImpl:
            params = list(inspect.signature(getattr(fn, "fn", fn)).parameters)
            extra = [p for p in params if p not in self._params]
            if extra:
                raise QuadrantsSyntaxError(_code(f"Signature parameter {extra[0]} of function not in perf_dispatch "
                                                 "function prototype", "PERFDISPATCH_ANNOTATION_SEQUENCE_MISMATCH"))
            if len(params) != len(self._params):
                raise QuadrantsSyntaxError(_code(
                    f"Number of function parameters {len(params)} doesn't match number of parameters in "
                    f"perf_dispatch function prototype {len(self._params)}", "PERFDISPATCH_ANNOTATION_SEQUENCE_MISMATCH"))
            impl = DispatchImpl(fn, is_compatible)
            self._dispatch_impls.append(impl)
            _logging.debug(f"perf_dispatch '{self.name}': registered '{impl.name}'", tag="perf_dispatch")
            return impl

        return add(implementation) if implementation is not None else add

    def _forced_impl(self) -> DispatchImpl | None:
        """The implementation QD_PERFDISPATCH_FORCE names for this dispatcher, looked up at the first call (when
        every implementation is registered)."""
        if self._forced is False:
            self._forced = None
            want = _FORCE_MAP.get(self.name) if _ANY_FORCE_ACTIVE else None
            found = [i for i in self._dispatch_impls if i.name == want]
            if found:
                self._forced = found[0]
            elif want is not None:
                names = ", ".join(f"'{i.name}'" for i in self._dispatch_impls)
                _logging.warn(f"QD_PERFDISPATCH_FORCE names '{want}' for '{self.name}', which has no such "
                              f"implementation (available: [{names}]): timing them instead", tag="perf_dispatch")
        return self._forced if isinstance(self._forced, DispatchImpl) else None

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        forced = self._forced_impl()
        if forced is not None:
            return forced(*args, **kwargs)
        last = self._last
        if last is not None and _same(args, kwargs, last[0], last[1]):
            return last[2](*args, **kwargs)
        key = self._get_geometry_hash(*args, **kwargs)
        fastest = self._fastest_dispatch_impl_by_geometry_hash.get(key)
        if fastest is not None:
            if not self._expired(key):
                return fastest(*args, **kwargs)
            self._restart(key)
        candidates = [i for i in self._dispatch_impls if i.accepts(args, kwargs)]
        if not candidates:
            raise QuadrantsRuntimeError("No suitable functions were found.")
        if len(candidates) == 1:
            self._fastest_dispatch_impl_by_geometry_hash[key] = candidates[0]
            self._last_check_time_by_geometry_hash[key] = time.time()
            self._last = (args, kwargs, candidates[0])
            return candidates[0](*args, **kwargs)
        return self._trial(key, candidates, args, kwargs)

    def _expired(self, key: Any) -> bool:
        """Counts this call against the winner of `key`; True when a repeat trigger has fired."""
        expired = False
        if self.repeat_after_count is not None and self.repeat_after_count > 0:
            self._calls_since_last_update_by_geometry_hash[key] += 1
            expired = self._calls_since_last_update_by_geometry_hash[key] >= self.repeat_after_count
        if self.repeat_after_seconds is not None and self.repeat_after_seconds > 0:
            elapsed = time.time() - self._last_check_time_by_geometry_hash[key]
            expired = expired or elapsed >= self.repeat_after_seconds
        return expired

    def _restart(self, key: Any) -> None:
        self._trial_count_by_dispatch_impl_by_geometry_hash[key].clear()
        self._times_by_dispatch_impl_by_geometry_hash[key].clear()
        del self._fastest_dispatch_impl_by_geometry_hash[key]
        self._calls_since_last_update_by_geometry_hash[key] = 0

    def _trial(self, key: Any, candidates: list[DispatchImpl], args: tuple[Any, ...],
               kwargs: dict[str, Any]) -> Any:  # fmt: skip
        runs = self._trial_count_by_dispatch_impl_by_geometry_hash[key]
        warmup = self.num_warmup if key in self._first_eval_completed else self.num_first_warmup
        impl = min(candidates, key=lambda i: runs.get(i, 0))  # the first of the least tried
        timed = runs.get(impl, 0) >= warmup
        runs[impl] += 1
        if not timed:
            return impl(*args, **kwargs)
        from quadrants.lang.program import sync

        sync()
        start = time.perf_counter()
        out = impl(*args, **kwargs)
        sync()
        times = self._times_by_dispatch_impl_by_geometry_hash[key]
        times[impl].append(time.perf_counter() - start)
        if all(runs.get(i, 0) >= warmup + self.num_active for i in candidates):
            winner = min(times, key=lambda i: sum(times[i]) / len(times[i]))
            self._fastest_dispatch_impl_by_geometry_hash[key] = winner
            self._first_eval_completed.add(key)
            self._last_check_time_by_geometry_hash[key] = time.time()
            _logging.debug(f"perf_dispatch '{self.name}': chose '{winner.name}' out of "
                           f"{len(self._dispatch_impls)} registered functions.", tag="perf_dispatch")  # fmt: skip
        return out


def _same(args: tuple[Any, ...], kwargs: dict[str, Any], args0: tuple[Any, ...], kwargs0: dict[str, Any]) -> bool:
    return (len(args) == len(args0) and len(kwargs) == len(kwargs0) and all(a is b for a, b in zip(args, args0))
            and all(k in kwargs0 and v is kwargs0[k] for k, v in kwargs.items()))  # fmt: skip


def perf_dispatch(*, get_geometry_hash: Callable[..., Any], first_warmup: int = NUM_FIRST_WARMUP,
                  warmup: int = NUM_WARMUP, active: int = NUM_ACTIVE, repeat_after_count: int | None = None,
                  repeat_after_seconds: float | None = None) -> Callable[..., PerformanceDispatcher]:  # fmt: skip
    """Decorator over the prototype function: see the module's docstring."""

    def wrap(prototype: Callable[..., Any]) -> PerformanceDispatcher:
        return PerformanceDispatcher(prototype, get_geometry_hash, first_warmup, warmup, active, repeat_after_count,
                                     repeat_after_seconds)  # fmt: skip

    return wrap
