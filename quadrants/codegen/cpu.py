"""The CPU backend described as data: triple, CPU name and features, and the LLVM target machine.

Consumes the `cpu_target` setting ("host", or an LLVM CPU name such as "x86-64-v3" for code meant to run on
other machines); produces a `CpuTarget` and, when compiling, a cached llvmlite `TargetMachine`.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import llvmlite.binding as llvm


@dataclass(frozen=True)
class CpuTarget:
    triple: str
    cpu: str
    features: str

    def describe(self) -> dict[str, str]:
        return {"triple": self.triple, "cpu": self.cpu, "features": self.features}


@functools.cache
def _init() -> None:
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()


@functools.cache
def cpu_target(name: str = "host") -> CpuTarget:
    _init()
    triple = llvm.get_process_triple()
    if name == "host":
        return CpuTarget(triple, llvm.get_host_cpu_name(), llvm.get_host_cpu_features().flatten())
    return CpuTarget(triple, name, "")


def probe_cpu(name: str) -> None:
    """Compile an empty module for the processor `name` (qd precompile checks its targets with this in a child
    process: LLVM aborts the process for some unknown names)."""
    target = cpu_target(name)
    tm = target_machine(target, 0)
    mod = llvm.parse_assembly(f'target triple = "{target.triple}"\ndefine void @f() {{\n  ret void\n}}\n')
    tm.emit_object(mod)


@functools.cache
def target_machine(target: CpuTarget, opt: int) -> llvm.TargetMachine:
    _init()
    t = llvm.Target.from_triple(target.triple)
    return t.create_target_machine(cpu=target.cpu, features=target.features, opt=opt, reloc="pic", codemodel="default")
