"""Joins a compound statement's own header needs for what it writes, placed before the compound statement.

``if self.step():``, ``for _ in bump(y):`` and ``with self.lock():`` run work on the caller's stream before their
bodies; that work may write what a pending side call reads (``step`` writing ``self.buf``, ``bump`` its argument).
The walk joins what a header reads itself (``Walk.join_reads``, which knows a micro-batch's item apart from an
earlier iteration's call: ``item_apart.py``), so a header that writes raced the side call. Each header
(``header_statements.py``) is asked what a plain statement is asked of its writes: a pending call whose inputs it
writes in place, by its spelling or through a helper (``helper_writes.py`` reads headers too), or whose object
state it writes (``crossing_writes.state_written``), is joined before the compound statement. An ``except`` clause's
classes are not read here: they run after the ``try`` body, not before it. A ``while`` test runs again before each
later iteration: ``loop_fixpoint.py`` asks the same on every edge back to it.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from codegen.lower.flow.crossing_writes import state_written
from codegen.lower.flow.header_statements import header_statements
from codegen.lower.flow.state import State, joined, pending
from codegen.lower.flow.transfer import Step, join_step, minimal_joins
from codegen.lower.flow.writes import inplace_writes

if TYPE_CHECKING:
    from codegen.lower.flow.analysis import Anchor
    from codegen.lower.flow.analyze import Walk

__all__ = ["header_joins"]


def header_joins(walk: Walk, stmt: ast.stmt, state: State, anchor: Anchor | None = None) -> State:
    """Place before ``anchor`` (default: before ``stmt``) the joins what ``stmt``'s headers write needs."""
    if isinstance(stmt, (ast.Try, ast.TryStar)):
        return state
    relations = walk.relations
    slots = getattr(relations, "slots", None)
    for header in header_statements(stmt):
        written = inplace_writes(header) | relations.dropped.get(header, frozenset())
        found = [
            p
            for p in pending(state)
            if p.inputs & written
            or state_written(p, header, None, relations, slots.apart_of(stmt, p.site) if slots else frozenset())
        ]
        joins = minimal_joins([join_step(p, state) for p in found], state)
        walk.place(anchor or ("before", stmt, ""), list[Step](joins))
        state = joined(state, (j.site for j in joins))
    return state
