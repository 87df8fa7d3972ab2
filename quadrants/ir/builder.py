"""Append statements to the current block; the frontend's only way of creating IR.

Consumes values and source locations; produces IR statements placed at the insertion point. The location in
effect (`at(loc)`) is attached to every statement created, which is the one place locations enter the IR.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TypeVar

from quadrants.errors import SourceLoc
from quadrants.ir import nodes as ir
from quadrants.types.dtypes import PrimitiveType

S = TypeVar("S", bound=ir.Stmt)


class Builder:
    def __init__(self, body: ir.Block) -> None:
        self.blocks: list[ir.Block] = [body]
        self.loc: SourceLoc | None = None

    @property
    def block(self) -> ir.Block:
        return self.blocks[-1]

    def emit(self, stmt: S) -> S:
        if stmt.loc is None:
            stmt.loc = self.loc
        self.block.stmts.append(stmt)
        return stmt

    @contextmanager
    def into(self, block: ir.Block) -> Iterator[ir.Block]:
        self.blocks.append(block)
        try:
            yield block
        finally:
            self.blocks.pop()

    @contextmanager
    def at(self, loc: SourceLoc | None) -> Iterator[None]:
        saved = self.loc
        if loc is not None:
            self.loc = loc
        try:
            yield
        finally:
            self.loc = saved

    # ---- small helpers used everywhere -------------------------------------------------------------

    def const(self, value: int | float, dtype: PrimitiveType) -> ir.Const:
        """A constant, with its value already rounded/wrapped to `dtype` (0.1 as f32 is 0.100000001490116)."""
        return self.emit(ir.Const(value=_convert_const(value, dtype), type=dtype))

    def cast(self, v: ir.Value, dtype: PrimitiveType) -> ir.Value:
        if v.type is dtype:
            return v
        if isinstance(v, ir.Const) and isinstance(v.type, PrimitiveType):
            return self.const(_convert_const(v.value, dtype), dtype)
        return self.emit(ir.Cast(value=v, type=dtype))

    def load(self, ptr: ir.Value) -> ir.Load:
        assert isinstance(ptr.type, ir.PtrType)
        return self.emit(ir.Load(ptr=ptr, type=ptr.type.pointee))

    def store(self, ptr: ir.Value, value: ir.Value) -> ir.Store:
        return self.emit(ir.Store(ptr=ptr, value=value))

    def alloca(self, dtype: PrimitiveType, name: str = "") -> ir.Alloca:
        return self.emit(ir.Alloca(var_type=dtype, name=name, type=ir.PtrType(dtype)))


def _convert_const(value: int | float, dtype: PrimitiveType) -> int | float:
    """Fold a constant conversion with the same rules as the generated code (truncation, wrapping)."""
    if dtype.is_float:
        return float(dtype.np_dtype.type(value))
    if dtype.kind == "bool":
        return int(value != 0)
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            lo, _ = dtype.min_max()
            return lo
        value = int(value)  # truncates toward zero
    lo, hi = dtype.min_max()
    span = hi - lo + 1
    return (int(value) - lo) % span + lo
