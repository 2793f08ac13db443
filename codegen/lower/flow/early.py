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

import attrs

from codegen.index.blocks import STATEMENT_HOLDERS
from codegen.index.walked import walked_of
from codegen.lower.flow import split
from codegen.lower.flow.exprs import bound_names, only_metadata_calls
from codegen.lower.flow.state import Pending, State, joined, pending, renamed
from codegen.lower.flow.transfer import Join, Relations, SiteView, transfer

__all__ = ["Anchor", "Lookahead", "first_work", "following"]

Anchor = tuple[str, ast.AST, str]  # ("before", stmt, "") or ("end", node, field)


def following(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[ast.stmt, Anchor]:
    """Where the statement after each statement begins: before the next one of its block, or the block's end."""
    found: dict[ast.stmt, Anchor] = {}
    for node in walked_of(fn, STATEMENT_HOLDERS):
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


@attrs.define(eq=False)
class Lookahead:
    """What the statements after a point of one caller do first, for the analysis' walk."""

    sites: dict[ast.stmt, SiteView]
    relations: Relations
    barriers: frozenset[ast.stmt]
    methods: frozenset[str]
    after: dict[ast.stmt, Anchor]
    by_index: dict[int, SiteView] = attrs.field(init=False)

    def __attrs_post_init__(self) -> None:
        self.by_index = {view.index: view for view in self.sites.values()}

    def due(self, stmt: ast.stmt, state: State) -> list[Pending]:
        """The pending calls every path from before ``stmt`` joins before the caller's stream does any work."""
        firsts = first_work(("before", stmt, ""), self.after)
        if not firsts:
            return []
        return [p for p in pending(state) if p.names and all(self.joins(f, state, p, p.names) for f in firsts)]

    def read_again(self, stmt: ast.stmt, view: SiteView, state: State) -> list[Pending]:
        """The pending calls whose join event the call at ``stmt`` records again and whose result is read right
        after it: waited for first, so that the wait for that result does not wait for the new call too."""
        return [p for p in pending(state) if self._records_again(view, p) and self._read_after(stmt, view, state, p)]

    def first_operand(self, stmt: ast.stmt, state: State) -> ast.expr | None:
        if self.relations.dropped.get(stmt):
            return None  # a helper it calls writes in place (``helper_writes.py``): the operand alone cannot say
        return split.first_operand(stmt, state, lambda s, st: transfer(s, st, None, self.relations, self.methods)[0])

    def joins(self, stmt: ast.stmt, state: State, entry: Pending, names: frozenset[str]) -> bool:
        """Whether ``stmt`` joins ``entry`` (holding ``names``) before it runs any work."""
        view = self.sites.get(stmt)
        if view is not None and self._records_again(view, entry):
            return self._read_after(stmt, view, state, attrs.evolve(entry, names=names))
        held = renamed(state, {entry.site: names})
        if view is None and stmt not in self.barriers and self.first_operand(stmt, held) is not None:
            return False  # its first operand runs before the join
        steps, _ = transfer(stmt, held, view, self.relations, self.methods)
        done = joined(held, (s.site for s in steps if isinstance(s, Join)))
        return not any(p.site == entry.site and p.pending for p in done)

    def _records_again(self, view: SiteView, entry: Pending) -> bool:
        """``view`` records the join event ``entry`` recorded, on its stream under its guard."""
        other = self.by_index.get(entry.site)
        return other is not None and other.event == view.event and self.relations.covers(entry.site, view.index)

    def _read_after(self, stmt: ast.stmt, view: SiteView, state: State, entry: Pending) -> bool:
        """Every path from the end of ``stmt`` first joins ``entry`` for a name ``stmt`` leaves bound, and does
        not read the new call's result (a wait there then waits for the new call too, needlessly)."""
        names = entry.names - bound_names(stmt)
        firsts = _past(stmt, self.after) or []
        fresh = Pending(site=view.index, forked=True, names=view.names)
        return bool(names) and bool(firsts) and all(self._old_only(f, state, entry, names, fresh) for f in firsts)

    def _old_only(self, stmt: ast.stmt, state: State, entry: Pending, names: frozenset[str], fresh: Pending) -> bool:
        return self.joins(stmt, state, entry, names) and not self.joins(stmt, (fresh,), fresh, fresh.names)
