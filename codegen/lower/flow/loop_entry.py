"""A result that a ``for`` body reads first is joined once, before the loop, not in every iteration.

A call still pending when a ``for`` loop starts, whose result the body's first statement reads (a
kernel metadata made on a side stream, then handed to every layer of ``for layer in self.layers``),
would be joined at that statement. The loop's head merges "pending" (coming from before the loop)
with "joined" (coming back from the body), so that join, a wait, is issued again in every iteration,
and once more after the loop for the path that runs none. Joined before the loop, it waits once, at
the same point of the first iteration: only the loop's header runs in between. So the rule holds
when the header only iterates (``range``, ``zip``, ``enumerate``, ``reversed`` over names, attributes
and subscripts: no device work to overlap) and the first statement is plain work of the caller's
stream: not a compound statement (a read under ``if`` may never come) and not a stream call, which
may wait for the result on its own stream (a relay) rather than on the caller's.
"""

from __future__ import annotations

import ast

from codegen.lower.flow.exprs import data_reads
from codegen.lower.flow.statements import COMPOUND

__all__ = ["first_reads", "only_iterates"]

_ITERATING = frozenset({"range", "zip", "enumerate", "reversed"})


def first_reads(stmt: ast.For | ast.AsyncFor, calls: object) -> set[str]:
    """The names whose pending calls to join before the loop ``stmt`` (``calls``: the planned stream calls,
    keyed by statement): what the first statement of its body reads, when the rule holds, else nothing."""
    if not isinstance(stmt, ast.For) or not only_iterates(stmt.iter):
        return set()
    first = stmt.body[0]
    if isinstance(first, COMPOUND) or first in calls:  # type: ignore[operator]
        return set()
    return data_reads(first) - _bound(stmt.target)


def only_iterates(node: ast.expr) -> bool:
    if isinstance(node, (ast.Name, ast.Constant)):
        return True
    if isinstance(node, ast.Attribute):
        return only_iterates(node.value)
    if isinstance(node, ast.Subscript):
        return only_iterates(node.value) and only_iterates(node.slice)
    if isinstance(node, ast.Call):
        iterating = isinstance(node.func, ast.Name) and node.func.id in _ITERATING and not node.keywords
        return iterating and all(only_iterates(arg) for arg in node.args)
    return False


def _bound(target: ast.expr) -> set[str]:
    return {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}
