"""A kernel's specialization as the driver sees it (`quadrants.driver.CompileRequest`): what the fastcache key
is made of (`signature_text`), and the frontend run that builds its IR (`build_ir`, imported only when the
caches miss)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from quadrants.lang.args import Specialization, signature_text

if TYPE_CHECKING:
    from quadrants.lang.kernel import Kernel


@dataclass(frozen=True)
class CallRequest:
    """A kernel's specialization as the driver sees it (`quadrants.driver.CompileRequest`)."""

    kernel: Kernel
    spec: Specialization
    config: Any
    returns: tuple[Any, ...]

    @property
    def fn(self) -> Callable[..., Any]:
        return self.kernel.fn

    @property
    def fastcache(self) -> bool:
        return self.kernel.fastcache

    def signature_text(self) -> tuple[str | None, str, bool]:
        text, why, silent = signature_text(self.spec)
        if text is None:
            return text, why, silent
        fn, mode = self.kernel.fn, self.kernel.mode
        # the decorator's flags change the code (and a decorator other than `@qd.kernel(...)` may hide them)
        flags = "".join(f";{k}" for k in ("graph", "checkpoints") if getattr(fn, f"__qd_{k}__", False))
        return text + flags + (f";autodiff={mode}" if mode else ""), why, silent

    def build_ir(self) -> tuple[Any, str]:
        from quadrants._stats import STATS
        from quadrants.driver.build import build_ir_text  # the frontend: not imported when a cache hit serves the call

        k = self.kernel
        t0 = time.perf_counter()
        out = build_ir_text(k.source, k.fn.__qualname__, self.spec.specs, self.returns, self.config, k.mode,
                            self.spec.guards)  # fmt: skip
        STATS.time("frontend", time.perf_counter() - t0)
        return out
