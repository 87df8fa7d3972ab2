"""What a compile writes to and reads from `debug_dump_path`: each stage's text (`dump=ir,llvm,opt,asm,ptx`,
`dump_ir`), and hand-edited replacements (`load_ir` / QD_LOAD_IR for the LLVM module, `load_ptx` /
QUADRANTS_LOAD_PTX for CUDA's PTX), read in place of what was just built, as Quadrants reads them.

A kernel's files are named after its symbol (`qd_<name>_<hash>`): `.qd.txt` (quadrants IR), `.ll` (the LLVM
module before optimization: the file `load_ir` reads back), `.opt.ll`, `.s` (CPU assembly), `.<sm>.ptx` (CUDA:
the file `load_ptx` reads back). Only a kernel that is compiled reads its replacement: `qd.init` refuses either
switch while a cache could hand a kernel back without compiling it (`_config.check_ir_loading`).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from typing import Any

from quadrants import _logging
from quadrants._config import Config
from quadrants.errors import QuadrantsCompilationError

SUFFIXES = {"ir": ".qd.txt", "llvm": ".ll", "opt": ".opt.ll", "asm": ".s", "ptx": ".ptx"}
SWITCHES = {"llvm": ("load_ir", "QD_LOAD_IR"), "ptx": ("load_ptx", "QUADRANTS_LOAD_PTX")}  # option, variable


def path(config: Config, symbol: str, stage: str, arch: str = "") -> str:
    """Where `stage` of the kernel `symbol` is written (`arch`: CUDA's `sm_80`, for the PTX of each)."""
    suffix = SUFFIXES.get(stage, "." + stage)
    return os.path.join(config.debug_dump_path, symbol + (f".{arch}" if arch else "") + suffix)


def dump(config: Config, symbol: str, texts: dict[str, Any], arch: str = "") -> None:
    """Write each stage in `config.dump_stages` that `texts` has."""
    os.makedirs(config.debug_dump_path, exist_ok=True)
    for stage in config.dump_stages:
        text = texts.get(stage)
        if text is None:
            continue
        where = path(config, symbol, stage, arch)
        with open(where, "w") as f:
            f.write(text)
        _logging.info(f"wrote {where}", tag="dump")


def replacement(config: Config, symbol: str, stage: str, built: str, arch: str = "") -> str:
    """The hand-edited text of `stage` (`llvm` or `ptx`) for the kernel `symbol` when its switch is on and the
    file is there; else `built` (a missing file is a warning: the kernel runs what was built for it)."""
    switch = SWITCHES[stage]
    if not getattr(config, switch[0]):
        return built
    where = path(config, symbol, stage, arch)
    try:
        with open(where) as f:
            text = f.read()
    except OSError as e:
        _logging.warn(f"{switch[1]}: no replacement for kernel {symbol} ({where}: {e.strerror}); it runs the code "
                      f"built for it", tag="dump")  # fmt: skip
        return built
    _logging.info(f"{switch[1]}: kernel {symbol} compiles {where}", tag="dump")
    return text


@contextlib.contextmanager
def blamed(config: Config, symbol: str, stage: str, replaced: bool, arch: str = "") -> Iterator[None]:
    """Around compiling text that `replacement` may have read: an error of LLVM or ptxas (a RuntimeError) there
    is the edited file's, a QuadrantsCompilationError naming it; of built text, it stays what it was."""
    try:
        yield
    except RuntimeError as e:
        if not replaced:
            raise
        raise QuadrantsCompilationError(f"{SWITCHES[stage][1]}: {path(config, symbol, stage, arch)} does not "
                                         f"compile:\n{str(e).strip()}") from None  # fmt: skip


def written(config: Config, symbol: str, ir_text: str, texts: dict[str, Any]) -> None:
    """What a backend's compile shows of a kernel: its IR printed (`print_ir`), its stages' texts written
    (`dump`, `dump_ir`; `texts` maps a stage to its text, or, for CUDA's PTX, to {sm: text})."""
    if config.print_ir:
        print(ir_text, end="")
    if not config.dump_stages:
        return
    per_arch = {k: v for k, v in texts.items() if isinstance(v, dict)}
    dump(config, symbol, {"ir": ir_text, **{k: v for k, v in texts.items() if k not in per_arch}})
    for stage, by_arch in per_arch.items():
        for arch, text in by_arch.items():
            dump(config, symbol, {stage: text}, arch)
