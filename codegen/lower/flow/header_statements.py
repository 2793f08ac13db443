"""The work a compound statement does itself, before its body, as statements of their own.

``if self.step():`` runs ``step`` on the caller's stream before either branch, ``while`` its test before each
iteration, ``for _ in self.fill():`` its iterable (and a store its target spells, ``for self.buf[0] in ...``),
``with self.lock(h):`` its items' expressions (and their ``as`` targets), ``match`` its subject and its cases'
guards, ``except`` its classes. A reading of the caller's statements that takes only the statements that are not
compound (``statements.simple_statements``) misses all of these: ``written_state.py`` asks what they write of the
object's state as it asks of any statement. Each header is a plain statement placed at its compound statement
(``Expr``, or ``Assign`` where a target stores into an item or attribute), made once per compound statement, so a
reading kept per statement (``state_writes.StateWrites``) is kept for it too.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from codegen.index.walked import per_node

__all__ = ["header_statements"]

_Pair = tuple[ast.expr | None, ast.expr]  # a target the header binds (None: none), the value it runs


@per_node
def header_statements(stmt: ast.stmt) -> tuple[ast.stmt, ...]:
    """The statements ``stmt`` runs before its body (none for a statement that is not compound)."""
    return tuple(_statement(stmt, target, value) for target, value in _headers(stmt))


def _headers(stmt: ast.stmt) -> Iterator[_Pair]:
    if isinstance(stmt, (ast.If, ast.While)):
        yield None, stmt.test
    elif isinstance(stmt, (ast.For, ast.AsyncFor)):
        yield stmt.target, stmt.iter
    elif isinstance(stmt, (ast.With, ast.AsyncWith)):
        yield from ((item.optional_vars, item.context_expr) for item in stmt.items)
    elif isinstance(stmt, ast.Match):
        yield None, stmt.subject
        yield from ((None, case.guard) for case in stmt.cases if case.guard is not None)
    elif isinstance(stmt, (ast.Try, ast.TryStar)):
        yield from ((None, handler.type) for handler in stmt.handlers if handler.type is not None)


def _statement(stmt: ast.stmt, target: ast.expr | None, value: ast.expr) -> ast.stmt:
    """``value`` as an expression statement, or assigned to ``target`` where that stores into an object."""
    made: ast.stmt = ast.Expr(value=value)
    if target is not None and any(isinstance(n, (ast.Subscript, ast.Attribute)) for n in ast.walk(target)):
        made = ast.Assign(targets=[target], value=value)
    return ast.copy_location(made, stmt)
