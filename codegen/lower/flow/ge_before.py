"""GE: whether the caller's stream does any work before a call, the test for a call that needs no fork edge.

A fork edge orders a side call after the work its caller issued before it. Where none was issued, the graph's
data orders the rest (the call's inputs come from the caller's caller, which GE orders itself). Work means an
op that makes a value someone could read: a test that only compares and combines flags and attributes
(``if attn_metadata.num_decodes > 0:``, ``if x is None:``) makes nothing but the branch it takes, and an ``if``
whose body always leaves the function (``if attn_metadata is None: return x.new_zeros(...)``) runs only its
test on the paths that reach the call.
"""

from __future__ import annotations

import ast

from codegen.lower.flow.exprs import runs_op
from codegen.lower.flow.quiet_tests import compares_only

__all__ = ["nothing_before", "works"]


def nothing_before(stmt: ast.stmt, parents: dict) -> bool:
    """No work of the function runs before ``stmt``: the statements before it in its block run none, and it
    stands in ``if`` and ``with`` blocks only (a loop ran its body before; a handler, its ``try``), whose tests,
    items and earlier statements run none either."""
    parent = parents.get(stmt)
    if any(works(s) for field in ("body", "orelse") for s in _before(parent, field, stmt)):
        return False
    if parent is None or isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return True
    if not isinstance(parent, (ast.If, ast.With, ast.AsyncWith)):
        return False
    heads = [getattr(parent, "test", None), *(i.context_expr for i in getattr(parent, "items", []))]
    return not any(h is not None and works(h) for h in heads) and nothing_before(parent, parents)


def works(node: ast.AST) -> bool:
    """``node`` may run an op whose result another op could read (a statement, or an ``if`` test)."""
    if isinstance(node, ast.If) and not node.orelse and _leaves(node.body):
        return works(node.test)  # the paths that go on never ran its body
    if isinstance(node, ast.expr) and compares_only(node):
        return False  # its ops, if any (a tensor compared), make only the value the branch reads
    return runs_op(node)


def _leaves(body: list[ast.stmt]) -> bool:
    return bool(body) and isinstance(body[-1], (ast.Return, ast.Raise))


def _before(parent: ast.AST | None, field: str, stmt: ast.stmt) -> list[ast.stmt]:
    block = getattr(parent, field, None) or []
    return block[: block.index(stmt)] if stmt in block else []
