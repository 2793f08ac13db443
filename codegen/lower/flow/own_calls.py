"""The calls a statement makes itself, and the one call a plain statement binds or drops.

A statement's own calls leave out those of the statements nested in its blocks: each call belongs to the
innermost statement holding it, where a wrap or a join is placed. A call that a plain statement only binds to
names (or drops) is one its caller can join later; any other use of the result needs it at once.
"""

from __future__ import annotations

import ast

from codegen.index.children import children
from codegen.lower.flow.exprs import scoped_calls

__all__ = ["aware_call", "own_calls"]

_BLOCKS = ("body", "orelse", "finalbody", "handlers", "cases")
# the nodes with a block of statements (``if``, loops, ``with``, ``try``, ``match``, definitions, a handler, a case)
_COMPOUND = tuple(
    kind for kind in vars(ast).values() if isinstance(kind, type) and set(_BLOCKS) & set(getattr(kind, "_fields", ()))
)


def aware_call(stmt: ast.stmt) -> ast.Call | None:
    """The call a plain statement binds to names or drops, if that is all the statement does."""
    if isinstance(stmt, ast.Expr):
        value = stmt.value
    elif isinstance(stmt, ast.Assign) and all(_names_only(t) for t in stmt.targets):
        value = stmt.value
    elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.value is not None:
        value = stmt.value
    else:
        return None
    return value if isinstance(value, ast.Call) else None


def _names_only(target: ast.expr) -> bool:
    if isinstance(target, (ast.Tuple, ast.List)):
        return all(_names_only(e.value if isinstance(e, ast.Starred) else e) for e in target.elts)
    return isinstance(target, ast.Name)


def own_calls(stmt: ast.stmt) -> list[ast.Call]:
    """The calls ``stmt`` itself makes (not those of the statements nested in its blocks)."""
    return [call for part in _own_parts(stmt) for call in scoped_calls(part)]


def _own_parts(stmt: ast.stmt) -> list[ast.AST]:
    """The expressions of ``stmt`` itself, not of the statements nested in its blocks (a simple statement has
    none: all its children are its own)."""
    if not isinstance(stmt, _COMPOUND):
        return children(stmt)
    nested = {id(child) for field in _BLOCKS for child in getattr(stmt, field, ()) or ()}
    return [child for child in children(stmt) if id(child) not in nested]
