"""Expression constructs: one function per AST expression class (`transform_<class>`), taking the builder first.
Calls are in `calls.py`.

An expression evaluates to an IR value or to a compile-time Python object. Operations whose operands are all
compile-time values run in Python, as in Quadrants (`operators.py`).
"""

from __future__ import annotations

import ast
import inspect
from collections.abc import Callable
from typing import Any

import numpy as np

from quadrants.errors import QuadrantsCompilationError, QuadrantsSyntaxError, QuadrantsTypeError
from quadrants.frontend import mesh, tiles, views
from quadrants.frontend.builder import FrontendBuilder
from quadrants.frontend.func import BoundFunc, Func
from quadrants.frontend.lvalues import assign
from quadrants.frontend.matrix_ops import matmul, matrix_attribute, matrix_index
from quadrants.frontend.ndarrays import (
    element_ptrs,
    is_ndarray,
    ndarray_attribute,
    ndarray_handle,
    numpy_constant,
    reject_captured_array,
)
from quadrants.frontend.operators import BIN_OPS, binary, matrix_unary, py_value, unary
from quadrants.frontend.printing import has_runtime, joined_str, python_str
from quadrants.frontend.records import Capture
from quadrants.frontend.refs import read
from quadrants.frontend.scope import MISSING
from quadrants.frontend.static_eval import attribute_chain
from quadrants.frontend.structs import UnpackedGroup, field_element, is_struct_field, unpacked_group, unpacked_member
from quadrants.frontend.values import Matrix, Struct, is_runtime, type_name
from quadrants.frontend.vectors import as_matrix, make_matrix
from quadrants.ir import nodes as ir
from quadrants.types.dtypes import PrimitiveType
from quadrants.types.promotion import promote

CMP_OPS: dict[type, str] = {ast.Lt: "lt", ast.LtE: "le", ast.Gt: "gt", ast.GtE: "ge", ast.Eq: "eq", ast.NotEq: "ne"}
IDENTITY_OPS = (ast.Is, ast.IsNot)

# ---- leaves -------------------------------------------------------------------------------------------


def transform_constant(fb: FrontendBuilder, node: ast.Constant) -> Any:
    return node.value


def transform_name(fb: FrontendBuilder, node: ast.Name) -> Any:
    return read(fb, fb.lookup(node.id, node))


def transform_tuple(fb: FrontendBuilder, node: ast.Tuple) -> Any:
    return tuple(_elements(fb, node.elts))


def transform_list(fb: FrontendBuilder, node: ast.List) -> Any:
    return list(_elements(fb, node.elts))


def _elements(fb: FrontendBuilder, elts: list[ast.expr]) -> list[Any]:
    out: list[Any] = []
    for e in elts:
        if isinstance(e, ast.Starred):
            v = fb.expr(e.value)
            out.extend(v.unpack_values() if isinstance(v, Matrix) else v)
        else:
            out.append(fb.expr(e))
    return out


def transform_joined_str(fb: FrontendBuilder, node: ast.JoinedStr) -> Any:
    """An f-string: a Python string when all its values are compile-time ones, else text that `print` prints."""
    text = joined_str(fb, node)
    return text if has_runtime(text) else python_str(text)


def transform_named_expr(fb: FrontendBuilder, node: ast.NamedExpr) -> Any:
    """`(a := value)`: assigns the name as `a = value` does and is the name's value."""
    assign(fb, node.target, fb.expr(node.value), node)
    return fb.expr(node.target)


# ---- operators ----------------------------------------------------------------------------------------


def transform_binop(fb: FrontendBuilder, node: ast.BinOp) -> Any:
    op = BIN_OPS.get(type(node.op))
    if op is None:
        if isinstance(node.op, ast.MatMult):
            return matmul(fb, fb.expr(node.left), fb.expr(node.right), node)
        raise fb.error(node, f"operator {type(node.op).__name__} is not supported")
    return binary(fb, op, fb.expr(node.left), fb.expr(node.right), node)


def transform_unaryop(fb: FrontendBuilder, node: ast.UnaryOp) -> Any:
    v = fb.expr(node.operand)
    if isinstance(v, Matrix):
        return matrix_unary(lambda e: unary(fb, node.op, e, node), v)
    return unary(fb, node.op, py_value(v), node)


def transform_compare(fb: FrontendBuilder, node: ast.Compare) -> Any:
    left = fb.expr(node.left)
    results: list[Any] = []
    for op, comp in zip(node.ops, node.comparators):
        right = fb.expr(comp)
        if isinstance(op, (ast.In, ast.NotIn)):  # as in Quadrants, even for compile-time operands
            raise fb.error(node, '"In" is only supported inside `qd.static`.')
        if isinstance(op, IDENTITY_OPS):  # identity is Python's: only inside qd.static(...), as in Quadrants
            word = "is" if isinstance(op, ast.Is) else "is not"
            raise fb.error(node, f'Operator "{word}" in Quadrants scope is not supported: compare inside '
                                 f"qd.static(...), e.g. qd.static(x {word} None)")  # fmt: skip
        else:
            results.append(binary(fb, CMP_OPS[type(op)], left, right, node))
        left = right
    if all(not is_runtime(r) for r in results):
        return all(results)
    out: Any = None
    for r in results:
        if not is_runtime(r):
            if not r:
                return False
            continue
        out = r if out is None else fb.ops.binary("and", out, r, fb.loc(node))
    return out


def transform_boolop(fb: FrontendBuilder, node: ast.BoolOp) -> Any:
    is_and = isinstance(node.op, ast.And)
    return _boolop(fb, is_and, node.values, node)


def _boolop(fb: FrontendBuilder, is_and: bool, values: list[ast.expr], node: ast.AST) -> Any:
    first = fb.expr(values[0])
    if len(values) == 1:
        return first
    if as_matrix(fb, first, node) is not None:
        return _vector_boolop(fb, is_and, first, _boolop(fb, is_and, values[1:], node), node)
    if not is_runtime(first):
        # Python short-circuit on a compile-time operand.
        if bool(first) != is_and:
            return first
        return _boolop(fb, is_and, values[1:], node)
    loc = fb.loc(node)
    a = fb.ops.value(first, loc)
    if not isinstance(a.type, PrimitiveType) or a.type.is_float:
        sym = "&&" if is_and else "||"
        raise QuadrantsTypeError(f"unsupported operand type(s) for '{sym}': '{a.type}'", loc)
    cond = fb.ops.cond(a, loc)
    if not is_and:
        cond = fb.ops.unary("lnot", cond, loc)
    stmt = ir.If(cond=cond)
    index = len(fb.b.block.stmts)
    fb.b.emit(stmt)
    with fb.b.into(stmt.then):
        b = fb.ops.value(_boolop(fb, is_and, values[1:], node), loc)
    if not isinstance(b.type, PrimitiveType) or b.type.is_float:
        raise QuadrantsTypeError(f"unsupported operand type(s) for '&&'/'||': '{a.type}' and '{b.type}'", loc)
    t = promote(a.type, b.type)
    with fb.b.into(stmt.then):
        bcast = fb.b.cast(b, t)
    return _merge_into_var(fb, index, t, [(None, a), (stmt.then, bcast)])


def _vector_boolop(fb: FrontendBuilder, is_and: bool, a: Any, b: Any, node: ast.AST) -> Any:
    """`a and b` / `a or b` of vectors, as Quadrants has them: element by element, 1 or 0 (no short circuit), in
    the operands' promoted type."""
    loc = fb.loc(node)
    types: list[PrimitiveType] = []
    for x in (a, b):
        m = as_matrix(fb, x, node)
        t0 = fb.ops.value(m.elements[0] if m is not None else x, loc).type
        assert isinstance(t0, PrimitiveType)
        types.append(t0)
    t = promote(types[0], types[1])
    both = binary(fb, "and" if is_and else "or", binary(fb, "ne", a, 0, node), binary(fb, "ne", b, 0, node), node)
    return matrix_unary(lambda e: fb.ops.cast(e, t, loc), both)


def _merge_into_var(fb: FrontendBuilder, index: int, t: PrimitiveType, stores: list[tuple[Any, ir.Value]]) -> Any:
    """Create a temporary before statement `index` of the current block, store each value (in its block,
    or before the statement when the block is None), and read it back after."""
    block = fb.b.block
    pre: list[ir.Stmt] = []
    ptr = ir.Alloca(var_type=t, name="", type=ir.PtrType(t), loc=fb.b.loc)
    pre.append(ptr)
    for where, v in stores:
        if where is None:
            cast = v if v.type is t else ir.Cast(value=v, type=t, loc=fb.b.loc)
            if cast is not v:
                pre.append(cast)
            pre.append(ir.Store(ptr=ptr, value=cast, loc=fb.b.loc))
        else:
            with fb.b.into(where):
                fb.b.store(ptr, fb.b.cast(v, t))
    block.stmts[index:index] = pre
    return fb.b.load(ptr)


def transform_ifexp(fb: FrontendBuilder, node: ast.IfExp) -> Any:
    cond = fb.expr(node.test)
    if not is_runtime(cond):
        return fb.expr(node.body) if cond else fb.expr(node.orelse)
    if isinstance(cond, Matrix):
        raise fb.error(node.test, 'the condition of `a if cond else b` is a vector: it has no single truth '
                       'value. Please use "qd.select" instead.', QuadrantsSyntaxError)  # fmt: skip
    loc = fb.loc(node)
    stmt = ir.If(cond=fb.ops.cond(cond, loc))
    index = len(fb.b.block.stmts)
    fb.b.emit(stmt)
    with fb.b.into(stmt.then):
        a = _branch_value(fb, fb.expr(node.body), node.body)
    with fb.b.into(stmt.orelse):
        b = _branch_value(fb, fb.expr(node.orelse), node.orelse)
    if isinstance(a, Matrix) != isinstance(b, Matrix):  # `0 if c else v`: the scalar fills the other's shape
        with fb.b.into(stmt.then if not isinstance(a, Matrix) else stmt.orelse):
            if isinstance(a, Matrix):
                b = Matrix(a.shape, [b] * len(a.elements))
            else:
                a = Matrix(b.shape, [a] * len(b.elements))
    if isinstance(a, Matrix) or isinstance(b, Matrix):  # element by element, as Quadrants does
        if not (isinstance(a, Matrix) and isinstance(b, Matrix) and a.shape == b.shape):
            raise fb.error(node, "Cannot broadcast tensor to tensor: both branches of a conditional expression must "
                           "be vectors (or matrices) of one shape, or both scalars", QuadrantsTypeError)  # fmt: skip
        out = [_merge_into_var(fb, index, promote(ea.type, eb.type), [(stmt.then, ea), (stmt.orelse, eb)])
               for ea, eb in zip(a.elements, b.elements)]  # fmt: skip
        return Matrix(a.shape, out)
    assert isinstance(a.type, PrimitiveType) and isinstance(b.type, PrimitiveType)
    return _merge_into_var(fb, index, promote(a.type, b.type), [(stmt.then, a), (stmt.orelse, b)])


def _branch_value(fb: FrontendBuilder, v: Any, node: ast.AST) -> Any:
    """A conditional expression's branch as IR values, emitted in the branch's block. A tuple or list of
    scalars is a vector, as in Quadrants (Genesis indexes with `f[(j, i) if i > j else (i, j)]`)."""
    loc = fb.loc(node)
    if isinstance(v, (tuple, list)) and v and not any(isinstance(e, (tuple, list)) or as_matrix(fb, e, node)
                                                      for e in v):  # fmt: skip
        return make_matrix(fb, (len(v),), list(v), None, node)
    if isinstance(v, Matrix):
        return Matrix(v.shape, [fb.ops.value(e, loc) for e in v.elements])
    return fb.ops.value(v, loc)


# ---- attributes and subscripts ------------------------------------------------------------------------


def transform_attribute(fb: FrontendBuilder, node: ast.Attribute) -> Any:
    first_capture = len(fb.captures)
    base = fb.expr(node.value)
    if isinstance(base, ir.Value) and isinstance(base.type, ir.NdType):
        return ndarray_attribute(fb, base, node.attr, node)
    if isinstance(base, Matrix):
        return matrix_attribute(fb, base, node.attr, node)
    if isinstance(base, Struct):
        return struct_attribute(fb, base, node.attr, node)
    if isinstance(base, views.View):
        return views.attribute(fb, base, node.attr, node)
    if isinstance(base, mesh.Element):
        return mesh.attribute(fb, base, node.attr, node)
    if isinstance(base, mesh.Relation):
        return mesh.relation_attribute(fb, base, node.attr, node)
    if is_runtime(base):
        raise fb.error(node, f"runtime values have no attribute {node.attr!r}")
    value = _static_attribute(fb, base, node)
    if _record_chain(fb, node, value):
        # `foo.BAR` read through a captured object: the purity check judges the value read, not the object (nor
        # `foo.a` of `foo.a.b`), as Quadrants does; drop the captures of the shorter reads it was built from.
        new = fb.captures[-1]
        fb.captures[first_capture:-1] = [c for c in fb.captures[first_capture:-1]
                                         if not (c.name == new.name and c.where == new.where)]  # fmt: skip
    return value


def _static_attribute(fb: FrontendBuilder, base: Any, node: ast.Attribute) -> Any:
    try:
        return getattr(base, node.attr)
    except AttributeError as e:
        if node.attr in _COMPANIONS and getattr(base, "__qd_field__", None) is not None:  # Quadrants' words
            what, flag = _COMPANIONS[node.attr]
            raise fb.error(node, f"{what} {ast.unparse(node)} has not been placed, check whether `{flag}=True`",
                           QuadrantsCompilationError) from None  # fmt: skip
        raise fb.error(node, f"AttributeError: {e}", QuadrantsCompilationError) from None


_COMPANIONS = {"grad": ("Gradient", "needs_grad"), "dual": ("Dual", "needs_dual")}


def _record_chain(fb: FrontendBuilder, node: ast.Attribute, value: Any) -> bool:
    """`math.pi`, `Mode.FAST`, `cfg.N`: a read through a global or closure name, for the purity check. Returns
    whether one was recorded."""
    cur, chain = attribute_chain(node)
    if not isinstance(cur, ast.Name) or fb.frame.scope.find(cur.id)[1] is not MISSING:
        return False
    fr = fb.frame
    where = "closure" if cur.id in fr.closure else "global" if cur.id in fr.globals else None
    if where is None:
        return False
    fb.captures.append(Capture(cur.id, value, where, fr.source.fn, fb.loc(node), chain=chain))
    return True


def struct_attribute(fb: FrontendBuilder, s: Struct, attr: str, node: ast.AST) -> Any:
    """A member of a dataclass / data_oriented parameter, one of its `qd.func` methods (bound), or a class
    attribute (a compile-time constant)."""
    if attr in s.members:
        s.note_read(attr)
        return read(fb, s.members[attr])
    group = unpacked_group(s, attr)
    if group is not None:
        return group
    member = getattr(s.cls, attr, None)
    if member is not None:
        if isinstance(member, Func):
            return BoundFunc(member, s)
        if getattr(member, "__qd_kernel__", False):
            raise fb.error(node, "a kernel cannot be called from a kernel or qd.func; make it a qd.func")
        if not callable(member) or isinstance(member, type) or (inspect.isfunction(member) and s.obj is not None):
            # a class attribute, a nested class included (`self.MATERIAL.CLOTH`, an IntEnum): compile-time constant;
            # or a plain Python method of a data_oriented object, bound to it
            return s.class_attribute(attr)
    raise fb.error(node, f"{type_name(s.cls)} has no member {attr!r} usable in kernels")


def transform_list_comp(fb: FrontendBuilder, node: ast.ListComp) -> list[Any]:
    """`[x * 3 + y for y in range(3)]`: unrolled at compile time into a Python list (of runtime values, when the
    element is one), as in Quadrants."""
    out: list[Any] = []
    _unroll_comprehension(fb, node, lambda: out.append(fb.expr(node.elt)))
    return out


def transform_dict_comp(fb: FrontendBuilder, node: ast.DictComp) -> dict[Any, Any]:
    """`{k: v for j in range(n) if c}`: a compile-time Python dict, unrolled as a list comprehension is."""
    out: dict[Any, Any] = {}

    def add() -> None:
        key = fb.expr(node.key)
        out[key] = fb.expr(node.value)

    _unroll_comprehension(fb, node, add)
    return out


def transform_dict(fb: FrontendBuilder, node: ast.Dict) -> dict[Any, Any]:
    """`{"a": u + 2, **other}`: a compile-time Python dict whose values may be runtime values (keys are Python
    values, or runtime values by identity), read back with compile-time keys, as in Quadrants."""
    out: dict[Any, Any] = {}
    for k, v in zip(node.keys, node.values):
        if k is None:  # `**other`
            spread = fb.expr(v)
            if not isinstance(spread, dict):
                raise fb.error(v, "`**` in a dict expression in a kernel takes a dict")
            out.update(spread)
        else:
            key = fb.expr(k)
            out[key] = fb.expr(v)
    return out


def _unroll_comprehension(fb: FrontendBuilder, node: ast.ListComp | ast.DictComp, emit: Callable[[], None]) -> None:
    """Run `emit` once per combination of the comprehension's generators, each target bound in a scope of its
    own. Each iterable must be known at compile time (a range of constants, a tuple or list, a vector's
    elements) and each `if` a compile-time condition."""

    def generate(k: int) -> None:
        if k == len(node.generators):
            emit()
            return
        gen = node.generators[k]
        iterable = fb.expr(gen.iter)
        m = as_matrix(fb, iterable, gen.iter)
        if m is not None:
            items = list(m.unpack_values())
        elif is_runtime(iterable) or not hasattr(iterable, "__iter__"):
            raise fb.error(gen.iter, "a comprehension in a kernel iterates over a compile-time iterable "
                                     "(range with constant bounds, a tuple or list, a vector)")  # fmt: skip
        else:
            items = list(iterable)
        for item in items:
            scope = fb.new_scope()
            try:
                assign(fb, gen.target, item, node, static=True)
                keep = True
                for cond in gen.ifs:
                    c = fb.expr(cond)
                    if is_runtime(c):
                        raise fb.error(cond, "a comprehension's `if` must be a compile-time condition")
                    keep = keep and bool(c)
                if keep:
                    generate(k + 1)
            finally:
                fb.pop_scope(scope)

    generate(0)


def transform_slice(fb: FrontendBuilder, node: ast.Slice) -> slice:
    """`a:b:c` in a subscript: a Python slice of compile-time integers (vectors and matrices are sliced at
    compile time, as in Quadrants)."""
    bounds = []
    for part in (node.lower, node.upper, node.step):
        value = None if part is None else fb.expr(part)
        if is_runtime(value):
            raise fb.error(part or node, "Quadrants does not support variables in slice now: slice bounds must be "
                                         "compile-time constants (use qd.static values)")  # fmt: skip
        bounds.append(value)
    return slice(*bounds)


def transform_subscript(fb: FrontendBuilder, node: ast.Subscript) -> Any:
    base = fb.expr(node.value)
    if is_struct_field(base):
        return field_element(fb, base, node)
    if is_ndarray(base):
        if tiles.has_slices(node) and ndarray_handle(fb, base).type.ndim >= 2:  # type: ignore[union-attr]
            return tiles.array_slice(fb, base, node)  # a tile's operand (lang/simt/_tile.py)
        handle = ndarray_handle(fb, base)
        loads = [fb.b.load(p) for p in element_ptrs(fb, handle, node)]
        elem_shape = handle.type.elem_shape  # type: ignore[union-attr]
        return loads[0] if not elem_shape else Matrix(elem_shape, loads, clamp=id(handle) in fb.clamped)
    if isinstance(base, views.View):
        return views.subscript(fb, base, node)
    if isinstance(base, mesh.Relation):
        return mesh.neighbour(fb, base, fb.expr(node.slice), node)
    reject_captured_array(fb, base, node)
    index = fb.expr(node.slice)
    if isinstance(base, UnpackedGroup):
        return struct_attribute(fb, base.struct, unpacked_member(fb, base, index, node), node)
    if isinstance(base, np.ndarray):
        return numpy_constant(fb, base, index, node)
    if isinstance(base, Matrix):
        return matrix_index(fb, base, index, node)
    if is_runtime(base):
        raise fb.error(node, "this value cannot be indexed")
    if is_runtime(index) or (isinstance(index, tuple) and any(is_runtime(i) for i in index)):
        m = as_matrix(fb, base, node)
        if m is not None:
            return matrix_index(fb, m, index, node)
        raise fb.error(node, "a Python sequence cannot be indexed with a runtime value; use qd.static")
    try:
        return base[index]
    except Exception as e:
        raise fb.error(node, f"{type(e).__name__}: {e}", QuadrantsCompilationError) from None
