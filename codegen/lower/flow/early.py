"""Joins placed where no work separates them from their use: one wait, not one per path, and never an over-wait.

The analysis joins a call just before the first statement that reads its result. Two shapes make that costly:

- an ``if`` where one branch re-forks the call's stream and the other reads the result: joined inside the
  branch before the re-fork, and again after the ``if`` on the other path, where the merged state no longer
  says which fork a name holds, so the second wait also waits for the call just re-forked (a layer that
  waits for the *next* layer's weights);
- a call whose stream is forked again (its event recorded again) right before its earlier result is read:
  the wait for that result then waits for the new call too.

Where, on every path from a point, the caller's stream does no work before it joins a call (only ``if``
tests that run no op in between), joining at that point costs no overlap; this module finds those calls.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

from codegen.lower.flow.exprs import bound_names, only_metadata_calls
from codegen.lower.flow.state import Pending, State, pending

__all__ = ["Anchor", "Joins", "due", "first_work", "following"]

Anchor = tuple[str, ast.AST, str]  # ("before", stmt, "") or ("end", node, field)
Joins = Callable[[ast.stmt, State, Pending, frozenset[str]], bool]  # does this statement join that call


def following(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[ast.stmt, Anchor]:
    """Where the statement after each statement begins: before the next one of its block, or the block's end."""
    found: dict[ast.stmt, Anchor] = {}
    for node in ast.walk(fn):
        for field in ("body", "orelse", "finalbody"):
            block = getattr(node, field, None)
            if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
                for stmt, after in zip(block, [*block[1:], None]):
                    found[stmt] = ("before", after, "") if after is not None else ("end", node, field)
    return found


def first_work(anchor: Anchor, after: dict[ast.stmt, Anchor]) -> list[ast.stmt] | None:
    """The simple statements that may run first from ``anchor``, past ``if`` tests that run no op (into both
    branches, and out of a branch's end); None where a path meets anything else first (a loop, a ``with``, the
    end of a loop body or of the function)."""
    kind, node, _ = anchor
    if kind == "end":
        return first_work(after[node], after) if isinstance(node, ast.If) and node in after else None
    if isinstance(node, ast.If):
        if not only_metadata_calls(node.test):
            return None
        taken = first_work(("before", node.body[0], ""), after)
        other = first_work(("before", node.orelse[0], ""), after) if node.orelse else _past(node, after)
        return None if taken is None or other is None else [*taken, *other]
    return None if hasattr(node, "body") else [node]  # type: ignore[list-item]


def _past(node: ast.stmt, after: dict[ast.stmt, Anchor]) -> list[ast.stmt] | None:
    return first_work(after[node], after) if node in after else None


def due(stmt: ast.stmt, state: State, after: dict[ast.stmt, Anchor], joins: Joins) -> list[Pending]:
    """The pending calls that every path from before ``stmt`` joins before the caller's stream does any work."""
    firsts = first_work(("before", stmt, ""), after)
    if not firsts:
        return []
    return [p for p in pending(state) if p.names and all(joins(f, state, p, p.names) for f in firsts)]


def read_right_after(
    stmt: ast.stmt, state: State, entry: Pending, fresh: Pending, after: dict[ast.stmt, Anchor], joins: Joins
) -> bool:
    """Every path from the end of ``stmt`` (a call that forks ``fresh``, recording ``entry``'s event again) first
    joins ``entry`` for a name ``stmt`` leaves bound, and does not read ``fresh``'s result (a wait there then
    waits for ``fresh`` too, needlessly)."""
    names = entry.names - bound_names(stmt)
    firsts = _past(stmt, after)
    return (
        bool(names)
        and bool(firsts)
        and all(joins(f, state, entry, names) and not joins(f, (fresh,), fresh, fresh.names) for f in firsts)  # type: ignore[union-attr]
    )
