"""What a ``for`` body joins first is joined once, before the loop: not in every iteration and again after it.

``xs = [a, b]``, ``r = self.side(xs)``, then ``for c in xs: c.add_(1)``: the body's first statement writes what the
side call reads (``c`` holds what ``xs`` holds: ``binding_aliases.py``), so it joins the call. The loop's head
merges "pending" (from before the loop) with "joined" (back from the body), so that wait was issued in every
iteration, and once more after the loop for the path that runs none. Where the header only iterates
(``loop_entry.only_iterates``: no device work between the loop's start and its first statement), each pending call
that the body's first work joins on every path before any op of its own is joined before the loop instead: the
same point of the first iteration, one wait. Which calls that is comes from the analysis' own transfer on the state
an iteration starts in (``early.Lookahead.joins``), whatever the reason: a read of a result, a write in place of
what a call reads, a read of state a call writes. A first statement that is a planned call (it may wait on its own
stream: a relay) or a graph break keeps its joins, and so does an item a slotted call reads (``item_slots.py``:
waited for one micro-batch at a time). ``loop_entry.py`` joins what the first statement reads the same way.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from codegen.lower.flow.early import first_work
from codegen.lower.flow.exprs import data_reads
from codegen.lower.flow.loop_entry import first_reads, only_iterates
from codegen.lower.flow.loop_parity import iteration_start
from codegen.lower.flow.state import Pending, State, pending

if TYPE_CHECKING:
    from codegen.lower.flow.analyze import Walk

__all__ = ["before_loop"]


def before_loop(walk: Walk, stmt: ast.For | ast.AsyncFor, state: State) -> State:
    """``state`` once what ``stmt``'s header reads, what its body's first statement reads, and each pending call
    its body's first work joins on every path are joined before ``stmt``."""
    slots = getattr(walk.relations, "slots", None)  # a micro-batch's item read waits in the body: item_slots.py
    items = slots.item_names(stmt) if slots else set()
    state = walk.join_reads(stmt, state, data_reads(stmt.iter) | (first_reads(stmt, walk.sites) - items))
    return walk.early_joins(stmt, _due(walk, stmt, state, items), state)


def _due(walk: Walk, stmt: ast.For | ast.AsyncFor, state: State, items: set[str]) -> list[Pending]:
    """The calls pending in ``state`` that every path of ``stmt``'s first iteration joins before any op."""
    if not isinstance(stmt, ast.For) or not _iterates(stmt.iter):
        return []
    firsts = first_work(("before", stmt.body[0], ""), walk.ahead.after)
    if not firsts or any(f in walk.sites or f in walk.barriers for f in firsts):
        return []
    start = iteration_start(walk.relations, stmt, state)
    due = {p.site for p in pending(start) if all(walk.ahead.joins(f, start, p, p.names) for f in firsts)}
    return [p for p in pending(state) if p.site in due and not p.names & items]


def _iterates(node: ast.expr) -> bool:
    """The header only iterates: ``loop_entry.only_iterates``, or a display of such parts (``for c in (a, b)``)."""
    if isinstance(node, (ast.Tuple, ast.List)):
        return all(not isinstance(e, ast.Starred) and only_iterates(e) for e in node.elts)
    return only_iterates(node)
