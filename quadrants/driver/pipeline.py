"""The compiler driver: from a kernel call's specialization to loaded code, through the caches and a backend.

`Driver.obtain` runs the stages in this order, each a method below:

    1. fast lookup      source text + signature → fastcache key → entry (records re-checked) → load    [no frontend]
    2. build            frontend + passes → IR text (the request's `build_ir`), purity check for fastcache kernels
    3. offline lookup   offline key (IR text) → memory, or an artifact entry → load
    4. compile          backend: render + compile → artifact entry stored → load
    5. fast store       a pure fastcache kernel's entry: artifact key, symbol, ABI, funcs and reads to re-check

At exit the kernels this process compiled are linked into one bundle (`cache.fastcache.Session`). The caches
only look up and store; the backend does everything device-specific.
"""

from __future__ import annotations

import atexit
import dataclasses
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from quadrants import _logging
from quadrants._config import Config, cache_root, with_target
from quadrants._stats import STATS
from quadrants.backends import Backend, backend_for
from quadrants.cache import bundle, keys
from quadrants.cache.fastcache import FastEntries, Session, record_counters
from quadrants.cache.source import func_record, resolve_name, source_text
from quadrants.cache.store import CacheStore, Entry
from quadrants.errors import QuadrantsCacheWriteError
from quadrants.frontend.records import FrontendResult
from quadrants.runtime.abi import KernelABI
from quadrants.runtime.loader import Loaded, SharedObjectLoader

PACK = "<object pack>"  # Driver._bundles marker: a pack is loaded whole, not opened by path


class CompileRequest(Protocol):
    """What the driver needs from a kernel call: the kernel's function, whether it uses fastcache, the
    signature text of the call's specialization, and the frontend (run only when no cache answers)."""

    @property
    def fn(self) -> Callable[..., Any]: ...

    @property
    def fastcache(self) -> bool: ...

    def signature_text(self) -> tuple[str | None, str, bool]:
        """(text, "", False), or (None, why not, whether to stay silent) when fastcache cannot key the call."""

    def build_ir(self) -> tuple[FrontendResult, str]:
        """Run the frontend and passes: the result and its IR text."""


@dataclass
class Artifact:
    abi: KernelABI
    loaded: Any  # the backend's loaded code; None when compiled for another process (qd precompile)
    offline_key: str
    compiled: Any = None  # the backend's compile result, when this process compiled the kernel (dumps, tests)


@dataclass
class Outcome:
    """What `obtain` did, for the kernel's observations."""

    artifact: Artifact
    key_generated: bool = False
    validated: bool = False
    loaded: bool = False
    stored: bool = False
    offline_hit: bool = False  # the offline cache (or this process's memory of it) served the lowered kernel


class Driver:
    """The pipeline of one program (one `qd.init`) or one `qd precompile` target: its backend, its caches (the
    disk store, its fastcache entries, and the code loaded in this process)."""

    def __init__(self, config: Config, load: bool = True, device: Any = None) -> None:
        """`load=False` (qd precompile): compile and store, but never load code into this process (it may be
        built for another CPU) and make no session bundle. `device`: the GPU (or emulator) of arch=cuda."""
        self.config = config
        self.load = load
        self.device = device
        self.store = open_store(config)
        self.backend: Backend = backend_for(config, self.store, device)
        self.device_key = self.backend.device_key()
        self.fast = FastEntries(self.store) if self.store is not None else None
        if self.store is not None and self.store.remote_spec is not None:
            self.store.companions = self.backend.companions
        self.session = Session()
        self.memory: dict[str, Artifact] = {}  # offline key -> loaded code
        self._bundles: dict[str, str] = {}  # bundle key -> path (or PACK), once opened
        self._others: dict[str, Driver] = {}  # another target -> its driver (`_other_targets`)
        self._other_targets: list[str] | None = None
        if self.store is not None and load:
            atexit.register(self.finish_session)
        elif self.store is not None and self.store.remote_spec is not None:
            atexit.register(self.store.flush_remote)  # qd precompile: what it compiled goes to the remote

    # ---- the pipeline ---------------------------------------------------------------------------------------

    def obtain(self, req: CompileRequest) -> Outcome:
        config = self.config
        fast_key, inputs = None, None
        if req.fastcache and config.src_ll_cache:
            # the key is made even without a disk cache (offline_cache=False), as in Quadrants: programs read
            # `cache_key_generated` to see that a kernel is fastcache-able
            inputs = self.fast_inputs(req)
            if inputs is not None:
                fast_key = keys.fastcache_digest(*inputs, config, self.device_key)
                art = self._fast_lookup(req.fn, fast_key, inputs) if self.fast is not None else None  # 1
                if art is not None:
                    return Outcome(art, key_generated=True, validated=True, loaded=True)
        elif not req.fastcache and config.print_non_pure:
            print(f"[NOT_PURE] Debug information: not pure: {req.fn.__name__}")
        fe, ir_text = req.build_ir()  # 2
        report = None
        if req.fastcache:
            from quadrants.driver import purity

            report = purity.check(fe, req.fn)
            purity.apply(report)
        okey = keys.offline_key(ir_text, config, self.device_key).digest()
        art = self.memory.get(okey)
        if art is not None:
            STATS.count("memory_hits")
        else:
            art = self._offline_lookup(okey, ir_text)  # 3
        from_cache = art is not None
        if art is None:
            art = self._compile(okey, fe, ir_text, req.fn)  # 4
        elif art.abi.sites:  # the same code, but its check sites are where this source is
            from quadrants.codegen.abi import site_abis

            art = Artifact(dataclasses.replace(art.abi, sites=site_abis(fe.kernel)), art.loaded, okey)
        stored = False
        if fast_key is not None and inputs is not None and report is not None and self.fast is not None:  # 5
            fallback = report.fallback or _unresolvable_owner(report.records)
            if fallback:
                STATS.count("fastcache_fallbacks")
                _logging.warn(f"fastcache is off for kernel {req.fn.__qualname__!r}: {fallback}", tag="fastcache")
            else:
                stored = self._fast_store(req.fn, fast_key, inputs, art, fe, report.records)
        return Outcome(art, key_generated=fast_key is not None, loaded=from_cache, stored=stored,
                       offline_hit=from_cache)  # fmt: skip

    def fast_inputs(self, req: CompileRequest) -> tuple[str, str] | None:
        """The kernel's source text and the signature text of the call: with the config, the fastcache key."""
        text = source_text(req.fn)
        if text is None:
            _logging.debug(f"fastcache: the source of {req.fn.__qualname__!r} cannot be read", tag="fastcache")
            return None
        signature, reason, silent = req.signature_text()
        if signature is None:
            STATS.count("fastcache_fallbacks")
            if not silent:  # the tags are Quadrants' (programs grep for them); the rest is free text
                _logging.warn(f"[FASTCACHE][PARAM_INVALID] {reason}: not allowed by fast cache", tag="fastcache")
                _logging.warn(f"[FASTCACHE][INVALID_FUNC] The pure function {req.fn.__name__} could not be fast "
                              "cached, because one or more parameter types were invalid; it compiles normally",
                              tag="fastcache")  # fmt: skip
            return None
        return text, signature

    # ---- 1. fast lookup ------------------------------------------------------------------------------------

    def _fast_lookup(self, fn: Callable[..., Any], fast_key: str, inputs: tuple[str, str]) -> Artifact | None:
        t0 = time.perf_counter()
        art = self._fast_find(fn, fast_key)
        if art is None:
            for other in self._other_drivers():
                art = other._fast_find(fn, keys.fastcache_digest(*inputs, other.config, other.device_key))
                if art is not None:
                    STATS.count("baseline_hits")
                    break
        STATS.time("fastcache_lookup", time.perf_counter() - t0)
        STATS.count("fastcache_hits" if art is not None else "fastcache_misses")
        return art

    def _fast_find(self, fn: Callable[..., Any], fast_key: str) -> Artifact | None:
        """This driver's code for `fast_key`: from a bundle already opened, else from the fast entry's file."""
        assert self.fast is not None
        if not self.load:
            meta, _ = self.fast.findable(fn, fast_key)
            return Artifact(KernelABI.from_dict(meta["abi"]), None, meta["artifact"]) if meta is not None else None
        indexed = self.fast.indexed(fn, fast_key)  # no file to read
        if indexed is not None:
            art = self._from_bundle(indexed)
            if art is not None:
                return art
        meta = self.fast.read(fn, fast_key)
        if meta is None:
            return None
        okey = meta["artifact"]
        art = self.memory.get(okey)
        if art is not None:
            return art
        if "bundle" in meta:
            art = self._from_bundle(meta)
            if art is not None:
                return art
        entry = self.store.read("artifact", okey) if self.store is not None else None
        if entry is None:
            return None
        obj = self.backend.entry_object(entry) if "bundle" in meta else None
        if obj is not None:  # the bundle is gone or damaged: this session's bundle will hold the kernel again
            self.session.objects[okey] = obj
            self.session.fast[fast_key] = {k: v for k, v in meta.items() if k != "bundle"}
        return self._load(okey, entry)

    def _from_bundle(self, meta: dict[str, Any]) -> Artifact | None:
        """The kernel from the bundle its entry names: one dlopen per bundle and process, then a lookup. Opening
        a bundle also loads its index of fastcache entries, so its other kernels need no file read at all."""
        assert self.store is not None and self.fast is not None
        okey = meta["artifact"]
        art = self.memory.get(okey)
        if art is not None:
            return art
        bkey = meta["bundle"]
        path = self._bundles.get(bkey)
        if path is None:
            entry = self.store.read("bundle", bkey)
            if entry is None:
                return None
            if entry.meta.get("pack"):
                path = self._bundles[bkey] = PACK
                for k, (abi, loaded) in bundle.load_pack(entry).items():
                    self.memory[k] = Artifact(KernelABI.from_dict(abi), loaded, k)
            elif not self.prepare():
                return None
            else:
                path = self._bundles[bkey] = entry.path
            self.fast.add_index(bkey, entry)
        if path == PACK:
            return self.memory.get(okey)  # every kernel of the pack was loaded with it
        try:
            handle = bundle.open_bundle(path)
            address = SharedObjectLoader.symbol(handle, meta["symbol"], path)
        except OSError as e:
            _logging.debug(f"bundle {path}: {e}", tag="cache")
            return None
        art = Artifact(KernelABI.from_dict(meta["abi"]), Loaded(address, handle), okey)
        self.memory[okey] = art
        return art

    # ---- 3. offline lookup ---------------------------------------------------------------------------------

    def _offline_lookup(self, okey: str, ir_text: str) -> Artifact | None:
        """This key's artifact entry, else a compatible one another target recorded (a portable CPU level, an
        older architecture of this GPU)."""
        if self.store is None:
            return None
        entry = self.store.read("artifact", okey)
        if entry is not None:
            STATS.count("offline_hits")
            if not self.load:  # qd precompile: known to be there, nothing to load
                known = self.memory[okey] = Artifact(KernelABI.from_dict(entry.meta["abi"]), None, okey)
                return known
            return self._load(okey, entry)
        for other in self._other_drivers():
            other_key = keys.offline_key(ir_text, other.config, other.device_key).digest()
            other_entry = other.store.read("artifact", other_key) if other.store is not None else None
            if other_entry is not None:
                self.memory[okey] = found = other._load(other_key, other_entry)
                STATS.count("offline_hits")
                return found
        STATS.count("offline_misses")
        return None

    def _load(self, okey: str, entry: Entry) -> Artifact:
        t0 = time.perf_counter()
        abi, loaded = self.backend.load_entry(entry)
        art = self.memory[okey] = Artifact(abi, loaded, okey)
        STATS.time("load", time.perf_counter() - t0)
        return art

    def _other_drivers(self) -> list[Driver]:
        """Drivers for the targets `qd precompile` recorded in this cache that this process can run, best first."""
        if not self.load or self.store is None:
            return []
        if self._other_targets is None:
            self._other_targets = self.backend.runnable_targets(self.store.read_json("targets.json"))
        out = []
        for target in self._other_targets:
            other = self._others.get(target)
            if other is None:
                other = self._others[target] = Driver(with_target(self.config, target), device=self.device)
            out.append(other)
        return out

    # ---- 4. compile ----------------------------------------------------------------------------------------

    def _compile(self, okey: str, fe: FrontendResult, ir_text: str, fn: Callable[..., Any]) -> Artifact:
        name = fn.__qualname__
        symbol = symbol_for(name, okey)
        compiled = self.backend.compile(self.backend.render(fe, ir_text, symbol))
        if self.config.ptx_check:
            from quadrants.backends.cuda import check_ptx

            check_ptx(fe, ir_text, name, symbol, self.config)
        path = None
        if self.store is not None:
            body, meta = self.backend.entry(compiled)
            path = self.store.write("artifact", okey, body, {**meta, **self.describe(fn)})
            if path is None:
                self._refused(f"kernel {name!r}")
        if self.load:
            loaded = self.backend.load(compiled, path)
        else:
            loaded = None
            self.prepare()  # built and cached for the target, not loaded
        art = self.memory[okey] = Artifact(compiled.abi, loaded, okey, compiled)
        obj = self.backend.bundle_object(compiled) if path is not None else None
        if obj is not None:
            self.session.objects[okey] = obj
        return art

    def prepare(self) -> bool:
        """What the backend's code links against (the CPU's native runtime), found or built once."""
        return self.backend.prepare(self.load)

    # ---- 5. fast store -------------------------------------------------------------------------------------

    def _fast_store(self, fn: Callable[..., Any], fast_key: str, inputs: tuple[str, str], art: Artifact,
                    fe: FrontendResult, records: list[Any]) -> bool:  # fmt: skip
        """Write the fastcache entry: what a lookup needs (artifact key, symbol, ABI, funcs and reads to re-check)
        and, for `qd cache ls/explain`, the kernel's name and the key's parts (kept out of bundle indexes)."""
        assert self.fast is not None
        funcs = []
        for fs in fe.funcs:
            if fs.fn.__module__.split(".")[0] == "quadrants":
                continue  # the compiler's own funcs: covered by the version in the key
            rec = func_record(fs.fn, fn)
            if rec is None:
                _logging.debug(f"fastcache: the source of func {fs.name!r} cannot be read", tag="fastcache")
                return False
            funcs.append(rec.to_json())
        abi = art.abi
        text, signature = inputs
        meta = {"artifact": art.offline_key, "kernel": fn.__qualname__, "symbol": abi.symbol, "abi": abi.to_dict(),
                "funcs": funcs, "captures": [r.to_json() for r in records], **self.describe(fn),
                "parts": keys.fastcache_key(text, signature, self.config, self.device_key).parts}  # fmt: skip
        ok = self.fast.write(fast_key, meta)
        if ok:
            self.session.fast[fast_key] = meta
        else:
            self._refused(f"the fastcache entry of kernel {fn.__qualname__!r}")
        return ok

    def _refused(self, what: str) -> None:
        """`offline_cache_fallback=False` in a program: a write the cache folder refused is an error naming the
        folder and the cause, as the setting promises (without it the store moves to a private folder, with a
        warning). qd precompile (`load=False`) reports `store.write_error` per signature itself."""
        store = self.store
        if not self.load or store is None or store.allow_fallback or not store.write_error:
            return
        why, store.write_error = store.write_error, None
        raise QuadrantsCacheWriteError(
            f"the cache folder refused to store {what}: {why} (offline_cache_fallback=False: no private fallback "
            "folder; make the folder writable, point offline_cache_file_path / QD_CACHE_DIR elsewhere, or leave "
            "offline_cache_fallback on)"
        )

    def finish_session(self) -> str | None:
        """At exit: this process's kernels as one bundle (see `Session.finish`), then what this process wrote
        goes to the remote cache, then its counters to `stats.json`; returns the bundle's path."""
        if self.store is None:
            return None
        path = self.session.finish(self.store, self.config, self.device_key, lambda: self.backend.linker)
        if self.store.write_error and not self.store.allow_fallback and self.load:  # at exit: said, not raised
            _logging.warn(f"this process's kernels were not bundled: the cache folder refused the write "
                          f"({self.store.write_error})", tag="cache")  # fmt: skip
        self.store.flush_remote()
        try:
            record_counters(self.store)
        except OSError as e:  # bookkeeping never fails the exit
            _logging.debug(f"counters not recorded: {e}", tag="cache")
        return path

    # ---- probes (qd precompile --check, qd cache explain) ---------------------------------------------------

    def probe(self, req: CompileRequest) -> tuple[str | None, str | None]:
        """Would a fresh process find this call's code without compiling? (fastcache key or None, None if so,
        else why not). Reads entries (checksums included) and loads nothing. A kernel without fastcache runs the
        frontend to find its offline key."""
        if self.store is None or self.fast is None:
            return None, "the offline cache is off"
        if not req.fastcache:
            _, ir_text = req.build_ir()
            okey = keys.offline_key(ir_text, self.config, self.device_key).digest()
            return None, None if self.store.read("artifact", okey) is not None else "not in the offline cache"
        inputs = self.fast_inputs(req)
        if inputs is None:
            return None, "fastcache does not apply to these arguments"
        fast_key = keys.fastcache_digest(*inputs, self.config, self.device_key)
        return fast_key, self.fast.findable(req.fn, fast_key)[1]

    def describe(self, fn: Callable[..., Any]) -> dict[str, str]:
        """What `qd cache ls` shows of an entry: the kernel as module:qualname and the target."""
        return {"name": f"{fn.__module__}:{fn.__qualname__}", "target": self.backend.target}


def open_store(config: Config) -> CacheStore | None:
    """The disk cache of `config` (None when `offline_cache` is off)."""
    if not config.offline_cache:
        return None
    remote = (config.remote_cache, config.remote_cache_readonly, config.remote_cache_timeout) if config.remote_cache else None
    return CacheStore(cache_root(config), config.offline_cache_max_size_of_files, config.offline_cache_cleaning_policy,
                      config.offline_cache_cleaning_factor, config.offline_cache_fallback, remote)  # fmt: skip


def symbol_for(name: str, offline_key: str) -> str:
    """The kernel's entry symbol: readable, and unique per lowered kernel, target and config (the offline key
    covers all three), so the kernels of a bundle never collide."""
    return f"qd_{re.sub(r'[^0-9A-Za-z_]', '_', name)[:48]}_{offline_key[:16]}"


def _unresolvable_owner(records: list[Any]) -> str | None:
    for r in records:
        if r.where != "class" and r.owner != "kernel" and resolve_name(r.owner) is None:
            return f"func {r.owner} (defined inside a function) reads {r.name!r}, which cannot be re-checked"
    return None


_DRIVERS: dict[int, Driver] = {}


def driver_for(program: Any) -> Driver:
    """The Driver of a program (made on first use)."""
    d = _DRIVERS.get(program.generation)
    if d is None:
        _DRIVERS.clear()
        d = _DRIVERS[program.generation] = Driver(program.config, device=program.device)
    return d
