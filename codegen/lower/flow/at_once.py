"""Whether a planned call is joined right after it: then it overlaps nothing, and the planner leaves it on its
caller's stream, as written (``planner.apart_round``: the rest are analyzed again without it).

"Right after" is the statement that follows the call, or the first statement of either branch of an ``if`` whose
test calls nothing (what follows the ``if`` where a branch is empty): no work of the caller's stream runs between.
"""

from __future__ import annotations

import ast

from codegen.lower.flow.analyze import Analysis
from codegen.lower.flow.sites import Site
from codegen.lower.flow.transfer import Join
from codegen.lower.plan import Anchor

__all__ = ["joined_at_once"]


def joined_at_once(site: Site, result: Analysis, following: dict[ast.stmt, Anchor]) -> bool:
    """Every join of ``site`` is right after its call (past ``if`` tests that call nothing), and nothing is
    relayed from it."""
    placed = [(anchor, step) for anchor, steps in result.steps.items() for step in steps if step.site == site.index]
    after = following.get(site.stmt)
    at_once = _immediate(after, following) if after is not None else set()
    return bool(placed) and all(
        isinstance(step, Join) and anchor in at_once and anchor[1] not in result.splits for anchor, step in placed
    )


def _immediate(anchor: Anchor, following: dict[ast.stmt, Anchor]) -> set[Anchor]:
    """``anchor`` and the places reached from it by no work but an ``if`` test that calls nothing (the first
    statement of either branch, or what follows the ``if`` when a branch is empty)."""
    kind, stmt, _ = anchor
    found = {anchor}
    if kind == "before" and isinstance(stmt, ast.If) and not any(isinstance(n, ast.Call) for n in ast.walk(stmt.test)):
        found |= _immediate(("before", stmt.body[0], ""), following)
        found |= _immediate(("before", stmt.orelse[0], "") if stmt.orelse else following[stmt], following)
    return found
