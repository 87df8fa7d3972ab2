"""The dispatcher: which construct function translates each AST node class. Two literal tables, read by
`FrontendBuilder.stmt` / `.expr`; a node class missing from them is unsupported in kernels (a located error).

This module imports the construct modules and is imported only by the entry point (`visitor.build_kernel`), so
the construct modules never import each other through it.
"""

from __future__ import annotations

import ast

from quadrants.frontend import calls, expressions, graph, statements
from quadrants.frontend.builder import ExprFn, StmtFn

STATEMENTS: dict[type, StmtFn] = {
    ast.Pass: statements.transform_pass,
    ast.Expr: statements.transform_expr,
    ast.FunctionDef: statements.transform_function_def,
    ast.Return: statements.transform_return,
    ast.Assert: statements.transform_assert,
    ast.Assign: statements.transform_assign,
    ast.AnnAssign: statements.transform_ann_assign,
    ast.AugAssign: statements.transform_aug_assign,
    ast.If: statements.transform_if,
    ast.Break: statements.transform_break,
    ast.Continue: statements.transform_continue,
    ast.For: graph.transform_for,  # (a checkpoints kernel's stages; then loops.transform_for)
    ast.While: graph.transform_while,  # (qd.graph.do_while; then loops.transform_while)
    ast.With: graph.transform_with,
}

EXPRESSIONS: dict[type, ExprFn] = {
    ast.Constant: expressions.transform_constant,
    ast.Name: expressions.transform_name,
    ast.Tuple: expressions.transform_tuple,
    ast.List: expressions.transform_list,
    ast.JoinedStr: expressions.transform_joined_str,
    ast.NamedExpr: expressions.transform_named_expr,
    ast.BinOp: expressions.transform_binop,
    ast.UnaryOp: expressions.transform_unaryop,
    ast.Compare: expressions.transform_compare,
    ast.BoolOp: expressions.transform_boolop,
    ast.IfExp: expressions.transform_ifexp,
    ast.Attribute: expressions.transform_attribute,
    ast.Subscript: expressions.transform_subscript,
    ast.Slice: expressions.transform_slice,
    ast.ListComp: expressions.transform_list_comp,
    ast.DictComp: expressions.transform_dict_comp,
    ast.Dict: expressions.transform_dict,
    ast.Call: calls.transform_call,
}
