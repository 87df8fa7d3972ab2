"""`qd cache explain MODULE:KERNEL`: a kernel's fastcache key part by part and, for a miss, what differs from the
closest entry stored for it.

Consumes a `module:qualname`, the manifest (or a `--signature` table, or the kernel's annotations) and a target;
produces one `Explanation` per signature. `explain_kernel` opens and imports the project as the program would
run it (`open_project`), so the keys it shows are the keys the program computes. Nothing here prints.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from typing import Any

from quadrants._config import with_target
from quadrants.aot import project
from quadrants.aot.inventory import EntryInfo, scan
from quadrants.aot.manifest import Manifest, ManifestError, Signature, _param_value
from quadrants.aot.opened import current_folder_on_path, import_kernels, open_project, running
from quadrants.targets import HOST


def explain_kernel(
    kernel_name: str,
    manifest: str | None,
    signature: str | None,
    target: str | None,
    cache_dir: str | None,
) -> list[Explanation]:
    """Explain `kernel_name` (module:qualname) for each of its signatures: `signature` (a TOML inline table),
    else the manifest's, else the one its annotations give. Raises project.ProjectError (a name that is not a
    kernel) or ManifestError."""
    if ":" not in kernel_name:
        raise project.ProjectError(f"{kernel_name!r}: expected module:kernel (or module:Class.method)")
    opened = open_project(manifest, target, cache_dir=cache_dir)
    m = opened.manifest
    with running(opened.environment):
        from quadrants.driver import Driver
        from quadrants.lang import program

        import_kernels(opened)
        current_folder_on_path()
        module = kernel_name.split(":")[0]
        found = project.discover(project.import_paths_or_modules([module]))
        if kernel_name not in found:
            raise project.ProjectError(f"no kernel {kernel_name!r}; kernels in {module}: {', '.join(found) or 'none'}")
        kernel = found[kernel_name].kernel
        entry = m.kernel(kernel_name) if m is not None else None
        calls: list[list[Any]]
        if signature is not None:
            pseudo = Manifest("--signature", [], [], None, [str(HOST)], {}, [])
            calls = [project.example_args(pseudo, kernel, kernel.params, Signature(parse_inline(signature), ()))]
        elif m is not None and entry is not None:
            calls = [a for _, a in project.calls(m, entry, kernel)]
        else:
            pseudo = Manifest("(annotations)", [], [], None, [str(HOST)], {}, [])
            calls = [project.example_args(pseudo, kernel, kernel.params, Signature({}, ()))]
        cache = Driver(with_target(program.get().config, opened.target), load=False)
        return [explain(kernel, args, cache) for args in calls]


def parse_inline(text: str) -> dict[str, Any]:
    """`--signature '{ x = "ndarray[f32, 1]" }'` -> the parameter values, as a manifest signature has them."""
    try:
        import tomllib
    except ImportError:  # Python 3.10
        import tomli as tomllib  # type: ignore[no-redef]
    try:
        table = tomllib.loads(f"s = {text}")["s"]
    except tomllib.TOMLDecodeError as e:
        raise ManifestError(f"--signature is not a TOML inline table ({e})", "--signature") from None
    if not isinstance(table, dict):
        raise ManifestError('--signature must be an inline table like { x = "ndarray[f32, 1]" }', "--signature")
    pseudo = Manifest("--signature", [], [], None, [str(HOST)], {}, [])
    return {k: _param_value(pseudo, v, (k,)) for k, v in table.items()}


@dataclass
class Explanation:
    kernel: str
    key: str | None
    parts: dict[str, str]
    found: bool
    reason: str | None  # why not found
    remote: bool | None = None  # whether the remote cache has the fastcache entry (None: no remote, no answer)
    nearest: str | None = None  # the stored entry of this kernel with the fewest differing parts
    differences: list[tuple[str, str, str]] = field(default_factory=list)  # (part, stored, now)


def explain(kernel: Any, args: list[Any], cache: Any) -> Explanation:
    """The fastcache key of `kernel` called with `args` under `cache`'s config, part by part; on a miss, which
    parts differ from the closest entry stored for the same kernel."""
    from quadrants.cache import keys

    name = f"{kernel.fn.__module__}:{kernel.fn.__qualname__}"
    req = kernel.request(kernel.specialize(tuple(args), {}, cache.config), cache.config)
    inputs = cache.fast_inputs(req)
    if inputs is None:
        return Explanation(name, None, {}, False, "fastcache does not apply (see the warning above)")
    text, signature = inputs
    parts = keys.fastcache_key(text, signature, cache.config, cache.device_key).parts
    if cache.store is not None:
        cache.store.remote_reads = False  # explain the local cache; ask the remote only whether it has the entry
    key, reason = cache.probe(req)
    ex = Explanation(name, key, parts, reason is None, reason)
    if key is not None and cache.store is not None:
        ex.remote = cache.store.remote_has("fast", key)
    if reason is None:
        return ex
    best: tuple[int, EntryInfo] | None = None
    for e in scan(cache.store, ("fast",)):
        stored = e.meta.get("parts")
        if e.problem or e.name != name or not isinstance(stored, dict):
            continue
        n = sum(1 for k in set(stored) | set(parts) if stored.get(k) != parts.get(k))
        if best is None or n < best[0]:
            best = (n, e)
    if best is not None:
        stored = best[1].meta["parts"]
        ex.nearest = best[1].key
        for k in sorted(set(stored) | set(parts)):
            if stored.get(k) != parts.get(k):
                ex.differences.append((k, str(stored.get(k, "")), str(parts.get(k, ""))))
    return ex


def diff_text(old: str, new: str) -> list[str]:
    """A short unified diff of two texts (kernel sources), without headers."""
    lines = difflib.unified_diff(old.splitlines(), new.splitlines(), lineterm="", n=1)
    return [ln for ln in lines if not ln.startswith(("---", "+++"))]
