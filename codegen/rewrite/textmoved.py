"""A block's statements on its text in the order the plan issues them, as :mod:`codegen.rewrite.moved` orders
libcst's.

The planner may issue a side call right after an earlier call on its stream (``codegen/lower/flow/hoist.py``,
``CallerPlan.moves``); the libcst path moves the statement's node, and this moves its lines the same way, so a
caller with a hoist stays on the text path (each hoisted caller sent its whole class through libcst before):

- the blank and comment lines above a moved statement stay where they were, above the statement that followed
  it (a moved statement last in its block keeps them);
- a statement that follows one inside a compound statement of the block (an ``if`` moved to the end of another:
  ``hoist_into.py``) is taken out into ``carried`` and put back when that block comes, one level deeper
  (``deeper``: its lines indented as that block's, as libcst prints a node in a deeper block).
"""

from __future__ import annotations

import ast
from collections.abc import Mapping

from codegen.rewrite.textlines import Line, Unsupported, shifted

__all__ = ["Placed", "deeper", "moved_order"]

Placed = tuple[ast.stmt, list[Line]]  # a statement and the blank and comment lines above it (its lead)


def moved_order(
    placed: list[Placed], moves: Mapping[ast.stmt, ast.stmt], carried: dict[ast.stmt, Placed]
) -> list[Placed]:
    """``placed`` with each moved statement right after the statement it follows, in the order the moves were
    decided (the steps of ``moved.moved_order``, on lines)."""
    if not moves:
        return placed
    out = list(placed)
    for moved, after in moves.items():
        at = next((i for i, (stmt, _) in enumerate(out) if stmt is moved), None)
        to = next((i for i, (stmt, _) in enumerate(out) if stmt is after), None)
        if at is not None and to is None:
            carried[moved] = _taken(out, at)
        elif at is None and to is not None and moved in carried:
            out.insert(to + 1, carried.pop(moved))
        elif at is not None and to is not None:
            pair = _taken(out, at)
            out.insert(to + 1 if to < at else to, pair)
    return out


def _taken(out: list[Placed], at: int) -> Placed:
    """The statement at ``at``, taken out of ``out``: its lead goes above what followed it."""
    stmt, lead = out.pop(at)
    if at < len(out):
        following, held = out[at]
        out[at] = (following, [*lead, *held])
        lead = []
    return stmt, lead


def deeper(lines: list[Line], own: str, at: str) -> list[Line]:
    """A statement's ``lines`` (indented by ``own``) in a block indented by ``at``: the lines libcst indents
    from their block take ``at`` for ``own``."""
    if own == at:
        return lines
    if not at.startswith(own):
        raise Unsupported("a statement moved into a block indented otherwise")
    return shifted(lines, own, at[len(own) :])
