"""`qd audit`: the print_non_pure audit without running the program.

For every kernel in the given modules:
- not marked `fastcache=True`                                  -> "not_fastcache" (what print_non_pure prints)
- a fastcache kernel (or a func it calls) reading a global      -> "violation" (a compile error at first call),
  or "warning" for UPPERCASE constants and `qd.static(global)`   (allowed, re-checked at every lookup)
- a fastcache kernel that would step aside                      -> "fallback": a Python function called at
  compile time, a field parameter (`qd.Tensor`), unreadable source
- any kernel (or a func a fastcache kernel calls) written with    -> "violation" at `file:line:col`, with the
  Python the frontend has no translation for (try, import,          compiler's own message: the constructs are
  lambda, dict, ...)                                                the frontend's dispatch tables' complement

A violation is certain to fail at the kernel's first call, so it makes the exit status 1 even without
`--strict` (which makes every finding count).

The reads are found statically, from each kernel's and func's syntax tree and the values its names have after
importing the modules, and judged by the same rules as the compiler (`driver/purity.py`). When the manifest
gives signatures for a kernel, they are also specialized, which finds field parameters.
"""

from __future__ import annotations

import ast
import builtins
import dataclasses
import os
import re
from dataclasses import dataclass, field
from typing import Any

from quadrants.aot import project
from quadrants.aot.opened import current_folder_on_path, import_kernels, open_project
from quadrants.driver.purity import PurityReport, judge, pure_callee
from quadrants.errors import QuadrantsCompilationError, SourceLoc
from quadrants.frontend.builder import unsupported_node
from quadrants.frontend.dispatch import EXPRESSIONS, STATEMENTS
from quadrants.frontend.records import Capture
from quadrants.frontend.source import FunctionSource, read_function
from quadrants.types.compound import MatrixType
from quadrants.types.dtypes import PrimitiveType

KINDS = ("violation", "fallback", "not_fastcache", "warning")


@dataclass
class Finding:
    kernel: str  # module:qualname
    kind: str  # one of KINDS
    where: str  # file:line (file relative to the current folder when inside it)
    message: str


@dataclass
class AuditReport:
    modules: list[str]
    kernels: list[str] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)

    def count(self, kind: str) -> int:
        return sum(1 for f in self.findings if f.kind == kind)

    def exit_code(self, strict: bool) -> int:
        """1 for a violation (the kernel cannot run), or under `strict` for any finding."""
        return 1 if self.count("violation") or (strict and self.findings) else 0

    def to_json(self, strict: bool = False) -> dict[str, Any]:
        return {
            "modules": self.modules,
            "kernels": len(self.kernels),
            "counts": {k: self.count(k) for k in KINDS},
            "findings": [dataclasses.asdict(f) for f in self.findings],
            "exit_code": self.exit_code(strict),
        }


class NothingToAudit(project.ProjectError):
    """No modules or paths were given and no manifest was found."""


def audit_project(targets: list[str], manifest: str | None) -> AuditReport:
    """Audit `targets` (module names, .py files or folders), else the modules of the manifest (given, or found
    from the current folder), whose signatures add the checks that need argument values. Raises
    NothingToAudit, ManifestError or project.ProjectError."""
    current_folder_on_path()
    if targets:
        return audit(project.import_paths_or_modules(targets), {})
    opened = open_project(manifest)
    if opened.manifest is None:
        raise NothingToAudit("give modules or paths to audit, or run where a qd.toml (or pyproject.toml) is")
    m = opened.manifest
    found = import_kernels(opened)
    signatures = {e.name: [a for _, a in project.calls(m, e, found[e.name].kernel)] for e in m.kernels if e.name in found}
    return audit(opened.modules, signatures)


def audit(modules: list[Any], signatures: dict[str, list[list[Any]]] | None = None) -> AuditReport:
    """Audit every kernel defined in `modules`; `signatures` (kernel name -> example argument lists, from a
    manifest) adds the checks that need argument values."""
    found = project.discover(modules)
    report = AuditReport([m.__name__ for m in modules], list(found))
    for name, f in found.items():
        k = f.kernel
        if not k.fastcache:
            _audit_constructs(name, k, report)
            report.findings.append(Finding(name, "not_fastcache", f.where, "not marked fastcache=True: it is "
                                           "parsed and compiled (or looked up by its IR) at every process start"))  # fmt: skip
            continue
        _audit_kernel(name, k, report)
        for args in (signatures or {}).get(name, []):
            _audit_signature(name, f, args, report)
    report.findings.sort(key=lambda x: (_file(x.where), _line(x.where), KINDS.index(x.kind)))
    return report


def _file(where: str) -> str:
    """The file of `file:line` or `file:line:col`."""
    return re.sub(r"(:\d+){1,2}$", "", where)


def _line(where: str) -> int:
    """The line of `file:line` or `file:line:col`."""
    parts = where.split(":")
    numbers = [int(p) for p in parts[-2:] if p.isdigit()]
    return numbers[0] if numbers else 0


def _where(loc: SourceLoc | None, fallback: str, column: bool = False) -> str:
    """`file:line` (`file:line:col` as the compiler's errors, for `column`)."""
    if loc is None:
        return fallback
    return f"{_display(loc.filename)}:{loc.lineno}" + (f":{loc.col + 1}" if column else "")


def _display(path: str) -> str:
    rel = os.path.relpath(path)
    return path if rel.startswith("..") else rel


def _audit_kernel(name: str, kernel: Any, report: AuditReport) -> None:
    here = f"{_display(kernel.fn.__code__.co_filename)}:{kernel.fn.__code__.co_firstlineno}"
    purity = _Scan()
    seen_funcs: set[Any] = set()
    try:
        _scan(read_function(kernel.fn, "kernel"), kernel.fn, "kernel", purity, seen_funcs)
    except QuadrantsCompilationError as e:
        report.findings.append(Finding(name, "fallback", here, f"{e.message}: fastcache steps aside"))
        return
    seen = set()
    for message, loc in purity.errors:
        key = (message, _where(loc, here, column=message in purity.syntax))
        if key not in seen:
            seen.add(key)
            report.findings.append(Finding(name, "violation", key[1], message))
    for message, loc in purity.warnings:
        key = (message, _where(loc, here))
        if key not in seen:
            seen.add(key)
            kind = "fallback" if message.startswith("fastcache is off") else "warning"
            report.findings.append(Finding(name, kind, key[1], message))


def _audit_signature(name: str, f: project.Found, args: list[Any], report: AuditReport) -> None:
    from quadrants.lang import program
    from quadrants.lang.args import signature_text

    spec = f.kernel.specialize(tuple(args), {}, program.get().config)
    text, reason, silent = signature_text(spec)
    if text is None:
        how = "silently (a qd.Tensor parameter)" if silent else "with a warning"
        report.findings.append(Finding(name, "fallback", f.where, f"fastcache steps aside {how}: {reason}"))


# ---- the static scan --------------------------------------------------------------------------------------


@dataclass
class _Scan(PurityReport):
    syntax: set[str] = field(default_factory=set)  # errors that are unsupported constructs: located to the column


def _scan(src: FunctionSource, fn: Any, owner: str, purity: _Scan, seen_funcs: set[Any]) -> None:
    """Judge every outside value `fn`'s body reads, and every Python function it calls at compile time; then
    the same for the qd.funcs it calls. Constructs the frontend cannot translate are purity errors too."""
    tree = src.tree
    for message, loc in unsupported_constructs(src):
        purity.errors.append((message, loc))
        purity.syntax.add(message)
    local = _local_names(tree)
    closure = dict(zip(fn.__code__.co_freevars, (c.cell_contents for c in fn.__closure__ or ())))
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    body = [n for stmt in tree.body for n in ast.walk(stmt)]  # not the decorators or annotations: no reads
    for node in body:
        if not (isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)) or node.id in local:
            continue
        if node.id in closure:
            where, value = "closure", closure[node.id]
        elif node.id in fn.__globals__:
            where, value = "global", fn.__globals__[node.id]
        else:
            continue  # a builtin, or an undefined name (the compiler reports it)
        chain, top = _attribute_chain(node, parents)
        try:
            for attr in chain:
                value = getattr(value, attr)
        except AttributeError:
            continue
        if _is_func(value):
            inner: Any = getattr(value, "fn", value)
            if inner not in seen_funcs:
                seen_funcs.add(inner)
                try:
                    _scan(read_function(inner, "func"), inner, f"{inner.__module__}:{inner.__qualname__}", purity,
                          seen_funcs)  # fmt: skip
                except QuadrantsCompilationError as e:
                    purity.warnings.append((f"fastcache is off for this kernel: {e.message}", src.loc(node)))
            continue
        call = parents.get(top)
        if isinstance(call, ast.Call) and call.func is top and _compile_time_call(value):
            if not pure_callee(value):
                label = getattr(value, "__qualname__", repr(value))
                purity.warnings.append((f"fastcache is off for this kernel: it calls the Python function {label!r} "
                                        "at compile time, whose result cannot be checked by the cache",
                                        src.loc(node)))  # fmt: skip
            continue
        capture = Capture(node.id, value, where, fn, src.loc(node), _in_static(top, parents, fn), tuple(chain))
        judge(capture, owner, purity)


def _audit_constructs(name: str, kernel: Any, report: AuditReport) -> None:
    """A kernel that is not fastcache=True: only the constructs its body is written with."""
    try:
        src = read_function(kernel.fn, "kernel")
    except QuadrantsCompilationError:
        return  # unreadable source: the compiler reports it at first call
    for message, loc in unsupported_constructs(src):
        report.findings.append(Finding(name, "violation", _where(loc, "", column=True), message))


_NOT_LOOKED_INTO = ("targets", "target", "annotation")  # lvalues and compile-time annotations


def unsupported_constructs(src: FunctionSource) -> list[tuple[str, SourceLoc]]:
    """The statements and expressions of a kernel or func body that the frontend has no translation for (not
    in `frontend.dispatch`), with the compiler's message and location. Conservative: what Python evaluates at
    compile time (call arguments, annotations, f-string parts, `if qd.static(...)` branches) and assignment
    targets are not looked into, so everything reported is certain to fail."""
    found: list[tuple[str, SourceLoc]] = []

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.stmt):
            if isinstance(node, ast.FunctionDef):
                found.append(("nested function definitions are not supported in kernels; use a qd.func", src.loc(node)))
                return
            if type(node) not in STATEMENTS:
                found.append((unsupported_node(node), src.loc(node)))
                return
            if isinstance(node, ast.If) and _static_test(node.test):
                return
        elif isinstance(node, ast.expr):
            if type(node) not in EXPRESSIONS:
                found.append((unsupported_node(node), src.loc(node)))
                return
            if isinstance(node, (ast.Call, ast.JoinedStr)):
                if isinstance(node, ast.Call):
                    visit(node.func)
                return
        for name, child in ast.iter_fields(node):
            if name in _NOT_LOOKED_INTO:
                continue
            for c in child if isinstance(child, list) else [child]:
                starred = isinstance(c, ast.Starred) and isinstance(node, (ast.Tuple, ast.List))  # unpacked there
                if isinstance(c, ast.AST) and not starred:
                    visit(c)

    for stmt in src.tree.body:
        visit(stmt)
    return found


def _static_test(test: ast.expr) -> bool:
    """`if qd.static(...)`: a branch the compiler may leave out, so not checked."""
    for n in ast.walk(test):
        if isinstance(n, ast.Call):
            f = n.func
            if (f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else "") == "static":
                return True
    return False


def _local_names(tree: ast.FunctionDef) -> set[str]:
    names = {a.arg for a in tree.args.args + tree.args.kwonlyargs + tree.args.posonlyargs}
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            names.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.Lambda)) and node is not tree:
            names.update(a.arg for a in node.args.args)
    return names


def _attribute_chain(node: ast.Name, parents: dict[ast.AST, ast.AST]) -> tuple[list[str], ast.AST]:
    chain: list[str] = []
    top: ast.AST = node
    parent = parents.get(top)
    while isinstance(parent, ast.Attribute) and parent.value is top and isinstance(parent.ctx, ast.Load):
        chain.append(parent.attr)
        top = parent
        parent = parents.get(top)
    return chain, top


def _is_func(v: Any) -> bool:
    return type(v).__name__ in ("Func", "BoundFunc") and hasattr(v, "fn")


def _compile_time_call(v: Any) -> bool:
    """A call the compiler evaluates in Python (its result compiled in): anything but an intrinsic, a dtype or
    matrix type, a kernel or print (as in frontend/calls.py)."""
    if getattr(v, "__qd_intrinsic__", None) is not None or getattr(v, "__qd_kernel__", False):
        return False
    return not isinstance(v, (PrimitiveType, MatrixType)) and v is not builtins.print


def _in_static(node: ast.AST, parents: dict[ast.AST, ast.AST], fn: Any) -> bool:
    p = parents.get(node)
    while p is not None:
        if isinstance(p, ast.Call):
            f = p.func
            name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
            if name == "static":
                return True
        p = parents.get(p)
    return False
