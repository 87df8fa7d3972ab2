"""Expression visitors (a mixin of the frontend `Visitor`).

An expression evaluates to an IR value or to a compile-time Python object. Operations whose operands are all
compile-time values run in Python, as in Quadrants (`1 / 3` in a kernel is the Python float, made an f32
constant only where it meets runtime code).
"""

from __future__ import annotations

import ast
import enum
import math
import operator
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from quadrants.errors import QuadrantsCompilationError, QuadrantsSyntaxError, QuadrantsTypeError
from quadrants.frontend.ops import is_static_number
from quadrants.frontend.records import Capture, StaticCall
from quadrants.frontend.scope import MISSING, Alias, Fixed, MatVar, Var
from quadrants.frontend.values import Matrix, Struct
from quadrants.ir import nodes as ir
from quadrants.types.dtypes import PrimitiveType, i32, u1
from quadrants.types.promotion import promote

if TYPE_CHECKING:
    from quadrants.frontend.visitor import Visitor

BIN_OPS: dict[type, str] = {
    ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "truediv", ast.FloorDiv: "floordiv",
    ast.Mod: "mod", ast.Pow: "pow", ast.BitAnd: "and", ast.BitOr: "or", ast.BitXor: "xor",
    ast.LShift: "shl", ast.RShift: "shr",
}  # fmt: skip
PY_OPS: dict[str, Callable[[Any, Any], Any]] = {
    "add": operator.add, "sub": operator.sub, "mul": operator.mul, "truediv": operator.truediv,
    "floordiv": operator.floordiv, "mod": operator.mod, "pow": operator.pow, "and": operator.and_,
    "or": operator.or_, "xor": operator.xor, "shl": operator.lshift, "shr": operator.rshift,
    "lshr": lambda a, b: (a & 0xFFFFFFFF) >> b if a < 0 else a >> b,  # compile-time ints: as i32
    "lt": operator.lt, "le": operator.le, "gt": operator.gt, "ge": operator.ge, "eq": operator.eq,
    "ne": operator.ne, "matmul": operator.matmul, "min": min, "max": max,
    "raw_div": lambda a, b: _c_div(a, b), "raw_mod": lambda a, b: _c_mod(a, b), "atan2": math.atan2,
}  # fmt: skip


def _c_div(a: Any, b: Any) -> Any:
    """C division of compile-time numbers (`qd.raw_div`): integers truncate toward zero."""
    if isinstance(a, int) and isinstance(b, int):
        q = abs(a) // abs(b)
        return q if (a < 0) == (b < 0) else -q
    return a / b


def _c_mod(a: Any, b: Any) -> Any:
    """C remainder of compile-time numbers (`qd.raw_mod`): the sign of the dividend."""
    if isinstance(a, int) and isinstance(b, int):
        return a - b * _c_div(a, b)
    return math.fmod(a, b)
PY_UNARY: dict[type, Callable[[Any], Any]] = {
    ast.USub: operator.neg, ast.UAdd: operator.pos, ast.Not: operator.not_, ast.Invert: operator.invert,
}  # fmt: skip
CMP_OPS: dict[type, str] = {ast.Lt: "lt", ast.LtE: "le", ast.Gt: "gt", ast.GtE: "ge", ast.Eq: "eq", ast.NotEq: "ne"}
STATIC_CMP: dict[type, Callable[[Any, Any], Any]] = {
    ast.Is: operator.is_, ast.IsNot: operator.is_not,
    ast.In: lambda a, b: a in b, ast.NotIn: lambda a, b: a not in b,
}  # fmt: skip


def is_runtime(v: Any) -> bool:
    return isinstance(v, (ir.Value, Matrix))


def is_field(v: Any) -> bool:
    return getattr(v, "__qd_field__", None) is not None


class ExprMixin:
    def expr(self: Visitor, node: ast.expr) -> Any:
        method = getattr(self, "visit_" + type(node).__name__, None)
        if method is None:
            raise self.error(node, f"{type(node).__name__} expressions are not supported in kernels")
        try:
            return method(node)
        except QuadrantsCompilationError as e:
            if e.loc is None:
                raise type(e)(e.message, self.loc(node)) from None
            raise

    def is_static_call(self: Visitor, node: ast.expr) -> bool:
        """Whether `node` is a call of `qd.static(...)`."""
        if not isinstance(node, ast.Call):
            return False
        try:
            fn = self.static_eval(node.func, record=False)
        except Exception:  # noqa: BLE001 - not a compile-time callee: not qd.static
            return False
        return getattr(fn, "__qd_intrinsic__", None) == "static"

    def static_eval(self: Visitor, node: ast.expr, record: bool = True) -> Any:
        """Evaluate `node` as Python, at compile time, seeing the kernel's compile-time names."""
        namespace = dict(self.frame.globals)
        namespace.update(self.frame.closure)
        for n in ast.walk(node):
            if not isinstance(n, ast.Name):
                continue
            _, binding = self.frame.scope.find(n.id)
            if binding is MISSING:
                if record and (n.id in self.frame.closure or n.id in self.frame.globals):
                    self.lookup(n.id, n, static=True)  # records the capture
                continue
            if isinstance(binding, (Var, MatVar, Fixed, Alias)) or is_runtime(binding):
                shape = _static_shape(binding)
                if shape is None:
                    raise self.error(
                        n, f"qd.static() needs compile-time values, but {n.id!r} is a runtime value", QuadrantsTypeError
                    )
                namespace[n.id] = _ShapeOnly(n.id, shape)  # a runtime vector's shape is known: `range(v.n)`
                continue
            namespace[n.id] = binding
        for call in ast.walk(node):
            if isinstance(call, ast.Call):
                try:
                    callee = eval(compile(ast.Expression(body=call.func), "<qd>", "eval"), namespace)  # noqa: S307
                except Exception:  # noqa: BLE001 - the evaluation below reports it
                    callee = None
                self.static_calls.append(StaticCall(callee, self.loc(call)))
        try:
            code = compile(ast.Expression(body=node), self.frame.source.filename, "eval")
            return eval(code, namespace)  # noqa: S307 - evaluating the user's own kernel code
        except QuadrantsCompilationError:
            raise
        except Exception as e:
            raise self.error(node, f"{type(e).__name__}: {e}", QuadrantsCompilationError) from None

    # ---- leaves -----------------------------------------------------------------------------------------

    def visit_Constant(self: Visitor, node: ast.Constant) -> Any:
        return node.value

    def visit_Name(self: Visitor, node: ast.Name) -> Any:
        return self.read(self.lookup(node.id, node))

    def visit_Tuple(self: Visitor, node: ast.Tuple) -> Any:
        return tuple(self._elements(node.elts))

    def visit_List(self: Visitor, node: ast.List) -> Any:
        return list(self._elements(node.elts))

    def _elements(self: Visitor, elts: list[ast.expr]) -> list[Any]:
        out: list[Any] = []
        for e in elts:
            if isinstance(e, ast.Starred):
                v = self.expr(e.value)
                out.extend(v.unpack_values() if isinstance(v, Matrix) else v)
            else:
                out.append(self.expr(e))
        return out

    def visit_JoinedStr(self: Visitor, node: ast.JoinedStr) -> Any:
        return self.static_eval(node)

    # ---- operators --------------------------------------------------------------------------------------

    def binary(self: Visitor, op: str, a: Any, b: Any, node: ast.AST) -> Any:
        if isinstance(a, (list, tuple)) and self.as_matrix(b, node) is not None:  # `v == [0, 1]`
            a = self.matrix_from_rows(a, None, node)
        elif isinstance(b, (list, tuple)) and self.as_matrix(a, node) is not None:
            b = self.matrix_from_rows(b, None, node)
        if self.as_matrix(a, node) is not None or self.as_matrix(b, node) is not None:
            if not is_runtime(a) and not is_runtime(b) and op in PY_OPS:
                try:
                    return PY_OPS[op](a, b)  # two Python-scope vectors: numpy does it
                except Exception:  # noqa: BLE001
                    pass
            return self.matrix_binary(op, a, b, node)
        if not isinstance(a, ir.Value) and not isinstance(b, ir.Value):
            try:
                return PY_OPS[op](_py(a), _py(b))
            except Exception as e:
                raise self.error(node, f"{type(e).__name__}: {e}", QuadrantsCompilationError) from None
        return self.ops.binary(op, _py(a), _py(b), self.loc(node))

    def visit_BinOp(self: Visitor, node: ast.BinOp) -> Any:
        op = BIN_OPS.get(type(node.op))
        if op is None:
            if isinstance(node.op, ast.MatMult):
                return self.matmul(self.expr(node.left), self.expr(node.right), node)
            raise self.error(node, f"operator {type(node.op).__name__} is not supported")
        return self.binary(op, self.expr(node.left), self.expr(node.right), node)

    def visit_UnaryOp(self: Visitor, node: ast.UnaryOp) -> Any:
        v = self.expr(node.operand)
        if isinstance(v, Matrix):
            return self.matrix_unary(lambda e: self._unary(node.op, e, node), v)
        return self._unary(node.op, _py(v), node)

    def _unary(self: Visitor, op: ast.unaryop, v: Any, node: ast.AST) -> Any:
        if not isinstance(v, ir.Value):
            try:
                return PY_UNARY[type(op)](v)
            except Exception as e:
                raise self.error(node, f"{type(e).__name__}: {e}", QuadrantsCompilationError) from None
        if isinstance(op, ast.UAdd):
            return v
        name = {ast.USub: "neg", ast.Not: "lnot", ast.Invert: "invert"}[type(op)]
        return self.ops.unary(name, v, self.loc(node))

    def visit_Compare(self: Visitor, node: ast.Compare) -> Any:
        left = self.expr(node.left)
        results: list[Any] = []
        for op, comp in zip(node.ops, node.comparators):
            right = self.expr(comp)
            if type(op) in STATIC_CMP:
                if is_runtime(left) or is_runtime(right):
                    raise self.error(node, f"'{type(op).__name__}' needs compile-time operands in a kernel")
                results.append(STATIC_CMP[type(op)](left, right))
            else:
                results.append(self.binary(CMP_OPS[type(op)], left, right, node))
            left = right
        if all(not is_runtime(r) for r in results):
            return all(results)
        out: Any = None
        for r in results:
            if not is_runtime(r):
                if not r:
                    return False
                continue
            out = r if out is None else self.ops.binary("and", out, r, self.loc(node))
        return out

    def visit_BoolOp(self: Visitor, node: ast.BoolOp) -> Any:
        is_and = isinstance(node.op, ast.And)
        return self._boolop(is_and, node.values, node)

    def _boolop(self: Visitor, is_and: bool, values: list[ast.expr], node: ast.AST) -> Any:
        first = self.expr(values[0])
        if len(values) == 1:
            return first
        if not is_runtime(first):
            # Python short-circuit on a compile-time operand.
            if bool(first) != is_and:
                return first
            return self._boolop(is_and, values[1:], node)
        loc = self.loc(node)
        a = self.ops.value(first, loc)
        if not isinstance(a.type, PrimitiveType) or a.type.is_float:
            sym = "&&" if is_and else "||"
            raise QuadrantsTypeError(f"unsupported operand type(s) for '{sym}': '{a.type}'", loc)
        cond = self.ops.cond(a, loc)
        if not is_and:
            cond = self.ops.unary("lnot", cond, loc)
        stmt = ir.If(cond=cond)
        index = len(self.b.block.stmts)
        self.b.emit(stmt)
        with self.b.into(stmt.then):
            b = self.ops.value(self._boolop(is_and, values[1:], node), loc)
        if not isinstance(b.type, PrimitiveType) or b.type.is_float:
            raise QuadrantsTypeError(f"unsupported operand type(s) for '&&'/'||': '{a.type}' and '{b.type}'", loc)
        t = promote(a.type, b.type)
        with self.b.into(stmt.then):
            bcast = self.b.cast(b, t)
        return self._merge_into_var(index, t, [(None, a), (stmt.then, bcast)])

    def _merge_into_var(self: Visitor, index: int, t: PrimitiveType, stores: list[tuple[Any, ir.Value]]) -> Any:
        """Create a temporary before statement `index` of the current block, store each value (in its block,
        or before the statement when the block is None), and read it back after."""
        block = self.b.block
        pre: list[ir.Stmt] = []
        ptr = ir.Alloca(var_type=t, name="", type=ir.PtrType(t), loc=self.b.loc)
        pre.append(ptr)
        for where, v in stores:
            if where is None:
                cast = v if v.type is t else ir.Cast(value=v, type=t, loc=self.b.loc)
                if cast is not v:
                    pre.append(cast)
                pre.append(ir.Store(ptr=ptr, value=cast, loc=self.b.loc))
            else:
                with self.b.into(where):
                    self.b.store(ptr, self.b.cast(v, t))
        block.stmts[index:index] = pre
        return self.b.load(ptr)

    def visit_IfExp(self: Visitor, node: ast.IfExp) -> Any:
        cond = self.expr(node.test)
        if not is_runtime(cond):
            return self.expr(node.body) if cond else self.expr(node.orelse)
        if isinstance(cond, Matrix):
            raise self.error(node.test, 'the condition of `a if cond else b` is a vector: it has no single truth '
                             'value. Please use "qd.select" instead.', QuadrantsSyntaxError)  # fmt: skip
        loc = self.loc(node)
        stmt = ir.If(cond=self.ops.cond(cond, loc))
        index = len(self.b.block.stmts)
        self.b.emit(stmt)
        with self.b.into(stmt.then):
            a = self._branch_value(self.expr(node.body), loc)
        with self.b.into(stmt.orelse):
            b = self._branch_value(self.expr(node.orelse), loc)
        if isinstance(a, Matrix) != isinstance(b, Matrix):  # `0 if c else v`: the scalar fills the other's shape
            with self.b.into(stmt.then if not isinstance(a, Matrix) else stmt.orelse):
                if isinstance(a, Matrix):
                    b = Matrix(a.shape, [b] * len(a.elements))
                else:
                    a = Matrix(b.shape, [a] * len(b.elements))
        if isinstance(a, Matrix) or isinstance(b, Matrix):  # element by element, as Quadrants does
            if not (isinstance(a, Matrix) and isinstance(b, Matrix) and a.shape == b.shape):
                raise self.error(node, "both branches of a conditional expression must be vectors (or matrices) of "
                                 "one shape, or both scalars", QuadrantsTypeError)  # fmt: skip
            out = [self._merge_into_var(index, promote(ea.type, eb.type), [(stmt.then, ea), (stmt.orelse, eb)])
                   for ea, eb in zip(a.elements, b.elements)]  # fmt: skip
            return Matrix(a.shape, out)
        assert isinstance(a.type, PrimitiveType) and isinstance(b.type, PrimitiveType)
        return self._merge_into_var(index, promote(a.type, b.type), [(stmt.then, a), (stmt.orelse, b)])

    def _branch_value(self: Visitor, v: Any, loc: Any) -> Any:
        """A conditional expression's branch as IR values, emitted in the branch's block."""
        if isinstance(v, Matrix):
            return Matrix(v.shape, [self.ops.value(e, loc) for e in v.elements])
        return self.ops.value(v, loc)

    # ---- attributes and subscripts ------------------------------------------------------------------

    def visit_Attribute(self: Visitor, node: ast.Attribute) -> Any:
        base = self.expr(node.value)
        if isinstance(base, ir.Value) and isinstance(base.type, ir.NdType):
            return self.ndarray_attribute(base, node.attr, node)
        if isinstance(base, Matrix):
            return self.matrix_attribute(base, node.attr, node)
        if isinstance(base, Struct):
            return self.struct_attribute(base, node.attr, node)
        if is_runtime(base):
            raise self.error(node, f"runtime values have no attribute {node.attr!r}")
        value = self._static_attribute(base, node)
        self._record_chain(node, value)
        return value

    def _static_attribute(self: Visitor, base: Any, node: ast.Attribute) -> Any:
        try:
            return getattr(base, node.attr)
        except AttributeError as e:
            raise self.error(node, f"AttributeError: {e}", QuadrantsCompilationError) from None

    def _record_chain(self: Visitor, node: ast.Attribute, value: Any) -> None:
        """`math.pi`, `Mode.FAST`, `cfg.N`: a read through a global or closure name, for the purity check."""
        chain: list[str] = []
        cur: ast.expr = node
        while isinstance(cur, ast.Attribute):
            chain.append(cur.attr)
            cur = cur.value
        if not isinstance(cur, ast.Name) or self.frame.scope.find(cur.id)[1] is not MISSING:
            return
        fr = self.frame
        where = "closure" if cur.id in fr.closure else "global" if cur.id in fr.globals else None
        if where is None:
            return
        self.captures.append(Capture(cur.id, value, where, fr.source.fn, self.loc(node), chain=tuple(reversed(chain))))

    def struct_attribute(self: Visitor, s: Struct, attr: str, node: ast.AST) -> Any:
        if attr in s.members:
            return self.read(s.members[attr])
        member = getattr(s.cls, attr, None)
        if member is not None:
            from quadrants.frontend.func import Func

            if isinstance(member, Func):
                from quadrants.frontend.func import BoundFunc

                return BoundFunc(member, s)
            if getattr(member, "__qd_kernel__", False):
                raise self.error(node, "a kernel cannot be called from a kernel or qd.func; make it a qd.func")
            if not callable(member):
                return s.class_attribute(attr)  # a class attribute: a compile-time constant
        raise self.error(node, f"{s.cls.__name__} has no member {attr!r} usable in kernels")

    def ndarray_attribute(self: Visitor, arr: ir.Value, attr: str, node: ast.AST) -> Any:
        t = arr.type
        assert isinstance(t, ir.NdType)
        if attr == "shape":
            if isinstance(arr, ir.GlobalNd):
                return arr.shape  # fields have compile-time shapes
            return tuple(self.b.emit(ir.NdShape(arr=arr, dim=d, type=i32)) for d in range(t.ndim))
        if attr == "dtype":
            return t.dtype
        if attr == "ndim":
            return t.ndim
        raise self.error(node, f"ndarrays have no attribute {attr!r} inside kernels")

    # ---- ndarrays and fields ------------------------------------------------------------------------

    def is_ndarray(self: Visitor, v: Any) -> bool:
        return (isinstance(v, ir.Value) and isinstance(v.type, ir.NdType)) or is_field(v)

    def ndarray_handle(self: Visitor, v: Any) -> ir.Value:
        """The IR handle of an ndarray argument, or of a field (a region offset baked into the kernel)."""
        if isinstance(v, ir.Value):
            return v
        region, offset, dtype, shape, elem_shape = v.__qd_field__()
        key = (region, offset)
        handle = self.fields_used.get(key)
        if handle is None:
            from quadrants.runtime.ndarray import nd_type

            handle = ir.GlobalNd(region=region, offset=offset, shape=tuple(shape),
                                 type=nd_type(dtype, len(shape), tuple(elem_shape)))  # fmt: skip
            self.kernel.body.stmts.insert(self.global_insert_pos, handle)
            self.global_insert_pos += 1
            self.fields_used[key] = handle
        return handle

    def visit_Subscript(self: Visitor, node: ast.Subscript) -> Any:
        base = self.expr(node.value)
        if self.is_ndarray(base):
            handle = self.ndarray_handle(base)
            loads = [self.b.load(p) for p in self.element_ptrs(handle, node)]
            elem_shape = handle.type.elem_shape  # type: ignore[union-attr]
            return loads[0] if not elem_shape else Matrix(elem_shape, loads)
        self.reject_captured_array(base, node)
        index = self.expr(node.slice)
        if isinstance(base, Matrix):
            return self.matrix_index(base, index, node)
        if is_runtime(base):
            raise self.error(node, "this value cannot be indexed")
        if is_runtime(index) or (isinstance(index, tuple) and any(is_runtime(i) for i in index)):
            m = self.as_matrix(base, node)
            if m is not None:
                return self.matrix_index(m, index, node)
            raise self.error(node, "a Python sequence cannot be indexed with a runtime value; use qd.static")
        try:
            return base[index]
        except Exception as e:
            raise self.error(node, f"{type(e).__name__}: {e}", QuadrantsCompilationError) from None

    def reject_captured_array(self: Visitor, base: Any, node: ast.Subscript) -> None:
        """An ndarray (or numpy array) reached as a Python object rather than a kernel argument: an error, as in
        Quadrants, with or without fastcache."""
        if getattr(base, "_desc", None) is not None or isinstance(base, np.ndarray):
            raise self.error(
                node,
                f"{ast.unparse(node.value)!r} is an ndarray captured from outside the kernel; pass it as a kernel "
                "argument (ndarrays are runtime arguments, never compiled in)",
                QuadrantsCompilationError,
            )

    def _indices(self: Visitor, node: ast.Subscript) -> list[Any]:
        raw = self.expr(node.slice)
        if raw is None:
            return []  # x[None]: the element of a 0-dimensional field
        items = list(raw) if isinstance(raw, (tuple, list)) else [raw]
        out: list[Any] = []
        for it in items:
            if isinstance(it, Matrix):
                out.extend(it.elements)
            else:
                out.append(_py(it))
        return out

    def element_ptrs(self: Visitor, arr: ir.Value, node: ast.Subscript) -> list[ir.ExtPtr]:
        """Pointers to the scalars of element `arr[indices]` (one, or one per vector/matrix component)."""
        t = arr.type
        assert isinstance(t, ir.NdType)
        idx = self._indices(node)
        loc = self.loc(node)
        if len(idx) != t.ndim:
            raise QuadrantsSyntaxError(f"this ndarray has {t.ndim} dimension(s) but is indexed with {len(idx)}", loc)
        values = []
        for i in idx:
            if is_static_number(i) and not isinstance(i, (int, bool)) and float(i) != int(i):
                raise QuadrantsTypeError("ndarray indices must be integers", loc)
            v = self.ops.value(int(i) if is_static_number(i) else i, loc)
            assert isinstance(v.type, PrimitiveType)
            if v.type.is_float:
                raise QuadrantsTypeError(f"ndarray indices must be integers, not {v.type}", loc)
            values.append(self.b.cast(v, i32))
        site = len(self.kernel.sites)
        self.kernel.sites.append(self.site("bounds", loc, ast.unparse(node.value)))
        elems = [()] if not t.elem_shape else list(_element_indices(t.elem_shape))
        return [
            self.b.emit(ir.ExtPtr(arr=arr, indices=tuple(values), elem=e, site=site, type=ir.PtrType(t.dtype)))
            for e in elems
        ]

    def u1_const(self: Visitor, value: bool) -> ir.Value:
        return self.b.const(int(value), u1)


def _element_indices(shape: tuple[int, ...]) -> list[tuple[int, ...]]:
    if len(shape) == 1:
        return [(i,) for i in range(shape[0])]
    return [(i, j) for i in range(shape[0]) for j in range(shape[1])]


def _py(v: Any) -> Any:
    """Enum members stand for their values in arithmetic (IntEnum already is an int)."""
    if isinstance(v, enum.Enum) and not isinstance(v, int):
        return v.value
    return v


def _static_shape(binding: Any) -> tuple[int, ...] | None:
    """The shape of a runtime vector/matrix binding (known at compile time), else None."""
    if isinstance(binding, MatVar):
        return binding.shape
    value = binding.value if isinstance(binding, Fixed) else binding
    return value.shape if isinstance(value, Matrix) else None


class _ShapeOnly:
    """A runtime vector/matrix inside qd.static(): its shape (`n`, `m`, `shape`) can be read, nothing else."""

    def __init__(self, name: str, shape: tuple[int, ...]) -> None:
        self._name, self.shape = name, shape
        self.n = shape[0]
        self.m = shape[1] if len(shape) == 2 else 1

    def get_shape(self) -> tuple[int, ...]:
        return self.shape

    def __len__(self) -> int:
        return self.n

    def _refuse(self, *_: Any) -> Any:
        raise TypeError(f"qd.static() needs compile-time values, but {self._name!r} is a runtime value "
                        f"(only its shape: .n, .m, .shape)")  # fmt: skip

    __getitem__ = __iter__ = __bool__ = __add__ = __mul__ = __eq__ = _refuse  # type: ignore[assignment]

    def __getattr__(self, attr: str) -> Any:
        return self._refuse()
