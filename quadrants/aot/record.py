"""`qd record`: the signatures a program actually called, merged into the manifest.

While recording (`QD_RECORD=<file>`, set by `qd record`), the first call of each kernel specialization in a
process appends one JSON line: the kernel, and each parameter as the manifest writes it (`typespec` text, a
template value, an enum member name). Parameters whose annotation fixes their type are left out, as a manifest
would. Values a manifest cannot spell (dataclass and data_oriented instances, fields, arbitrary objects) are
marked; `merge` writes those kernels into a `[[warmup]]` of the recorded command (aot/warmup.py), or without a command
skips them and says which factory to add.

`merge` edits the manifest with tomlkit, so comments and layout survive. A manifest without `cache_dir` gets one,
so that `qd precompile` fills a cache that travels with the project (a Docker or CI step that copies the folder):
the folder the run used when it chose one (QD_CACHE_DIR, `offline_cache_file_path`), relative to the manifest
when it lies inside the project, else `DEFAULT_CACHE_DIR` (never the user's own cache, a path of this machine).
"""

from __future__ import annotations

import enum
import json
import numbers
import os
from dataclasses import dataclass, field
from typing import Any

from quadrants.aot import objects, typespec
from quadrants.cache.source import stable_module
from quadrants.cache.store import replacing
from quadrants.lang.args import ParamKind
from quadrants.types import annotations as ann
from quadrants.types.compound import MatrixType
from quadrants.types.dtypes import PrimitiveType

UNRECORDABLE = "__unrecordable__"
# A differentiated kernel is written under its primal's name and the attribute that reaches it: `k.grad` is the
# adjoint, `k.dual` the forward-mode kernel (quadrants/aot/opened.py finds them the same way).
MODE_SUFFIX = {"reverse": ".grad", "forward": ".dual"}
DEFAULT_CACHE_DIR = ".qd-cache"  # what a recorded manifest precompiles into when the run used the user cache


def record_call(path: str, kernel: Any, params: list[Any], values: list[Any], cache_dir: str | None) -> None:
    """Append this call's signature to `path` (one JSON line; appends of one line are atomic enough for a few
    processes writing at once). `cache_dir`: the cache folder the program chose, None for the user cache."""
    sig = {}
    for p, v in zip(params, values):
        described = describe(p, v)
        if described is not None:
            sig[p.name] = described
    module = stable_module(kernel.fn.__module__)  # a script: the manifest imports it by its file's module name
    name = f"{module}:{kernel.fn.__qualname__}" + MODE_SUFFIX.get(kernel.mode, "")
    line = {"kernel": name, "fastcache": kernel.fastcache, "params": sig,
            "cache_dir": os.path.abspath(cache_dir) if cache_dir else None}
    with open(path, "a") as f:
        f.write(json.dumps(line) + "\n")


def describe(p: Any, v: Any) -> Any:
    """A parameter's value as a manifest writes it; None when the annotation already fixes it. Arrays say whether
    they have a `.grad`: an adjoint's (`kernel.grad`) specialization depends on it, and a primal kernel may read
    `.grad` itself (Genesis' `kernel_get_state_grad`), which an example without one cannot compile."""
    kind, a = p.kind, p.annotation
    if kind in (ParamKind.SCALAR, ParamKind.MATRIX, ParamKind.STRUCT):
        return None
    if kind in (ParamKind.NDARRAY, ParamKind.TENSOR):
        t = typespec.of_value(v, with_grad=getattr(a, "needs_grad", None) is not False)
        if t is None:
            return {UNRECORDABLE: f"a {type(v).__name__}" + (" (a field)" if hasattr(v, "__qd_field__") else "")}
        if t.grad:
            return t.text()  # the annotation cannot say it has a .grad
        if isinstance(a, ann.NdarrayType) and a.dtype is not None and a.ndim is not None:
            return None  # fixed by the annotation: numpy, torch and qd.ndarray share one key
        return t.text()
    if kind == ParamKind.ENUM:
        return v.name if isinstance(v, enum.Enum) else {UNRECORDABLE: repr(v)}
    if kind in (ParamKind.DATACLASS, ParamKind.SELF) or (kind == ParamKind.TEMPLATE and objects.is_object(v)):
        if not objects.is_object(v):
            return {UNRECORDABLE: f"a {type(v).__name__} ({kind})"}
        return objects.describe(v, UNRECORDABLE, with_grad=True)
    if kind == ParamKind.TEMPLATE:
        return _template_value(v)
    return {UNRECORDABLE: f"a {type(v).__name__} ({kind})"}


def _template_value(v: Any) -> Any:
    if isinstance(v, PrimitiveType):
        return {"dtype": str(v)}
    if isinstance(v, bool) or isinstance(v, (numbers.Integral, numbers.Real)) and not isinstance(v, enum.Enum):
        return v.item() if hasattr(v, "item") else v
    if isinstance(v, str):
        return v
    if isinstance(v, (tuple, list)) and objects.plain_nested(v):
        return objects.as_lists(v)
    if isinstance(v, MatrixType):
        return {UNRECORDABLE: "a matrix type"}
    return {UNRECORDABLE: f"a {type(v).__name__}"}


# ---- merging into the manifest ----------------------------------------------------------------------------


@dataclass
class MergeSummary:
    kernels: list[str] = field(default_factory=list)  # kernels seen
    added_kernels: list[str] = field(default_factory=list)
    added_signatures: int = 0
    known_signatures: int = 0
    added_modules: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # why a signature was not written
    not_fastcache: list[str] = field(default_factory=list)
    cache_dir: str | None = None  # the cache_dir written into a manifest that had none
    warmups: dict[str, list[str]] = field(default_factory=dict)  # a [[warmup]]'s command -> the kernels added to it
    unspellable: dict[str, str] = field(default_factory=dict)  # kernel -> what of its arguments no manifest spells


def read_records(path: str) -> list[dict[str, Any]]:
    out = []
    try:
        with open(path) as f:
            for line in f:
                line = line.strip()
                if line:
                    out.append(json.loads(line))
    except FileNotFoundError:
        pass
    return out


class RecordError(Exception):
    """The manifest cannot be updated (it would not be valid); nothing was written."""


def merge(manifest_path: str, records: list[dict[str, Any]], command: list[str] | None = None,
          cwd: str | None = None, environ: dict[str, str] | None = None) -> MergeSummary:
    """Add the recorded kernels, signatures and modules to the manifest at `manifest_path` (created if missing and
    anything was recorded), keeping what is there. Kernels not marked fastcache=True are added too (precompiled
    into the offline cache, they still skip LLVM at start) and listed in the summary. A kernel whose arguments
    a manifest cannot spell, and that has no factory, goes into a [[warmup]] of `command` (the program recorded,
    run from `cwd`, with the compile-relevant QD_* variables of `environ`), when given: `qd precompile` runs
    the program for it (aot/warmup.py). The new text is checked
    (TOML, then the manifest's rules) before it replaces the file atomically: a failed check raises RecordError
    and the file is left as it was."""
    import tomlkit

    summary = MergeSummary()
    pyproject = os.path.basename(manifest_path) == "pyproject.toml"
    exists = os.path.exists(manifest_path)
    if not records and not exists:
        return summary  # nothing called: no manifest to write
    if exists:
        with open(manifest_path) as f:
            doc = tomlkit.parse(f.read())
    else:
        doc = tomlkit.document()
        doc.add(tomlkit.comment("Kernels to precompile: `qd precompile` (written by `qd record`, edit freely)"))
    root: Any = doc
    if pyproject:
        tool = doc.setdefault("tool", tomlkit.table(is_super_table=True))
        root = tool.setdefault("quadrants", tomlkit.table())
    warm: list[str] = []
    for rec in records:
        _merge_one(root, rec, summary, warm if command else None)
    if not records:
        return summary
    if warm:
        _add_warmup(root, manifest_path, list(command or ()), cwd or os.getcwd(),
                    os.environ if environ is None else environ, warm, summary)  # fmt: skip
    if "cache_dir" not in root:
        summary.cache_dir = root["cache_dir"] = _cache_dir_for(manifest_path, records)
    text = tomlkit.dumps(doc)
    _validate(text, manifest_path)
    with replacing(manifest_path) as tmp, open(tmp, "w") as f:
        f.write(text)
    return summary


def _cache_dir_for(manifest_path: str, records: list[dict[str, Any]]) -> str:
    """The manifest's cache_dir: the folder the run used (relative to the manifest inside its folder), else the
    project-relative default."""
    used = next((r["cache_dir"] for r in records if r.get("cache_dir")), None)
    if used is None:
        return DEFAULT_CACHE_DIR
    from quadrants.aot.manifest import relative_inside

    return relative_inside(used, os.path.dirname(os.path.abspath(manifest_path)))


def _add_warmup(root: Any, manifest_path: str, command: list[str], cwd: str, environ: Any, kernels: list[str],
                summary: MergeSummary) -> None:
    """The [[warmup]] of `command` (the one already there with the same `run`, else a new one) gains `kernels`."""
    import tomlkit

    from quadrants._config import FIELDS, env_name
    from quadrants.aot.warmup import as_written

    run = as_written(command, cwd, os.path.dirname(os.path.abspath(manifest_path)))
    # the variables that change the code it compiles; the arch and CPU are the manifest's targets
    env = {env_name(n): environ[env_name(n)] for n, f in FIELDS.items()
           if f.metadata["compile"] and n not in ("arch", "cpu_target") and environ.get(env_name(n))}  # fmt: skip
    warmups = root.get("warmup")
    if warmups is None:
        root["warmup"] = tomlkit.aot()
        warmups = root["warmup"]
    entry = next((w for w in warmups if [str(x) for x in w.get("run", [])] == run), None)
    if entry is None:
        entry = tomlkit.table()
        entry["run"] = run
        entry["kernels"] = tomlkit.array()
        entry["kernels"].multiline(True)
        if env:
            entry["env"] = tomlkit.inline_table()
            entry["env"].update(env)
        warmups.append(entry)
        entry = warmups[-1]
    listed = entry.setdefault("kernels", tomlkit.array())
    added = [k for k in dict.fromkeys(kernels) if k not in [str(x) for x in listed]]
    for k in added:
        listed.append(k)
    summary.warmups[" ".join(run)] = added


def _merge_one(root: Any, rec: dict[str, Any], summary: MergeSummary, warm: list[str] | None = None) -> None:
    """One record line into the manifest; a signature it cannot write goes to `warm` (the kernels of the
    program's warm-up) when given, else into the summary's skipped list."""
    import tomlkit

    name = rec["kernel"]
    if name not in summary.kernels:
        summary.kernels.append(name)
    if not rec.get("fastcache", True) and name not in summary.not_fastcache:
        summary.not_fastcache.append(name)
    modules = root.get("modules")
    if modules is None:
        root["modules"] = tomlkit.array()
        modules = root["modules"]
    module = name.split(":")[0]
    if module not in [str(m) for m in modules]:
        modules.append(module)
        summary.added_modules.append(module)
    kernels = root.get("kernel")
    if kernels is None or (isinstance(kernels, list) and not len(kernels) and not isinstance(kernels, tomlkit.items.AoT)):
        root["kernel"] = tomlkit.aot()  # also replaces an empty `kernel = []` an older qd record wrote
        kernels = root["kernel"]
    entry = next((k for k in kernels if str(k.get("name")) == name), None)
    bad = {k: v[UNRECORDABLE] for k, v in rec["params"].items() if isinstance(v, dict) and UNRECORDABLE in v}
    if bad:
        missing = {k: v for k, v in bad.items() if not _has_factory(entry, k)}
        why = ", ".join(f"{k} is {v}" for k, v in missing.items())
        if missing and warm is not None:
            warm.append(name)
            summary.unspellable.setdefault(name, why)
        elif missing:
            msg = f"{name}: {why}; give it a factory (factory = \"module:function\" or {{ factory = ... }})"
            if msg not in summary.skipped:
                summary.skipped.append(msg)
        return
    if entry is None:
        entry = tomlkit.table()
        entry["name"] = name
        kernels.append(entry)
        entry = kernels[-1]
        summary.added_kernels.append(name)
    sig = _object_refs(root, rec["params"])
    if not sig:
        if name not in summary.added_kernels:  # added now: new, not "already there"
            summary.known_signatures += 1  # all parameters fixed by annotations: the kernel entry is enough
        return
    existing = entry.get("signatures")
    if existing is None:
        entry["signatures"] = tomlkit.array()
        existing = entry["signatures"]
        existing.multiline(True)
    if any(_plain(s) == sig for s in existing):
        summary.known_signatures += 1
        return
    table = tomlkit.inline_table()
    for k, v in sig.items():
        table[k] = v
    existing.append(table)
    summary.added_signatures += 1


def _object_refs(root: Any, values: dict[str, Any]) -> dict[str, Any]:
    """`values` with each described object replaced by `{ object = "Name" }`, its [objects] entry."""
    return {k: {"object": _object_entry(root, v)} if isinstance(v, dict) and objects.OBJECT in v else v
            for k, v in values.items()}  # fmt: skip


def _object_entry(root: Any, desc: dict[str, Any]) -> str:
    """The name of the [objects] entry for a described object (nested objects first): an entry of the same class
    and members if there is one, else a new one named after the class (`Config`, `Config_2`, ...)."""
    import tomlkit

    members = _object_refs(root, desc["members"])
    cls = desc[objects.OBJECT]
    table = root.get("objects")
    if table is None:
        root["objects"] = tomlkit.table(is_super_table=True)
        table = root["objects"]
    for name, entry in table.items():
        if str(entry.get("class")) == cls and _plain(entry.get("members", {})) == members:
            return str(name)
    base = cls.rpartition(":")[2].rpartition(".")[2]
    name, n = base, 1
    while name in table:
        n += 1
        name = f"{base}_{n}"
    entry = tomlkit.table()
    entry["class"] = cls
    body = tomlkit.table()
    for k, m in members.items():
        if isinstance(m, dict):
            inline = tomlkit.inline_table()
            inline.update(m)
            body[k] = inline
        else:
            body[k] = m
    entry["members"] = body
    table[name] = entry
    return name


def _has_factory(entry: Any, param: str) -> bool:
    """Whether the manifest already gives `param` (or the whole kernel) a factory."""
    if entry is None:
        return False
    if "factory" in entry:
        return True
    return any(isinstance(s, dict) and isinstance(s.get(param), dict) and "factory" in s[param]
               for s in entry.get("signatures", []))  # fmt: skip


def _validate(text: str, manifest_path: str) -> None:
    import tempfile

    from quadrants.aot import manifest as manifest_mod

    folder = os.path.dirname(os.path.abspath(manifest_path))
    with tempfile.TemporaryDirectory(dir=folder if os.access(folder, os.W_OK) else None) as tmp:
        probe = os.path.join(tmp, os.path.basename(manifest_path))
        with open(probe, "w") as f:
            f.write(text)
        try:
            manifest_mod.load(probe)
        except manifest_mod.ManifestError as e:
            why = str(e).replace(probe, manifest_path).replace(os.path.relpath(probe), manifest_path)
            raise RecordError(f"the updated manifest would be invalid ({why}); {manifest_path} was not changed") from None


def _plain(item: Any) -> Any:
    """A tomlkit value as plain Python (for comparing signatures)."""
    unwrap = getattr(item, "unwrap", None)
    return unwrap() if unwrap is not None else item
