"""`qd precompile`: fill the cache from a manifest so that a program's kernels load by key at start.

    manifest ─► import the project (this process: lookups only, no LLVM) ─► every (kernel, signature, target)
       ├─ probe: already in the cache (the runtime's own lookup, checksums included) ─► "cached"
       └─ else a task for a worker process (spawned with the target's QD_* environment) ─► compile + store
    then per target: one bundle (a shared library of every kernel, with an index of their fastcache entries),
    so a process that starts opens one library and looks the rest up in memory.

`--check` stops after the probes: every signature must already hit (a CI gate). Results are data (`Report`);
the CLI only prints them.

With a remote cache (cache/remote.py), a probe that misses locally asks the remote (a hit is "pulled": written
into the local cache, nothing compiled), each worker pushes what it compiled as soon as it is stored, and the
bundles go out at the end. `--shard K/N` takes only the signatures whose stable hash falls in shard K of N
(every signature in exactly one shard) and links no bundle: N CI jobs compile in parallel and push to the
remote, then one `qd precompile` without `--shard` pulls everything and links the bundles without compiling.
"""

from __future__ import annotations

import dataclasses
import os
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from typing import Any

from quadrants._config import with_target
from quadrants.aot import project
from quadrants.aot.manifest import Manifest, ManifestError
from quadrants.aot.opened import OpenedProject, environment, import_kernels, open_project, running
from quadrants.aot.warmup import WarmupResult
from quadrants.targets import KINDS, Target

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


class BuildRefused(Exception):
    """`qd precompile` cannot make a cache that a start can use, found before compiling anything (exit 1)."""


class CacheNotWritable(BuildRefused):
    """The cache folder `qd precompile` was given refuses writes (nothing is redirected elsewhere)."""


class NoLinker(BuildRefused):
    """A CPU target needs a linker (a precompiled start opens shared objects, without llvmlite) and none exists."""


@dataclass
class Item:
    """One (kernel, signature, target) and what became of it."""

    kernel: str
    index: int  # the call's position among the kernel's signatures (then factory calls)
    target: str
    where: str  # manifest file:line
    status: str = "pending"  # cached | compiled | failed | missing (--check)
    detail: str = ""  # the error, or why a --check misses
    seconds: float = 0.0
    fastcache: bool = True
    fast_key: str | None = None
    pulled: bool = False  # found on the remote cache, not locally
    damaged: bool = False  # the probe found (and removed) a damaged entry of it: rebuilt, never "already cached"
    pushed: int = 0  # entries a worker pushed to the remote cache after compiling this one


@dataclass
class Report:
    manifest: str
    cache_dir: str
    targets: list[str]
    kernels: list[str] = field(default_factory=list)  # manifest kernels
    items: list[Item] = field(default_factory=list)
    warmups: list[WarmupResult] = field(default_factory=list)  # the [[warmup]] runs, per target they ran for
    not_in_manifest: list[str] = field(default_factory=list)  # fastcache kernels found, not listed
    not_fastcache: list[str] = field(default_factory=list)  # listed, not fastcache=True
    bundles: dict[str, str] = field(default_factory=dict)  # target -> bundle path
    notes: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)  # what makes the cache incomplete beyond single signatures
    seconds: float = 0.0
    check: bool = False
    shard: tuple[int, int] | None = None  # (K, N) of --shard K/N
    other_shards: int = 0  # signatures left to the other shards
    pushed: int = 0  # entries pushed to the remote cache: by the workers, then the bundles and their entries

    def count(self, status: str) -> int:
        return sum(1 for i in self.items if i.status == status)

    @property
    def exit_code(self) -> int:
        statuses = [i.status for i in self.items] + [w.status for w in self.warmups]
        failed = self.errors or any(s in ("failed", "missing") for s in statuses)
        return EXIT_FAILED if failed else EXIT_OK

    def to_json(self) -> dict[str, Any]:
        return {
            "manifest": self.manifest,
            "cache_dir": self.cache_dir,
            "targets": self.targets,
            "kernels": len(self.kernels),
            "signatures": len(self.items),
            "compiled": self.count("compiled"),
            "cached": self.count("cached"),
            "failed": self.count("failed"),
            "missing": self.count("missing"),
            "pulled": sum(1 for i in self.items if i.pulled),
            "rebuilt_damaged": sum(1 for i in self.items if i.damaged),
            "pushed": self.pushed,
            "shard": f"{self.shard[0]}/{self.shard[1]}" if self.shard else None,
            "other_shards": self.other_shards,
            "seconds": round(self.seconds, 3),
            "not_in_manifest": self.not_in_manifest,
            "not_fastcache": self.not_fastcache,
            "bundles": self.bundles,
            "notes": self.notes,
            "errors": self.errors,
            "items": [dataclasses.asdict(i) for i in self.items],
            "warmups": [dataclasses.asdict(w) for w in self.warmups],
            "exit_code": self.exit_code,
        }


def precompile(
    opened: OpenedProject,
    jobs: int | None = None,
    check: bool = False,
    progress: Callable[[Item], None] | None = None,
    planned: Callable[[int], None] | None = None,
    shard: tuple[int, int] | None = None,
    warmed: Callable[[WarmupResult], None] | None = None,
) -> Report:
    """Precompile (or with `check`, only probe) every signature of the project's manifest, or with `shard`
    (K, N) those of shard K (1-based) of N; then run the manifest's warm-ups (aot/warmup.py), reporting each to
    `warmed`. Raises ManifestError or project.ProjectError for problems that stop
    everything (exit code 2)."""
    t0 = time.perf_counter()
    m = opened.require_manifest()
    with running(opened.environment):
        from quadrants._config import cache_root
        from quadrants._stats import STATS
        from quadrants.cache.fastcache import CODE_DAMAGED
        from quadrants.driver import Driver
        from quadrants.errors import QuadrantsError, QuadrantsRuntimeTypeError
        from quadrants.lang import program

        check_cpu_targets(m)
        found = import_kernels(opened)
        base = program.get().config
        report = Report(m.file, cache_root(base), list(m.targets), [k.name for k in m.kernels], check=check,
                        shard=shard)  # fmt: skip
        _reconcile(m, found, report)
        if not check:
            store = Driver(base, load=False).store
            why = store.check_writable() if store is not None else "the offline cache is off (offline_cache=false)"
            if why is not None:
                raise CacheNotWritable(f"cannot write the cache folder: {why}")
            _require_linker(base, m.targets)
        tasks: list[Item] = []
        for target in m.targets:
            cache = Driver(with_target(base, target), load=False)
            # the native runtime every cached shared object needs (without a linker kernels load in-process)
            if cache.backend.linker is not None and not _runtime_cached(cache):
                if check:
                    report.errors.append(f"target {target}: the native runtime library is not cached")
                elif not cache.prepare():  # gone (deleted by hand): built again
                    why = cache.store.write_error if cache.store is not None else None
                    report.errors.append(f"target {target}: the native runtime library could not be built ({why})")
            for entry in m.kernels:
                kernel = found[entry.name].kernel
                for index, (path, args) in enumerate(project.calls(m, entry, kernel)):
                    if shard is not None and shard_of(entry.name, index, target, shard[1]) != shard[0]:
                        report.other_shards += 1
                        continue
                    item = Item(entry.name, index, target, m.where(path), fastcache=kernel.fastcache)
                    report.items.append(item)
                    pulled_before = STATS.cache.get("remote_hits", 0)
                    corrupt_before = STATS.cache.get("corrupt_entries", 0)
                    try:
                        item.fast_key, reason = kernel.probe(tuple(args), {}, cache)
                    except (QuadrantsRuntimeTypeError, ValueError, TypeError) as e:  # the example does not fit
                        raise m.error(f"{entry.name}: these arguments do not fit the kernel: {e}", path) from None
                    except QuadrantsError as e:  # the frontend of a kernel without fastcache
                        item.status, item.detail = "failed", str(e).strip()
                        reason = None
                    item.pulled = STATS.cache.get("remote_hits", 0) > pulled_before
                    item.damaged = STATS.cache.get("corrupt_entries", 0) > corrupt_before
                    if item.status == "failed":
                        pass
                    elif reason is None:
                        item.status = "cached"
                    elif check:
                        item.status, item.detail = "missing", reason
                    else:
                        if reason == CODE_DAMAGED and cache.store is not None and item.fast_key:  # rebuilt whole
                            cache.store.drop("fast", item.fast_key)
                        tasks.append(item)
                    if item.status != "pending" and progress:
                        progress(item)
        if planned:
            planned(len(tasks))
        if tasks:
            _run_tasks(m, tasks, jobs, progress)
        for item in tasks:  # a damaged entry written again counts as compiled, even when its code was intact
            if item.damaged and item.status == "cached":
                item.status = "compiled"
        _run_warmups(m, report, check, shard, warmed)
        report.pushed = sum(i.pushed for i in report.items)
        if not check and shard is None:  # a shard links nothing: the run without --shard links everything
            for target in m.targets:
                cache = Driver(with_target(base, target), load=False)
                if not cache.backend.bundles:
                    continue  # GPU code loads per kernel (a module each): nothing to link
                bundle = _bundle(cache, [i for i in report.items if i.target == target], report)
                if bundle:
                    report.bundles[target] = bundle
                elif cache.store is not None and cache.store.write_error:
                    report.errors.append(f"target {target}: the bundle could not be written "
                                         f"({cache.store.write_error})")  # fmt: skip
        if not check:
            _record_targets(Driver(base, load=False), [t for t in m.targets if not Target.parse(t).is_host], report)
            report.pushed += _push()
    report.seconds = time.perf_counter() - t0
    return report


def _run_warmups(m: Manifest, report: Report, check: bool, shard: tuple[int, int] | None,
                 warmed: Callable[[WarmupResult], None] | None) -> None:
    """Each [[warmup]] for the host target, after the signatures (so it finds them cached). They execute the
    program: other targets' code cannot run here (a note says so). With --shard, each runs in one shard."""
    from quadrants.aot import warmup

    if not m.warmups:
        return
    hosts = [t for t in m.targets if Target.parse(t).is_host]
    if len(hosts) < len(m.targets):
        others = ", ".join(t for t in m.targets if t not in hosts)
        report.notes.append(f"the {len(m.warmups)} warm-up run(s) execute the program, so they ran for the host "
                            f"target only, not for {others}: those targets lack the kernels they cover")  # fmt: skip
    for target in hosts:
        for index, entry in enumerate(m.warmups):
            if shard is not None and shard_of(f"warmup:{' '.join(entry.run)}", index, target, shard[1]) != shard[0]:
                continue
            result = warmup.run(m, entry, target, environment(m, target), check)
            report.warmups.append(result)
            if warmed:
                warmed(result)


def parse_shard(text: str) -> tuple[int, int]:
    """`K/N` (1 <= K <= N) as (K, N); ValueError otherwise."""
    k, sep, n = text.partition("/")
    if not sep or not k.strip().isdigit() or not n.strip().isdigit() or not 1 <= int(k) <= int(n):
        raise ValueError(f"--shard {text!r}: expected K/N with 1 <= K <= N, e.g. 2/4")
    return int(k), int(n)


def shard_of(kernel: str, index: int, target: str, n: int) -> int:
    """The shard (1..n) of one signature: a stable hash of the kernel's name, the signature's position and the
    target, so every process agrees and every signature is in exactly one shard."""
    from quadrants.cache.keys import sha256

    return int.from_bytes(sha256(f"{kernel}\0{index}\0{target}".encode()).digest()[:8], "big") % n + 1


def _push() -> int:
    """Send what this process queued for the remote cache (kernels, bundles and their entries, the runtime
    library): the number of entries sent."""
    import sys

    from quadrants._stats import STATS

    if "quadrants.cache.remote" not in sys.modules:
        return 0  # no remote, or nothing written for it
    from quadrants.cache.remote import flush_all

    before = STATS.cache.get("remote_pushes", 0)
    flush_all()
    return STATS.cache.get("remote_pushes", 0) - before


def check_cpu_targets(m: Manifest) -> None:
    """Every target can be compiled for here (a named CPU must be one LLVM knows: `Backend.check_target`)."""
    from quadrants._config import load_config
    from quadrants.backends import backend_for

    config = load_config({})[0]
    for target in m.targets:
        message = backend_for(with_target(config, target), None).check_target()
        if message is not None:
            raise ManifestError(message, "--target") if m.targets_overridden else m.error(message, ("targets",))


def _reconcile(m: Manifest, found: dict[str, project.Found], report: Report) -> None:
    for entry in m.kernels:
        if entry.name not in found:
            near = [n for n in found if n.split(":")[-1] == entry.qualname or n.startswith(entry.module + ":")]
            hint = f"; kernels in {entry.module}: {', '.join(near)}" if near else ""
            raise m.error(f"kernel {entry.name!r} not found in the imported modules{hint}", entry.path + ("name",))
        if not found[entry.name].kernel.fastcache:
            report.not_fastcache.append(entry.name)
    for w in m.warmups:
        for i, name in enumerate(w.kernels):
            if name not in found:
                raise m.error(f"warm-up kernel {name!r} not found in the imported modules", w.path + ("kernels", i))
    listed = set(m.kernel_names)
    report.not_in_manifest = [n for n, f in found.items() if f.kernel.fastcache and n not in listed]


def _record_targets(cache: Any, targets: list[str], report: Report) -> None:
    """List the portable CPU targets and the GPU architectures this cache holds, so a process on another
    machine tries them when its own key misses."""
    if cache.store is None or not targets:
        return
    from quadrants.backends import backend_for

    listed = cache.store.read_json("targets.json")
    sections: dict[str, set[str]] = {k: set(listed.get(k, [])) for k in KINDS}
    for t in targets:
        section, name = backend_for(with_target(cache.config, t), None).recorded_as()
        sections[section].add(name)
    new = {k: sorted(v) for k, v in sections.items()}
    if new != {k: sorted(listed.get(k, [])) for k in KINDS} and not cache.store.write_json("targets.json", new):
        report.errors.append(f"the list of precompiled targets could not be written ({cache.store.write_error})")


def _runtime_cached(cache: Any) -> bool:
    from quadrants.backends.cpu import runtime_key

    return cache.store is not None and cache.store.read("runtime", runtime_key(cache.config, cache.device_key)) is not None


# ---- workers --------------------------------------------------------------------------------------------


def _run_tasks(m: Manifest, tasks: list[Item], jobs: int | None, progress: Callable[[Item], None] | None) -> None:
    import multiprocessing

    jobs = max(1, min(jobs or os.cpu_count() or 1, len(tasks)))
    by_target: dict[str, list[Item]] = {}
    for t in tasks:
        by_target.setdefault(t.target, []).append(t)
    ctx = multiprocessing.get_context("spawn")  # a clean interpreter: no inherited JIT, threads or locks
    for target, items in by_target.items():
        env = environment(m, target)
        with ProcessPoolExecutor(min(jobs, len(items)), mp_context=ctx, initializer=_worker_init,
                                 initargs=(m.file, env, target, os.getpid())) as pool:  # fmt: skip
            futures = {pool.submit(_worker_compile, t.kernel, t.index): t for t in items}
            for fut in as_completed(futures):
                item = futures[fut]
                try:
                    item.status, item.detail, item.seconds, item.pushed = fut.result()
                except Exception as e:  # noqa: BLE001 - a worker that died
                    item.status, item.detail = "failed", f"worker error: {type(e).__name__}: {e}"
                if progress:
                    progress(item)


_WORKER: dict[str, Any] = {}


def _die_with_parent(parent: int) -> None:
    """A worker must not outlive `qd precompile` (killed, even with -9): the kernel signals it when the parent
    dies (Linux), and a watchdog thread checks the parent everywhere else and for the moment before that."""
    import signal
    import threading

    try:
        import ctypes

        PR_SET_PDEATHSIG = 1
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):
        pass
    if os.getppid() != parent:
        os._exit(1)

    def watch() -> None:
        while True:
            time.sleep(0.5)
            if os.getppid() != parent:
                os._exit(1)

    threading.Thread(target=watch, name="qd-parent-watch", daemon=True).start()


def _worker_init(manifest_path: str, env: dict[str, str], target: str, parent: int) -> None:
    _die_with_parent(parent)
    os.environ.update(env)  # for good: this process compiles for `target` only
    from quadrants.driver import Driver
    from quadrants.lang import program

    opened = open_project(manifest_path, target)
    _WORKER["found"] = import_kernels(opened)
    _WORKER["manifest"] = opened.require_manifest()
    _WORKER["cache"] = Driver(with_target(program.get().config, target), load=False)
    _WORKER["calls"] = {}


def _worker_compile(kernel_name: str, index: int) -> tuple[str, str, float, int]:
    from quadrants.errors import QuadrantsError

    m: Manifest = _WORKER["manifest"]
    kernel = _WORKER["found"][kernel_name].kernel
    entry = m.kernel(kernel_name)
    assert entry is not None
    t0 = time.perf_counter()
    store = _WORKER["cache"].store
    if store is not None:
        store.write_error = None
    try:
        calls = _WORKER["calls"].get(kernel_name)
        if calls is None:
            calls = _WORKER["calls"][kernel_name] = project.calls(m, entry, kernel)
        _, args = calls[index]
        outcome = kernel.precompile(tuple(args), {}, _WORKER["cache"])
    except QuadrantsError as e:
        return "failed", str(e).strip(), time.perf_counter() - t0, 0
    except Exception as e:  # noqa: BLE001 - the project's code (a factory) or a compiler bug: named, not fatal
        return "failed", f"{type(e).__name__}: {e}", time.perf_counter() - t0, 0
    if store is not None and store.write_error:
        return "failed", f"compiled, but the cache refused the write: {store.write_error}", time.perf_counter() - t0, 0
    if kernel.fastcache and not outcome.stored and not (outcome.loaded and outcome.validated):
        return ("failed", "compiled, but fastcache could not store it (see the warnings above)",
                time.perf_counter() - t0, 0)  # fmt: skip
    status = "cached" if outcome.loaded else "compiled"
    pushed = _push()  # now: the parent's bundle step (or another shard's job) may pull it next
    return status, "", time.perf_counter() - t0, pushed


# ---- bundles ----------------------------------------------------------------------------------------------


def _require_linker(base: Any, targets: list[str]) -> None:
    """Without a linker, the CPU's kernels could only be an object pack that the start links with llvmlite: a
    precompiled start that needs the compiler. Refused before compiling, with what to install."""
    from quadrants.cache.link import INSTALL_HINT
    from quadrants.driver import Driver

    for target in targets:
        backend = Driver(with_target(base, target), load=False).backend
        if backend.bundles and backend.linker is None:
            raise NoLinker(f"target {target}: no linker found (the `linker` setting is {base.linker!r}), so a "
                           f"precompiled start would have to link the kernels with llvmlite; {INSTALL_HINT}")  # fmt: skip


def _bundle(cache: Any, items: list[Item], report: Report) -> str | None:
    """Link every fastcache kernel of one target into one library and point their entries at it."""
    from quadrants.cache import bundle

    store = cache.store
    entries: dict[str, dict[str, Any]] = {}
    for item in items:
        fe = store.read("fast", item.fast_key) if item.fast_key and item.status in ("cached", "compiled") else None
        if fe is not None:
            entries[item.fast_key] = {k: v for k, v in fe.meta.items() if k != "bundle"}  # type: ignore[index]
    if not entries:
        return None
    okeys = sorted({meta["artifact"] for meta in entries.values()})
    linker = cache.backend.linker
    bkey = bundle.bundle_key(cache.config, cache.device_key, okeys, pack=linker is None)
    existing = store.read("bundle", bkey)
    if existing is not None and all(store.read("fast", k).meta.get("bundle") == bkey for k in entries):
        return existing.path  # nothing changed since the last run
    objects = {}
    for okey in okeys:
        art = store.read("artifact", okey)
        if art is None:
            report.notes.append(f"artifact {okey[:12]} vanished before bundling")
            return None
        obj = cache.backend.entry_object(art)
        if obj is None:
            return None
        objects[okey] = obj
    try:
        return bundle.publish(store, cache.config, cache.device_key, entries, objects, linker)
    except bundle.BundleError as e:
        report.notes.append(f"target {cache.config.cpu_target}: no bundle ({e}); kernels load one by one")
        return None
