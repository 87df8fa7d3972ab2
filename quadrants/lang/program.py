"""The process-wide program state: the active `Config` and a generation number that `qd.init`/`qd.reset` bump
(kernels drop what they compiled under an older generation).

Consumes `qd.init(...)` arguments; produces the state every kernel call reads.
"""

from __future__ import annotations

import re
import time
import weakref
from dataclasses import dataclass, field
from typing import Any

from quadrants import _config, _logging
from quadrants._config import Config
from quadrants._stats import STATS
from quadrants.runtime import device as memory
from quadrants.runtime import python_backend
from quadrants.runtime.device import Device
from quadrants.runtime.fields import FieldMemory
from quadrants.runtime.random_state import RandomState
from quadrants.types.dtypes import PrimitiveType, to_dtype


@dataclass
class Program:
    config: Config
    generation: int
    fields: FieldMemory = field(default_factory=FieldMemory)
    device: Device | None = None  # the GPU (or its emulator) for arch=cuda; None on the CPU
    random: RandomState = field(default_factory=RandomState)  # qd.random(): the seed and the launch count
    made_fields: list[Any] = field(default_factory=list)  # weak references to every qd.field made (lazy_grad)
    checked_fields: int = 0  # how many of them a kernel launch has checked (lang/snode.materialize)
    trees: int = 0  # SNode trees numbered so far (flat fields' trees included: lang/snode.py)
    on_end: list[Any] = field(default_factory=list)  # called when the program ends (sparse trees free their pools)


_program: Program | None = None
_generation = 0


def next_tree_number() -> int:
    """The number of the program's next SNode tree (Quadrants' `_snode_tree_id`)."""
    prog = get()
    prog.trees += 1
    return prog.trees - 1
# Objects with a `forget()` method (kernels) that hold compiled code: cleared by qd.init / qd.reset, so no
# fast path of an older program runs after them.
_holders: weakref.WeakSet[Any] = weakref.WeakSet()


def register(holder: Any) -> None:
    _holders.add(holder)


def _forget_all() -> None:
    for h in list(_holders):
        h.forget()


def _forget_ndarrays() -> None:
    """A new program's ndarrays are counted from none (`impl.get_runtime().ndarrays`)."""
    from quadrants.runtime.ndarray import LIVE

    LIVE.clear()


def get() -> Program:
    """The current program, initializing with defaults on first use (as Quadrants does)."""
    if _program is None:
        init()
    assert _program is not None
    return _program


def resolve_dtype(dt: Any) -> PrimitiveType:
    """A dtype as the current program reads it (`float`/`int` are its default types)."""
    c = get().config
    return to_dtype(dt, c.default_ip, c.default_fp)


def init(arch: Any = None, default_fp: Any = None, default_ip: Any = None, **kwargs: Any) -> Config | None:
    """`qd.init(arch=qd.cpu, ...)`: (re)start with the given options. See `quadrants/_config.py`. With
    `_test_mode=True` it returns the settings (Quadrants' test hook: `qd.init(_test_mode=True).log_level`);
    `require_version="1.2.3"` raises unless this package's major version is 1 and it is at least 1.2.3."""
    t0 = time.perf_counter()
    try:
        if kwargs.get("require_version") is not None:
            _check_version(str(kwargs["require_version"]))
        _init(arch, default_fp, default_ip, **kwargs)
        return get().config if kwargs.get("_test_mode") else None
    finally:
        STATS.time("init", time.perf_counter() - t0)


def _init(arch: Any, default_fp: Any, default_ip: Any, **kwargs: Any) -> None:
    global _program, _generation
    if arch is not None:
        kwargs["arch"] = arch
    if default_fp is not None:
        kwargs["default_fp"] = default_fp
    if default_ip is not None:
        kwargs["default_ip"] = default_ip
    config, notes = _config.load_config(kwargs)
    _logging.set_level(config.log_level)
    for note in notes:
        _logging.warn(note, tag="init")
    if (config.print_ir or config.dump_ir or "ir" in config.dump.split(",")) and config.offline_cache:
        import warnings

        # a Python warning (Quadrants' code, which programs filter on): what hits a cache is never compiled, so
        # it prints and dumps nothing
        warnings.warn("print_ir / dump_ir show the IR of the kernels this process compiles: those loaded from the "
                      "cache (fastcache or offline) show none; qd.init(offline_cache=False) to see every kernel's. "
                      "[warning_code=DUMP_IR_CACHE_MISMATCH]", UserWarning, stacklevel=3)  # fmt: skip
    from quadrants.backends import open_device

    config, dev = open_device(config)
    _config.check_ir_loading(config.arch, config.load_ir, config.load_ptx, config.offline_cache, config.src_ll_cache)
    _end()
    _forget_all()
    _forget_ndarrays()
    _generation += 1
    memory.set_current(dev if dev is not None else memory.HOST)
    python_backend.set_active(config.arch is _config.python)
    _program = Program(config=config, generation=_generation, fields=FieldMemory(), device=dev,
                       random=RandomState(config.random_seed))  # fmt: skip
    _logging.info(f"Starting on arch={config.arch}", tag="init")


def _check_version(required: str) -> None:
    from quadrants._lib.utils import _version

    m = re.match(r"(\d+)\.(\d+)(?:\.(\d+))?", required)
    if m is None:
        raise ValueError(f"require_version={required!r}: expected major.minor.patch (PEP 440), e.g. 1.3.3")
    major, minor, patch = int(m[1]), int(m[2]), int(m[3] or 0)
    have = _version()
    if major != have[0] or (minor, patch) > have[1:]:
        raise RuntimeError(f"Quadrants version mismatch: required {required}, this is "
                           f"{'.'.join(map(str, have))}")  # fmt: skip


def _end() -> None:
    """The ending program's `on_end` calls (memory that is not field memory goes back)."""
    if _program is not None:
        calls, _program.on_end = _program.on_end, []
        for call in calls:
            call()


def current_config() -> Config | None:
    """The active program's config (`qd.cfg`), None before the first qd.init."""
    return _program.config if _program is not None else None


def reset() -> None:
    """`qd.reset()`: forget the program; kernels recompile (or reload from cache) at their next call."""
    global _program, _generation
    _end()
    _forget_all()
    _forget_ndarrays()
    _generation += 1
    _program = None
    memory.set_current(memory.HOST)
    python_backend.set_active(False)


def sync() -> None:
    """`qd.sync()`: wait for launched kernels (CPU kernels run synchronously: nothing to wait for)."""
    memory.current().sync()


def set_defaults(parse: bool = True, **defaults: Any) -> None:
    """`impl.get_runtime().set_default_fp(qd.f64)` (and `_ip`): later kernels type `float` / `int` and literals
    with these. The config changes (its keys hold the defaults), so compiled kernels recompile or reload.
    `parse=False`: the values are dtypes the caller has checked (`impl.Runtime.default_ip`)."""
    global _generation
    import dataclasses

    prog = get()
    parsed = {k: _config.FIELDS[k].metadata["parse"](v) if parse else v for k, v in defaults.items()}
    _forget_all()
    _generation += 1
    prog.config, prog.generation = dataclasses.replace(prog.config, **parsed), _generation


def compiled_count() -> int:
    """How many kernel specializations this program has compiled or loaded (Quadrants'
    `get_num_compiled_functions`): one per argument types and template values of each kernel."""
    return sum(sum(1 for e in getattr(h, "_launchers", {}).values() if not isinstance(e, Exception))
               for h in list(_holders))  # fmt: skip
