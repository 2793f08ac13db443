"""A ``try`` statement walked on every path: what its body forks may be pending in each handler and in ``finally``.

Any statement of the body may raise, so each handler starts in the merge of every state the body passed through
(and of its end); ``else`` runs from the body's end; ``finally`` runs after whichever of those ends. A ``return``
in the body, ``else`` or a handler runs the ``finally`` after that return's joins: what the ``finally`` forks then
is joined at its end, since nothing after the ``try`` runs.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from codegen.lower.flow.compound_binds import unbound
from codegen.lower.flow.state import EMPTY, State, merge, pending
from codegen.lower.flow.transfer import join_step

if TYPE_CHECKING:
    from codegen.lower.flow.analyze import Walk

__all__ = ["walk_try"]


def walk_try(walk: Walk, stmt: ast.Try | ast.TryStar, state: State) -> State | None:
    """The state after ``stmt`` entered in ``state`` (None: no path leaves it)."""
    walk.raises.append([state])
    body = walk.block(stmt.body, state)
    raised = merge(*walk.raises.pop(), body)
    done = walk.block(stmt.orelse, body)
    handled = [walk.block(h.body, unbound(raised, [h])) if raised is not None else None for h in stmt.handlers]
    out = merge(done, *handled)
    if not stmt.finalbody:
        return out
    if out is None or _returns(stmt):  # a ``return`` runs the ``finally`` after its joins: join what it forks
        end = walk.block(stmt.finalbody, EMPTY) or EMPTY
        walk.place(("end", stmt, "finalbody"), [join_step(p, end) for p in pending(end)])
    return walk.block(stmt.finalbody, out) if out is not None else None


def _returns(stmt: ast.Try | ast.TryStar) -> bool:
    parts = [*stmt.body, *stmt.orelse, *(n for h in stmt.handlers for n in h.body)]
    return any(isinstance(n, ast.Return) for part in parts for n in _own_statements(part))


def _own_statements(node: ast.AST) -> list[ast.AST]:
    """``node`` and the statements nested in its blocks, not in nested functions or classes."""
    found: list[ast.AST] = []
    stack = [node]
    while stack:
        current = stack.pop()
        found.append(current)
        if not isinstance(current, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            stack.extend(
                c for c in ast.iter_child_nodes(current) if isinstance(c, (ast.stmt, ast.excepthandler, ast.match_case))
            )
    return found
