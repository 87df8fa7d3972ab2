"""From a kernel's specialization to loaded code, through fastcache, the offline cache and the compiler.

    fastcache lookup (source text + signature; no frontend)  --hit + checks pass-->  load artifact
        | miss / not applicable
    frontend + passes --> purity check (fastcache kernels) --> offline key (IR)
        --hit--> load artifact
        --miss--> codegen --> link (.so) --> store artifact --> load
    then, for a pure fastcache kernel: store its fastcache entry (artifact key, funcs, checked reads)

An artifact entry holds the linked shared object (opened with ctypes: no llvmlite) followed by the object code
(linked in-process with ORC when no linker or no executable mapping is available) and the kernel's ABI.
"""

from __future__ import annotations

import atexit
import dataclasses
import time
from dataclasses import dataclass
from typing import Any

from quadrants import _logging
from quadrants._config import Config, cache_root, with_target
from quadrants._stats import STATS
from quadrants.cache import bundle, keys
from quadrants.cache.runtime_lib import load_runtime_so, try_dlopen
from quadrants.cache.source import FuncRecord, func_record, func_unchanged, resolve_name, source_text
from quadrants.cache.store import CacheStore, Entry
from quadrants.errors import QuadrantsCompilationError
from quadrants.runtime.abi import KernelABI
from quadrants.runtime.loader import Loaded, OrcLoader, SharedObjectLoader

PACK = "<object pack>"  # KernelCache._bundles marker: a pack is loaded whole, not opened by path


@dataclass
class Artifact:
    abi: KernelABI
    loaded: Any  # Loaded (CPU), LoadedCuda (GPU), or None when compiled for another process (qd precompile)
    offline_key: str


@dataclass
class Outcome:
    """What `obtain` did, for the kernel's observations."""

    artifact: Artifact
    key_generated: bool = False
    validated: bool = False
    loaded: bool = False
    stored: bool = False


class KernelCache:
    """The caches of one program (one `qd.init`): the disk store and an in-memory layer in front of it."""

    def __init__(self, config: Config, load: bool = True, device: Any = None) -> None:
        """`load=False` (qd precompile): compile and store, but never load code into this process (it may be
        built for another CPU) and make no session bundle. `device`: the GPU (or emulator) of arch=cuda."""
        self.config = config
        self.load = load
        self.device = device
        self.store = (
            CacheStore(
                cache_root(config),
                config.offline_cache_max_size_of_files,
                config.offline_cache_cleaning_policy,
                config.offline_cache_cleaning_factor,
                config.offline_cache_fallback,
            )  # fmt: skip
            if config.offline_cache
            else None
        )
        self.memory: dict[str, Artifact] = {}  # offline key -> loaded code
        self.runtime_so: bool | None = None  # None: not tried yet
        self._bundles: dict[str, str] = {}  # bundle key -> path, once read
        self._index: dict[str, dict[str, Any]] = {}  # fastcache key -> entry, from the bundles read
        self._session_objects: dict[str, bytes] = {}  # offline key -> object code compiled by this process
        self._session_fast: dict[str, dict[str, Any]] = {}  # fastcache entries written by this process
        self._bundles_checked: dict[str, bool] = {}  # bundle key -> whole (probe)
        self._alternates: dict[str, KernelCache] = {}  # another target -> its cache (_lookup_baselines)
        self._baseline_targets: list[str] | None = None
        if self.store is not None and load:
            atexit.register(self.finish_session)

    @property
    def linker(self) -> str | None:
        from quadrants.cache.link import find_linker  # imports subprocess: only when linking

        return find_linker(self.config.linker) if self.store is not None else None

    # ---- the entry point --------------------------------------------------------------------------------

    def obtain(self, kernel: Any, spec: Any, compile_ir: Any) -> Outcome:
        """`compile_ir()` runs the frontend and passes (returns a FrontendResult and its IR text);
        `kernel` supplies `fn`, `fastcache`, `_primal` and the source for keys."""
        config = self.config
        fast_key = None
        inputs: tuple[str, str] | None = None
        if kernel.fastcache and config.src_ll_cache and self.store is not None:
            inputs = self.fastcache_inputs(kernel, spec)
            if inputs is not None:
                fast_key = keys.fastcache_digest(*inputs, config)
                t0 = time.perf_counter()
                art = self._fastcache_lookup(kernel, fast_key)
                if art is None and self._may_use_baselines():
                    art = self._lookup_baselines(kernel, inputs)
                STATS.time("fastcache_lookup", time.perf_counter() - t0)
                if art is not None:
                    STATS.count("fastcache_hits")
                    return Outcome(art, key_generated=True, validated=True, loaded=True)
                STATS.count("fastcache_misses")
        elif not kernel.fastcache and config.print_non_pure:
            print(f"[NOT_PURE] Debug information: not pure: {kernel.fn.__name__}")
        from quadrants.cache.purity import check

        fe, ir_text = compile_ir()
        report = check(fe, kernel.fn) if kernel.fastcache else None
        if report is not None:
            self._apply_purity(kernel, report)
        okey = keys.offline_key(ir_text, config).digest()
        art, loaded_from_cache = self._artifact(okey, fe, ir_text, kernel)
        if loaded_from_cache and art.abi.sites:  # the same code, but its check sites are where this source is
            from quadrants.driver import site_abis

            art = Artifact(dataclasses.replace(art.abi, sites=site_abis(fe.kernel)), art.loaded, okey)
        stored = False
        if fast_key is not None and inputs is not None and report is not None:
            fallback = report.fallback or self._unresolvable_owner(report.records)
            if fallback:
                STATS.count("fastcache_fallbacks")
                _logging.warn(f"fastcache is off for kernel {kernel.fn.__qualname__!r}: {fallback}", tag="fastcache")
            else:
                stored = self._fastcache_store(kernel, fast_key, inputs, art, fe, report.records)
        return Outcome(art, key_generated=fast_key is not None, loaded=loaded_from_cache, stored=stored)

    # ---- fastcache ----------------------------------------------------------------------------------

    def _fastcache_key(self, kernel: Any, spec: Any) -> str | None:
        inputs = self.fastcache_inputs(kernel, spec)
        return keys.fastcache_digest(*inputs, self.config) if inputs is not None else None

    def fastcache_inputs(self, kernel: Any, spec: Any) -> tuple[str, str] | None:
        """The kernel's source text and the signature text of `spec`: with the config, the fastcache key."""
        from quadrants.lang.args import signature_text

        text = source_text(kernel.fn)
        if text is None:
            _logging.debug(f"fastcache: the source of {kernel.fn.__qualname__!r} cannot be read", tag="fastcache")
            return None
        signature, reason, silent = signature_text(spec)
        if signature is None:
            STATS.count("fastcache_fallbacks")
            if not silent:  # the tags are Quadrants' (programs grep for them); the rest is free text
                _logging.warn(f"[FASTCACHE][PARAM_INVALID] {reason}: not allowed by fast cache", tag="fastcache")
                _logging.warn(f"[FASTCACHE][INVALID_FUNC] The pure function {kernel.fn.__name__} could not be fast "
                              "cached, because one or more parameter types were invalid; it compiles normally",
                              tag="fastcache")  # fmt: skip
            return None
        return text, signature

    def _lookup_baselines(self, kernel: Any, inputs: tuple[str, str]) -> Artifact | None:
        """A miss for this exact CPU: try the portable CPU targets (`x86-64-v3`...) that `qd precompile` filled
        this cache for and this CPU can run, so an image precompiled on one machine starts fast on another."""
        for target in self._baselines():
            sub = self._alternate(target)
            art = sub._fastcache_lookup(kernel, keys.fastcache_digest(*inputs, sub.config))
            if art is not None:
                STATS.count("baseline_hits")
                return art
        return None

    def _offline_baselines(self, fe: Any, ir_text: str) -> Artifact | None:
        """`_lookup_baselines` for the offline cache: the same lowered kernel, compiled for a portable target."""
        for target in self._baselines():
            sub = self._alternate(target)
            okey = keys.offline_key(ir_text, sub.config).digest()
            entry = sub.store.read("artifact", okey) if sub.store is not None else None
            if entry is not None:
                return sub._load(okey, entry)
        return None

    def _alternate(self, target: str) -> KernelCache:
        sub = self._alternates.get(target)
        if sub is None:
            full = f"cuda:{target}" if self.config.arch.name == "cuda" else target
            sub = self._alternates[target] = KernelCache(with_target(self.config, full), device=self.device)
        return sub

    def _may_use_baselines(self) -> bool:
        """Whether another target's code can serve this process: a `host` CPU program (portable x86-64
        levels), or a real GPU (an older architecture's cubin of the same major version, or PTX)."""
        if not self.load:
            return False
        if self.config.arch.name == "cuda":
            return self.device is not None and not self.device.emulated
        return self.config.cpu_target == "host"

    def _baselines(self) -> list[str]:
        """The targets `qd precompile` recorded in this cache that this machine can run, best first."""
        if self._baseline_targets is None:
            assert self.store is not None
            listed = self.store.read_json("targets.json")
            if self.config.arch.name == "cuda":
                own = _sm(self.config.cuda_arch)
                archs = [a for a in listed.get("cuda", []) if a != self.config.cuda_arch and 0 < _sm(a) <= own]
                self._baseline_targets = sorted(archs, key=_sm, reverse=True)
            else:
                cpu = listed.get("cpu", [])
                self._baseline_targets = [t for t in cpu if t != "host" and keys.host_runs(t)]
        return self._baseline_targets

    def probe(self, kernel: Any, spec: Any) -> tuple[str | None, str | None]:
        """Would a fresh process find this specialization by fastcache? (its fastcache key, None) if so, else
        (key or None, the reason). Reads entries (checksums included) and loads nothing: `qd precompile` uses it
        to skip what is cached and `--check` to prove a deployment starts without compiling."""
        if self.store is None:
            return None, "the offline cache is off"
        fast_key = self._fastcache_key(kernel, spec)
        if fast_key is None:
            return None, "fastcache does not apply to these arguments"
        return fast_key, self._findable(kernel, fast_key)[1]

    def _findable(self, kernel: Any, fast_key: str) -> tuple[dict[str, Any] | None, str | None]:
        """(the fastcache entry's metadata, None) when a lookup would find its code, else (None, why not)."""
        assert self.store is not None
        entry = self.store.read("fast", fast_key)
        if entry is None:
            return None, "no fastcache entry"
        if not self._valid(kernel, entry.meta):
            return None, "a func or a value the kernel reads changed since it was compiled"
        meta = entry.meta
        if "bundle" in meta and self._bundle_ok(meta["bundle"]):
            return meta, None
        if self.store.read("artifact", meta["artifact"]) is None:
            return None, "the compiled code is missing or damaged"
        return meta, None

    def probe_offline(self, spec_ir: Any) -> str | None:
        """For a kernel without fastcache: is its lowered IR (from `spec_ir()`, the frontend) in the offline
        cache? None if so, else the reason."""
        if self.store is None:
            return "the offline cache is off"
        _, ir_text = spec_ir()
        okey = keys.offline_key(ir_text, self.config).digest()
        return None if self.store.read("artifact", okey) is not None else "not in the offline cache"

    def _bundle_ok(self, bkey: str) -> bool:
        ok = self._bundles_checked.get(bkey)
        if ok is None:
            assert self.store is not None
            ok = self._bundles_checked[bkey] = self.store.read("bundle", bkey) is not None
        return ok

    def _fastcache_lookup(self, kernel: Any, fast_key: str) -> Artifact | None:
        assert self.store is not None
        if not self.load:
            return self._fastcache_lookup_unloaded(kernel, fast_key)
        indexed = self._index.get(fast_key)  # from a bundle this process opened: no file to read
        if indexed is not None and self._valid(kernel, indexed):
            art = self._from_bundle(fast_key, indexed)
            if art is not None:
                return art
        entry = self.store.read("fast", fast_key)
        if entry is None or not self._valid(kernel, entry.meta):
            return None
        meta = entry.meta
        okey = meta["artifact"]
        art = self.memory.get(okey)
        if art is not None:
            return art
        if "bundle" in meta:
            art = self._from_bundle(fast_key, meta)
            if art is not None:
                return art
        art_entry = self.store.read("artifact", okey)
        if art_entry is None:
            return None
        if "bundle" in meta:  # the bundle is gone or damaged: this session's bundle will hold the kernel again
            self._session_objects[okey] = object_code(art_entry)
            self._session_fast[fast_key] = {k: v for k, v in meta.items() if k != "bundle"}
        return self._load(okey, art_entry)

    def _fastcache_lookup_unloaded(self, kernel: Any, fast_key: str) -> Artifact | None:
        meta, _ = self._findable(kernel, fast_key)
        return Artifact(KernelABI.from_dict(meta["abi"]), None, meta["artifact"]) if meta is not None else None

    def _valid(self, kernel: Any, meta: dict[str, Any]) -> bool:
        """The funcs the kernel reached and the outside values it read are as they were when compiled."""
        for rec in meta.get("funcs", []):
            if not func_unchanged(FuncRecord(**rec), kernel.fn):
                _logging.debug(f"fastcache: {rec['qualname']} changed since the entry was made", tag="fastcache")
                return False
        for rec in meta.get("captures", []):
            if not _capture_unchanged(rec, kernel.fn):
                _logging.debug(f"fastcache: the value of {rec['name']} changed", tag="fastcache")
                return False
        return True

    def _from_bundle(self, fast_key: str, meta: dict[str, Any]) -> Artifact | None:
        """The kernel from the bundle its entry names: one dlopen per bundle and process, then a lookup. Opening
        a bundle also loads its index of fastcache entries, so its other kernels need no file read at all."""
        assert self.store is not None
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
                self._load_pack(entry)
            elif not self._ensure_runtime_so():
                return None
            else:
                path = self._bundles[bkey] = entry.path
            for k, m in entry.meta.get("index", {}).items():
                self._index.setdefault(k, {**m, "bundle": bkey})
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

    def _load_pack(self, entry: Entry) -> None:
        """An object pack: all its kernels linked in-process at once (llvmlite), each kept in memory."""
        for okey, (abi, loaded) in bundle.load_pack(entry).items():
            self.memory[okey] = Artifact(KernelABI.from_dict(abi), loaded, okey)

    def _fastcache_store(self, kernel: Any, fast_key: str, inputs: tuple[str, str], art: Artifact, fe: Any, records: list[Any]) -> bool:
        """Write the fastcache entry: what a lookup needs (artifact key, symbol, ABI, funcs and reads to re-check)
        and, for `qd cache ls/explain`, the kernel's name and the key's parts (kept out of bundle indexes)."""
        assert self.store is not None
        funcs = []
        for fs in fe.funcs:
            if fs.fn.__module__.split(".")[0] == "quadrants":
                continue  # the compiler's own funcs: covered by the version in the key
            rec = func_record(fs.fn, kernel.fn)
            if rec is None:
                _logging.debug(f"fastcache: the source of func {fs.name!r} cannot be read", tag="fastcache")
                return False
            funcs.append(rec.to_json())
        abi, okey = art.abi, art.offline_key
        meta = {"artifact": okey, "kernel": kernel.fn.__qualname__, "symbol": abi.symbol, "abi": abi.to_dict(),
                "funcs": funcs, "captures": [r.to_json() for r in records]}  # fmt: skip
        text, signature = inputs
        parts = keys.fastcache_key(text, signature, self.config).parts
        described = {**meta, **describe(kernel, self.config), "parts": parts}
        ok = self.store.write("fast", fast_key, b"", described) is not None
        if ok:
            STATS.count("fastcache_stores")
            self._session_fast[fast_key] = described
        return ok

    # ---- the session bundle -----------------------------------------------------------------------------

    def finish_session(self) -> str | None:
        """Link the kernels this process compiled into one bundle and point their fastcache entries at it, so
        the next process opens one library instead of one per kernel. Runs at exit; returns the bundle path."""
        try:
            self._record_counters()
        except OSError as e:  # bookkeeping never stops the bundle
            _logging.debug(f"counters not recorded: {e}", tag="cache")
        objs = self._session_objects
        fast = {k: m for k, m in self._session_fast.items() if m["artifact"] in objs}
        if self.store is None or len(fast) < 2:
            return None
        linker = self.linker
        if linker is None:
            return None  # no session bundle: the kernels load one by one
        try:
            path = bundle.publish(self.store, self.config, fast, objs, linker)
        except bundle.BundleError as e:
            _logging.debug(f"no session bundle: {e}", tag="cache")
            return None
        self._session_objects.clear()
        self._session_fast.clear()
        return path

    def _record_counters(self) -> None:
        """Add this process's hits and misses to the cache's `stats.json` (for `qd cache stats`): once per
        process and cache, at exit, and never into a cache that refused writes."""
        store = self.store
        if store is None or store.root_refused or store.root in _RECORDED:
            return
        counts = {k: v for k, v in STATS.cache.items() if v}
        if not counts:
            return
        _RECORDED.add(store.root)
        totals = store.read_json("stats.json")
        for k, v in counts.items():
            totals[k] = int(totals.get(k, 0)) + v
        totals["processes"] = int(totals.get("processes", 0)) + 1
        totals["compiles"] = int(totals.get("compiles", 0)) + STATS.compiles
        store.write_json("stats.json", totals)

    def _apply_purity(self, kernel: Any, report: Any) -> None:
        """Purity findings as Quadrants reports them: warnings are Python `UserWarning`s tagged
        `[PURE.VIOLATION]` (programs and tests catch them with `pytest.warns`), errors stop the compile."""
        import warnings

        for message, loc in report.warnings:
            where = f"{loc.short()}: " if loc is not None else ""
            warnings.warn(f"[PURE.VIOLATION] {where}{message}", UserWarning, stacklevel=2)
        if report.errors:
            message, loc = report.errors[0]
            raise QuadrantsCompilationError(message, loc)

    @staticmethod
    def _unresolvable_owner(records: list[Any]) -> str | None:
        for r in records:
            if r.where != "class" and r.owner != "kernel" and resolve_name(r.owner) is None:
                return f"func {r.owner} (defined inside a function) reads {r.name!r}, which cannot be re-checked"
        return None

    # ---- artifacts (the offline cache) --------------------------------------------------------------

    def _artifact(self, okey: str, fe: Any, ir_text: str, kernel: Any) -> tuple[Artifact, bool]:
        art = self.memory.get(okey)
        if art is not None:
            STATS.count("memory_hits")
            return art, True
        if self.config.arch.name == "cuda":
            return self._cuda_artifact(okey, fe, ir_text, kernel)
        found = self._offline_lookup(okey, fe, ir_text)
        if found is not None:
            return found, True
        from quadrants import driver

        compiled = driver.generate(fe, ir_text, kernel.fn.__qualname__, self.config)
        if self.config.ptx_check:
            driver.check_ptx(fe, ir_text, kernel.fn.__qualname__, self.config)
        so = b""
        linker = self.linker
        if self.store is not None and linker is not None:
            from quadrants.cache.link import LinkError, link_shared

            t0 = time.perf_counter()
            try:
                so = link_shared(compiled.object_code, linker)
            except (LinkError, OSError) as e:
                _logging.warn(f"linking failed, using the in-process JIT: {e}", tag="cache")
            STATS.time("link", time.perf_counter() - t0)
        path = None
        if self.store is not None:
            meta = {"so": len(so), "obj": len(compiled.object_code), "abi": compiled.abi.to_json(),
                    **describe(kernel, self.config)}  # fmt: skip
            path = self.store.write("artifact", okey, so + compiled.object_code, meta)
        loaded = None
        if not self.load:
            self._ensure_runtime_so()  # built and cached for the target, not loaded
        elif so and path is not None and self._ensure_runtime_so():
            loaded = try_dlopen(path, compiled.abi.symbol)
        if loaded is None and self.load:
            loaded = OrcLoader.load(compiled.object_code, compiled.abi.symbol)
        art = Artifact(compiled.abi, loaded, okey)
        art.compiled = compiled  # type: ignore[attr-defined]
        self.memory[okey] = art
        if path is not None:
            self._session_objects[okey] = compiled.object_code
        return art, False

    def _offline_lookup(self, okey: str, fe: Any, ir_text: str) -> Artifact | None:
        """The offline cache: this key's entry, else (a portable CPU target's or an older GPU's) compatible one."""
        if self.store is None:
            return None
        entry = self.store.read("artifact", okey)
        if entry is not None:
            STATS.count("offline_hits")
            if not self.load:  # qd precompile: known to be there, nothing to load
                known = self.memory[okey] = Artifact(KernelABI.from_json(entry.meta["abi"]), None, okey)
                return known
            return self._load(okey, entry)
        if self._may_use_baselines():
            other = self._offline_baselines(fe, ir_text)
            if other is not None:
                self.memory[okey] = other
                STATS.count("offline_hits")
                return other
        STATS.count("offline_misses")
        return None

    def _cuda_artifact(self, okey: str, fe: Any, ir_text: str, kernel: Any) -> tuple[Artifact, bool]:
        """The offline cache for the CUDA backend: an entry holds the kernel's images (cubins, PTX; or host code
        for the emulator) and its launch plan."""
        found = self._offline_lookup(okey, fe, ir_text)
        if found is not None:
            return found, True
        from quadrants import driver

        arch = self.config.cuda_arch or "sm_80"
        compiled = driver.generate_cuda(fe, ir_text, kernel.fn.__qualname__, self.config, (arch,))
        STATS.add(compiled.timings)
        if self.store is not None:
            body, layout = bytearray(), {}
            for name, image in compiled.images.items():
                layout[name] = [len(body), len(image)]
                body += image
            meta = {"cuda": compiled.plan.to_json(), "images": layout, "abi": compiled.abi.to_json(),
                    **describe(kernel, self.config)}  # fmt: skip
            self.store.write("artifact", okey, bytes(body), meta)
        loaded = self.device.load(compiled.images, compiled.plan) if self.load and self.device is not None else None
        art = Artifact(compiled.abi, loaded, okey)
        art.compiled = compiled  # type: ignore[attr-defined]
        self.memory[okey] = art
        return art, False

    def _load(self, okey: str, entry: Entry) -> Artifact:
        t0 = time.perf_counter()
        meta = entry.meta
        if "cuda" in meta:
            from quadrants.codegen.cuda_plan import CudaPlan

            abi = KernelABI.from_json(meta["abi"])
            images = {k: entry.body[o : o + n] for k, (o, n) in meta["images"].items()}
            loaded_cuda = self.device.load(images, CudaPlan.from_json(meta["cuda"])) if self.device else None
            art = Artifact(abi, loaded_cuda, okey)
            self.memory[okey] = art
            STATS.time("load", time.perf_counter() - t0)
            return art
        abi = KernelABI.from_json(meta["abi"])
        loaded = None
        if meta["so"] and self._ensure_runtime_so():
            loaded = try_dlopen(entry.path, abi.symbol)
        if loaded is None:
            loaded = OrcLoader.load(object_code(entry), abi.symbol)
        art = Artifact(abi, loaded, okey)
        self.memory[okey] = art
        STATS.time("load", time.perf_counter() - t0)
        return art

    def _ensure_runtime_so(self) -> bool:
        """Load the native runtime as a shared library (global symbols) so cached kernels can be opened with
        ctypes. Built once per machine and version, and cached like a kernel."""
        if self.runtime_so is None:
            self.runtime_so = load_runtime_so(self.store, lambda: self.linker, self.config, self.load)
        return self.runtime_so


def object_code(entry: Entry) -> bytes:
    """The relocatable object stored after the shared object in a CPU artifact entry."""
    so_size, obj_size = entry.meta["so"], entry.meta["obj"]
    return entry.body[so_size : so_size + obj_size]


def _sm(arch: str) -> int:
    """`sm_86` -> 86 (0 when not a GPU architecture)."""
    digits = arch.removeprefix("sm_")
    return int(digits) if digits.isdigit() else 0


def describe(kernel: Any, config: Config) -> dict[str, str]:
    """What `qd cache ls` shows of an entry: the kernel as module:qualname and the CPU target."""
    target = f"cuda:{config.cuda_arch}" if config.arch.name == "cuda" else config.cpu_target
    return {"name": f"{kernel.fn.__module__}:{kernel.fn.__qualname__}", "target": target}


def _capture_unchanged(raw: dict[str, Any], kernel_fn: Any) -> bool:
    from quadrants.cache.fingerprint import CaptureRecord, current_value, fingerprint

    rec = CaptureRecord.from_json(raw)
    if rec.where == "class":
        fn = None
    else:
        fn = kernel_fn if rec.owner == "kernel" else resolve_name(rec.owner)
        if fn is None:
            return False
    try:
        value = current_value(rec, fn)
    except (KeyError, AttributeError, ValueError):
        return False
    return fingerprint(value) == rec.fingerprint


_RECORDED: set[str] = set()  # cache roots whose stats.json this process has updated
_CACHES: dict[int, KernelCache] = {}


def cache_for(program: Any) -> KernelCache:
    """The KernelCache of a program (made on first use)."""
    c = _CACHES.get(program.generation)
    if c is None:
        _CACHES.clear()
        c = _CACHES[program.generation] = KernelCache(program.config, device=program.device)
    return c
