"""A block's statements in the order the plan issues them: a side call moved up into an earlier call's block.

The planner may issue a call on a side stream right after an earlier call on that stream, above main-stream work
that neither touches what it reads or writes (``codegen/lower/flow/hoist.py``); the plan says which statement
now follows which (``CallerPlan.moves``). The main-stream statements keep their order and their comments: the
blank and comment lines above a moved call stay where they were, above the statement that followed it.
"""

from __future__ import annotations

import ast

import libcst as cst

__all__ = ["Pair", "moved_order"]

Pair = tuple[cst.BaseStatement, list[ast.stmt]]  # a libcst statement and the ``ast`` statements it holds


def moved_order(pairs: list[Pair], moves: dict[ast.stmt, ast.stmt], nested: dict[ast.stmt, Pair]) -> list[Pair]:
    """``pairs`` with each moved statement (alone on its lines) right after the statement it follows, in the order
    the moves were decided. A statement that follows one inside a compound statement of the block (an ``if`` moved
    to the end of another: ``hoist_into.py``) is taken out into ``nested``, and put back when that statement's
    block comes here."""
    if not moves:
        return pairs
    out = list(pairs)
    for moved, after in moves.items():
        at = next((i for i, (_, parts) in enumerate(out) if parts == [moved]), None)
        to = next((i for i, (_, parts) in enumerate(out) if parts and parts[-1] is after), None)
        if at is not None and to is None:
            nested[moved] = _taken(out, at)
        elif at is None and to is not None and moved in nested:
            out.insert(to + 1, nested.pop(moved))
        elif at is not None and to is not None:
            pair = _taken(out, at)
            out.insert(to + 1 if to < at else to, pair)
    return out


def _taken(out: list[Pair], at: int) -> Pair:
    """The pair at ``at``, taken out of ``out``: the blank and comment lines above it stay, above what followed it."""
    node, parts = out.pop(at)
    if at < len(out):
        following, held = out[at]
        lead = [*getattr(node, "leading_lines", ()), *getattr(following, "leading_lines", ())]
        out[at] = (following.with_changes(leading_lines=lead), held)
        node = node.with_changes(leading_lines=())
    return node, parts
