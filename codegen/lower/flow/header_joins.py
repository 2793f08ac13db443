"""Joins a compound statement's own header needs, as if it were a plain statement placed before the compound one.

``if self.step():``, ``for _ in bump(y):`` and ``with self.lock():`` run work on the caller's stream before their
bodies; that work may write what a pending side call reads (``step`` writing ``self.buf``, ``bump`` its argument).
The walk joined only what a header reads (``join_reads``), so the side call raced the header's write. Each header
(``header_statements.py``) goes through the same transfer as a plain statement, its joins placed before the compound
statement. An ``except`` clause's classes are not read here: they run after the ``try`` body, not before it. A
``while`` test runs again before each later iteration: ``loop_fixpoint.py`` joins what it reads on every edge back;
a write there in a later iteration is joined by the same transfer at the end of the body (``header_steps``).
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from codegen.lower.flow.header_statements import header_statements
from codegen.lower.flow.state import State, joined
from codegen.lower.flow.transfer import Join, Step, transfer

if TYPE_CHECKING:
    from codegen.lower.flow.analysis import Anchor
    from codegen.lower.flow.analyze import Walk

__all__ = ["header_joins"]


def header_joins(walk: Walk, stmt: ast.stmt, state: State, anchor: Anchor | None = None) -> State:
    """Place before ``anchor`` (default: before ``stmt``) the joins ``stmt``'s header statements need."""
    if isinstance(stmt, (ast.Try, ast.TryStar)):
        return state
    for header in header_statements(stmt):
        steps, _ = transfer(header, state, None, walk.relations, walk.methods)
        joins = [s for s in steps if isinstance(s, Join)]
        walk.place(anchor or ("before", stmt, ""), list[Step](joins))
        state = joined(state, (j.site for j in joins if not j.slot))
    return state
