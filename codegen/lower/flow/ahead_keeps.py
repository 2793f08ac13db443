"""A result kept for the caller's stream at a join in a loop only where the next iteration issues a call that could
take its memory.

The caller's stream keeps a side stream's result it reads (``record_stream(up_weight, current_stream())``) because
a later call on that stream that does not fork may allocate while the read is still running (``keep_alive.py``).
In cann-recipes' LongCat-Flash layer loop the weights are staged one layer ahead: iteration ``i`` waits for the
weight staged for it, stages the next layer's (before its own read), then reads the weight. The staging that could
take the weight's memory is the one of iteration ``i + 1``, issued only where layer ``i + 2`` exists. So the keep is
spelled under ``i + 2 < len(self.layers)``, as the hand version does.

Only where that is exact: the join stands in the body of a ``for`` loop whose index test is known
(``next_iteration.py``: ``i + 1 < n`` of ``range(n)``, ``i + 1 < len(self.layers)`` of ``enumerate`` over a layer
list of fixed length); every call on the result's stream that does not fork (those that make the keep) stands in
that loop's body before a plain statement of the body that reads the result after the join, on every path from
the join and from those calls to it (no ``break``, ``continue``, ``return`` or ``raise`` between, nothing reading,
rebinding or deleting the result before it): within an iteration each such call is issued while the result is
still to be read (its memory cannot be taken then) and before any read of it, and the next one comes in a later
iteration; none is outside the loop. A call whose ``if`` the last iteration knows false
(``last_iteration.py``: ``next_layer is not None`` of a next layer bound under ``i + 1 < n``) runs in iteration
``i + 1`` only where ``i + 2 < n``; any other runs there only where ``i + 1 < n``.
"""

from __future__ import annotations

import ast

from codegen.index.walked import walked_of
from codegen.lower.flow.caller_facts import CallerFacts
from codegen.lower.flow.exprs import bound_names, leaves, loaded_names
from codegen.lower.flow.last_iteration import another, false_in_last
from codegen.lower.plan import Anchor, Value

__all__ = ["kept_ahead"]


def kept_ahead(
    facts: CallerFacts,
    index: int,
    at: Anchor | None,
    values: tuple[Value, ...],
    reading: tuple[list[bool], frozenset[str]],
) -> str | None:
    """The test under which the results ``values`` of call ``index``, joined at ``at``, need a keep (None:
    everywhere; ``reading``: whether each call forks, and the caller's object's layer lists)."""
    forks, sized = reading
    found = _loop_of(facts, at)
    test = another(found[0], facts.receiver, sized) if found else ""
    if not found or not test:
        return None
    loop, first = found
    kept = frozenset(v.name for v in values)
    takers = [o for o, fork in zip(facts.sites, forks) if o.tag == facts.sites[index].tag and not fork]
    if not takers or not _read_after(loop, first, [_position(loop, o.stmt) for o in takers], kept):
        return None
    skipped = false_in_last(loop, facts.receiver, sized)
    return _shifted(test) if all(any(_inside(o.stmt, g) for g in skipped) for o in takers) else test


def _read_after(loop: ast.For, first: int, takers: list[int], kept: frozenset[str]) -> bool:
    """Every taker (by its statement's index in the loop's body) is issued before a plain statement of the body that
    surely reads ``kept`` after the join (at ``first``): none reads, binds or deletes them before it, and nothing
    from the first taker or the join up to it leaves the iteration."""
    if max(takers) >= len(loop.body):
        return False  # a taker outside the loop
    start = max(first, max(takers) + 1)
    read = next((i for i in range(start, len(loop.body)) if kept & loaded_names(loop.body[i])), None)
    if read is None or hasattr(loop.body[read], "body"):
        return False
    between = loop.body[first:read]
    touched = any(kept & (loaded_names(s) | bound_names(s) | _deleted(s)) for s in between)
    return not touched and not any(leaves(s) for s in loop.body[min(first, *takers) : read])


def _deleted(stmt: ast.stmt) -> frozenset[str]:
    return frozenset(t.id for d in walked_of(stmt, ast.Delete) for t in d.targets if isinstance(t, ast.Name))


def _loop_of(facts: CallerFacts, at: Anchor | None) -> tuple[ast.For, int] | None:
    """The ``for`` loop whose body holds the statement the join stands before, and that statement's index there."""
    stmt = at[1] if at and at[0] == "before" else None
    loop = facts.owner(stmt) if isinstance(stmt, ast.stmt) else None
    if not isinstance(loop, ast.For):
        return None
    return next(((loop, i) for i, s in enumerate(loop.body) if s is stmt), None)


def _position(loop: ast.For, stmt: ast.stmt) -> int:
    """The index in the loop's body of the statement holding ``stmt`` (its length: outside the loop)."""
    return next((i for i, s in enumerate(loop.body) if _inside(stmt, s)), len(loop.body))


def _inside(stmt: ast.stmt, outer: ast.stmt) -> bool:
    return any(node is stmt for node in ast.walk(outer))


def _shifted(test: str) -> str:
    """``i + 2 < n`` of ``i + 1 < n``: the test read one iteration ahead."""
    return test.replace(" + 1 < ", " + 2 < ", 1)
