"""What the sync analysis of one caller finds (:mod:`codegen.lower.flow.analyze`): the steps placed at each
anchor, the state each planned call starts in, and the statements split before a join.

A step placed twice at one anchor (a join reached from two paths) is one step: *may* where either placement was.
"""

from __future__ import annotations

import ast

import attrs

from codegen.lower.flow.state import State
from codegen.lower.flow.transfer import Join, Step

__all__ = ["Analysis", "Anchor", "merged"]

Anchor = tuple[str, ast.AST, str]  # ("before", stmt, "") or ("end", node, field)


@attrs.define(eq=False)
class Analysis:
    steps: dict[Anchor, list[Step]] = attrs.Factory(dict)
    states: dict[ast.stmt, State] = attrs.Factory(dict)  # the state each planned call's statement starts in
    splits: dict[ast.stmt, ast.expr] = attrs.Factory(dict)  # statements whose first operand runs before the join

    def at(self, anchor: Anchor) -> list[Step]:
        return self.steps.get(anchor, [])


def merged(known: Step, step: Step) -> Step:
    """One step placed twice at one anchor: *may* if either placement was; a join holds the names of both."""
    if isinstance(known, Join) and isinstance(step, Join):
        names, where = known.names | step.names, known.where & step.where
        return attrs.evolve(known, may=known.may or step.may, names=names, where=where)
    return attrs.evolve(known, may=known.may or step.may)
